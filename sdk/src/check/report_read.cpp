#include "report_read.hpp"

#include "env/requirement.hpp"
#include "sys/utf8_path.hpp"

namespace archfit::check {

namespace {

using nlohmann::json;

// The field `key` of `object`, which must be of `type`; `where` names the
// object for the message ("components[3]").
const json& field(const json& object, const char* key, json::value_t type,
                  const std::string& where) {
  const auto found = object.find(key);
  if (found == object.end()) throw ReportReadError(where + " has no \"" + key + "\"");
  if (found->type() != type && !(type == json::value_t::number_unsigned && found->is_number()))
    throw ReportReadError(where + "." + key + " is " + found->type_name() + ", not " +
                          json(type).type_name());
  return *found;
}

// A string field that may also be null or absent (fields added later).
std::string optional_string(const json& object, const char* key, const std::string& where) {
  const auto found = object.find(key);
  if (found == object.end() || found->is_null()) return {};
  if (!found->is_string())
    throw ReportReadError(where + "." + key + " is " + found->type_name() + ", not string");
  return found->get<std::string>();
}

std::vector<std::string> strings(const json& object, const char* key, const std::string& where) {
  std::vector<std::string> out;
  const auto found = object.find(key);
  if (found == object.end() || found->is_null()) return out;
  if (!found->is_array())
    throw ReportReadError(where + "." + key + " is " + found->type_name() + ", not array");
  for (size_t i = 0; i < found->size(); ++i) {
    if (!(*found)[i].is_string())
      throw ReportReadError(where + "." + key + "[" + std::to_string(i) + "] is not a string");
    out.push_back((*found)[i].get<std::string>());
  }
  return out;
}

const json& array_field(const json& object, const char* key, const std::string& where) {
  return field(object, key, json::value_t::array, where);
}

// A verdict named in a report, known to compat or not.
ReportedVerdict reported_verdict(std::string name) {
  return {compat::verdict_from_string(name), std::move(name)};
}

// What compat's verdict table says of a verdict named in a report; a name
// this archfit does not know blocks nothing.
bool verdict_blocks(const ReportedVerdict& verdict) {
  return verdict.verdict && compat::is_failure(*verdict.verdict);
}

// "sm_90a" (sass) or "compute_90" (ptx), as report_json writes an image's
// target. A name that is no target (what a damaged image's arch field makes,
// "sm_5") is left out: nothing can run it, and the report is still read.
std::vector<compat::Target> targets(const json& object, const char* key, bool ptx,
                                    const std::string& where) {
  std::vector<compat::Target> out;
  for (const auto& name : strings(object, key, where)) {
    const auto target = compat::parse_target(name);
    if (target && target->ptx == ptx) out.push_back(*target);
  }
  return out;
}

// An item's "fix": its summary and commands, when it has one.
void read_fix(const json& item, const std::string& where, std::string& summary,
              std::vector<std::string>& commands) {
  const auto fix = item.find("fix");
  if (fix == item.end() || !fix->is_object()) return;
  summary = optional_string(*fix, "summary", where + ".fix");
  commands = strings(*fix, "commands", where + ".fix");
}

bool optional_bool(const json& object, const char* key, bool otherwise) {
  const auto found = object.find(key);
  return found != object.end() && found->is_boolean() ? found->get<bool>() : otherwise;
}

}  // namespace

const ReportedDevice* ReportedEnvironment::device_named(const std::string& name) const {
  for (const auto& device : devices) {
    if (device.name == name) return &device;
  }
  return devices.empty() ? nullptr : &devices.front();
}

const ReportedComponent* ReportedEnvironment::component(std::string_view name) const {
  for (const auto& candidate : components) {
    if (env::normalize_distribution_name(candidate.name) == env::normalize_distribution_name(name))
      return &candidate;
  }
  return nullptr;
}

ReportedEnvironment read_report(const json& document, std::string source) {
  if (!document.is_object()) throw ReportReadError("the report is not a JSON object");
  const std::string schema = optional_string(document, "schema", "the report");
  if (schema != "archfit.check/1")
    throw ReportReadError("the report's schema is \"" + schema +
                          "\", not \"archfit.check/1\" (what `archfit check --json` prints)");
  ReportedEnvironment environment;
  environment.source = std::move(source);

  const json& devices = array_field(document, "devices", "the report");
  for (size_t i = 0; i < devices.size(); ++i) {
    const std::string where = "devices[" + std::to_string(i) + "]";
    if (!devices[i].is_object()) throw ReportReadError(where + " is not an object");
    ReportedDevice device;
    device.name = optional_string(devices[i], "name", where);
    device.cc = compat::ComputeCapability::from_sm(
        field(devices[i], "sm", json::value_t::number_unsigned, where).get<unsigned>());
    if (const auto simulated = devices[i].find("simulated");
        simulated != devices[i].end() && simulated->is_boolean())
      device.simulated = simulated->get<bool>();
    environment.devices.push_back(std::move(device));
  }

  if (const auto driver = document.find("driver");
      driver != document.end() && driver->is_object()) {
    environment.driver_version = optional_string(*driver, "version", "driver");
    environment.driver_cuda_version = optional_string(*driver, "cuda_version", "driver");
    if (const auto simulated = driver->find("simulated");
        simulated != driver->end() && simulated->is_boolean())
      environment.driver_simulated = simulated->get<bool>();
  }
  environment.torch = optional_string(document, "torch", "the report");
  if (const auto target = document.find("commands_for");
      target != document.end() && target->is_object()) {
    environment.command_target.python =
        sys::path_of_utf8(optional_string(*target, "python", "commands_for"));
    environment.command_target.windows = optional_string(*target, "shell", "commands_for") == "cmd";
  }
  environment.findings = strings(document, "findings", "the report");

  const json& components = array_field(document, "components", "the report");
  for (size_t i = 0; i < components.size(); ++i) {
    const std::string where = "components[" + std::to_string(i) + "]";
    const json& item = components[i];
    if (!item.is_object()) throw ReportReadError(where + " is not an object");
    ReportedComponent component;
    component.name = field(item, "name", json::value_t::string, where).get<std::string>();
    component.version = optional_string(item, "version", where);
    component.kind = optional_string(item, "kind", where);
    component.verdict =
        reported_verdict(field(item, "verdict", json::value_t::string, where).get<std::string>());
    component.blocks = optional_bool(item, "blocks", verdict_blocks(component.verdict));
    component.device = optional_string(item, "device", where);
    component.evidence = optional_string(item, "evidence", where);
    read_fix(item, where, component.fix_summary, component.fix_commands);
    if (const auto binaries = item.find("binaries");
        binaries != item.end() && binaries->is_array()) {
      for (size_t b = 0; b < binaries->size(); ++b) {
        const std::string at = where + ".binaries[" + std::to_string(b) + "]";
        const json& binary = (*binaries)[b];
        if (!binary.is_object()) throw ReportReadError(at + " is not an object");
        const std::string reach = optional_string(binary, "reach", at);
        component.binaries.push_back({optional_string(binary, "path", at),
                                      reported_verdict(optional_string(binary, "verdict", at)),
                                      reach.empty() || reach == "loaded",
                                      targets(binary, "sass", false, at),
                                      targets(binary, "ptx", true, at)});
      }
    }
    environment.components.push_back(std::move(component));
  }

  // Stacks came with the second edition of archfit.check/1: absent before.
  if (const auto stacks = document.find("stacks"); stacks != document.end() && stacks->is_array()) {
    for (size_t i = 0; i < stacks->size(); ++i) {
      const std::string where = "stacks[" + std::to_string(i) + "]";
      const json& item = (*stacks)[i];
      if (!item.is_object()) throw ReportReadError(where + " is not an object");
      ReportedStack stack;
      stack.name = optional_string(item, "name", where);
      stack.anchor = optional_string(item, "anchor", where);
      stack.version = optional_string(item, "version", where);
      stack.verdict = reported_verdict(optional_string(item, "verdict", where));
      stack.blocks = optional_bool(item, "blocks", verdict_blocks(stack.verdict));
      stack.title = optional_string(item, "title", where);
      stack.evidence = optional_string(item, "evidence", where);
      read_fix(item, where, stack.fix_summary, stack.fix_commands);
      if (const auto cuda = item.find("cuda"); cuda != item.end() && cuda->is_object()) {
        stack.cuda_version = optional_string(*cuda, "version", where + ".cuda");
        stack.cuda_min_driver = optional_string(*cuda, "min_driver", where + ".cuda");
      }
      environment.stacks.push_back(std::move(stack));
    }
  }
  return environment;
}

}  // namespace archfit::check
