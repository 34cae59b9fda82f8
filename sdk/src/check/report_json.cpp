#include "report_json.hpp"

#include "binary/path_bytes.hpp"
#include "compat/verdict.hpp"
#include "util/text.hpp"

namespace archfit::check {

using nlohmann::json;

namespace {

json fix_json(const Fix& fix) {
  json alternatives = json::array();
  for (const auto& alternative : fix.alternatives) alternatives.push_back(fix_json(alternative));
  return {{"summary", fix.summary},
          {"commands", fix.commands},
          {"shell", fix.shell},
          {"powershell_commands", fix.powershell_commands},
          {"requirements", fix.requirements},
          {"index_url", fix.index_url.empty() ? json(nullptr) : json(fix.index_url)},
          {"driver", fix.driver.empty() ? json(nullptr) : json(fix.driver)},
          {"alternatives", std::move(alternatives)}};
}

// [{"device": "GeForce RTX 4090", "verdict": "native"}, …], one per device.
json per_device_json(const std::vector<compat::Verdict>& verdicts,
                     const std::vector<DeviceInfo>& devices) {
  json out = json::array();
  for (size_t d = 0; d < verdicts.size() && d < devices.size(); ++d)
    out.push_back({{"device", devices[d].name}, {"verdict", compat::to_string(verdicts[d])}});
  return out;
}

// --confirm: what the real driver said when asked to load the binary.
json driver_answers_json(const std::vector<DriverAnswer>& answers) {
  json out = json::array();
  for (const auto& answer : answers) {
    out.push_back({{"device", answer.device},
                   {"loaded", answer.loaded},
                   {"error", answer.error.empty() ? json(nullptr) : json(answer.error)},
                   {"agrees", answer.agrees}});
  }
  return out;
}

json binary_json(const BinaryResult& binary) {
  const auto& j = binary.judgement;
  const bool unreached = binary.reach == Reach::unreached;
  json out = {{"verdict", compat::to_string(j.verdict)},
              {"blocks", binary.reach == Reach::loaded && compat::is_failure(j.verdict)},
              {"reach", to_string(binary.reach)},
              {"reach_reason", binary.reach_reason},
              {"machine", binary.machine.empty() ? json(nullptr) : json(binary.machine)},
              {"chosen", j.chosen_arch.empty() ? json(nullptr) : json(j.chosen_arch)},
              {"sass", j.sass},
              {"ptx", j.ptx},
              {"evidence", j.evidence},
              {"assumes_driver", j.assumes_driver},
              {"scan_incomplete", j.scan_incomplete},
              {"driver", driver_answers_json(binary.driver)},
              // Kept from the first schema: why the binary is never loaded.
              {"not_loaded", unreached ? json(binary.reach_reason) : json(nullptr)}};
  ::archfit::binary::put_path(out, binary.path.string());  // and path_bytes where it is not UTF-8
  return out;
}

json wheels_json(const std::vector<env::Wheel>& wheels) {
  json out = json::array();
  for (const auto& wheel : wheels) {
    out.push_back({{"path", wheel.path.string()},
                   {"name", wheel.name},
                   {"version", wheel.version},
                   {"tags", wheel.tags},
                   {"torch", wheel.torch ? json(wheel.torch->version) : json(nullptr)}});
  }
  return out;
}

// What probe plugins reported: their facts as given, and a cuda_archs list
// judged on each device.
json probes_json(const std::vector<ProbeResult>& probes, const std::vector<DeviceInfo>& devices) {
  json out = json::array();
  for (const auto& probe : probes) {
    out.push_back({{"plugin", probe.plugin},
                   {"version", probe.version},
                   {"summary", probe.summary},
                   {"facts", probe.facts},
                   {"per_device", per_device_json(probe.per_device, devices)}});
  }
  return out;
}

// A blocking stack in one line, as a toast or a node's first row says it:
// "RTX 5090 cannot run PyTorch 2.5.1+cu124"; "" for a stack that does not block.
std::string stack_title(const StackResult& stack) {
  // Missing a library, it fails on any GPU: the title names none.
  if (stack.verdict == compat::Verdict::missing_library)
    return stack.name_and_version() + " does not load";
  if (!compat::is_failure(stack.verdict) || stack.device.empty()) return {};
  return util::short_gpu_name(stack.device) + " cannot run " + stack.name +
         (stack.version.empty() ? "" : " " + stack.version);
}

json stack_json(const StackResult& stack, const CheckReport& report) {
  json notes = json::array();
  for (const auto& note : stack.notes) {
    notes.push_back({{"feature", note.feature},
                     {"component", note.component},
                     {"library", note.library.string()},
                     {"verdict", compat::to_string(note.verdict)},
                     {"device", note.device},
                     {"evidence", note.evidence}});
  }
  json missing = json::array();
  for (const auto& library : stack.missing_libraries) {
    missing.push_back({{"library", library.library},
                       {"needed_by", library.needed_by},
                       {"distribution", library.distribution},
                       {"requirement", library.requirement}});
  }
  json cuda = nullptr;
  if (stack.cuda) {
    cuda = {{"version", stack.cuda->version},
            {"source", stack.cuda->source},
            {"min_driver",
             stack.cuda->min_driver ? json(stack.cuda->min_driver->to_string()) : json(nullptr)}};
  }
  return {{"name", stack.name},
          {"anchor", stack.anchor.empty() ? json(nullptr) : json(stack.anchor)},
          {"version", stack.version},
          {"kind", env::to_string(stack.kind)},
          {"members", stack.members},
          {"verdict", compat::to_string(stack.verdict)},
          {"blocks", compat::is_failure(stack.verdict)},
          {"warns", compat::is_warning(stack.verdict)},
          {"device", stack.device.empty() ? json(nullptr) : json(stack.device)},
          {"title", stack_title(stack)},
          {"per_device", per_device_json(stack.per_device, report.devices)},
          {"evidence", stack.evidence},
          {"explanation", stack.explanation},
          {"cuda", std::move(cuda)},
          {"fix", fix_json(stack.fix)},
          {"notes", std::move(notes)},
          {"missing_libraries", std::move(missing)}};
}

}  // namespace

json check_document(const CheckReport& report) {
  json devices = json::array();
  for (const auto& device : report.devices) {
    devices.push_back({{"name", device.name},
                       {"sm", device.cc.sm()},
                       {"compute_capability", device.cc.to_string()},
                       {"simulated", device.simulated},
                       {"memory", device.memory},
                       {"machine", device.machine.empty() ? json(nullptr) : json(device.machine)},
                       {"first_driver", device.first_driver ? json(device.first_driver->to_string())
                                                            : json(nullptr)},
                       {"driver_knows_it", device.driver_knows_it}});
  }
  json components = json::array();
  for (const auto& c : report.components) {
    json binaries = json::array();
    for (const auto& b : c.binaries) binaries.push_back(binary_json(b));
    components.push_back({{"name", c.component.name},
                          {"version", c.component.version},
                          {"kind", env::to_string(c.component.kind)},
                          {"root", c.component.root.string()},
                          {"verdict", compat::to_string(c.verdict)},
                          {"blocks", c.blocks()},
                          {"warns", c.reach == Reach::loaded && compat::is_warning(c.verdict)},
                          {"reach", to_string(c.reach)},
                          {"stack", c.stack.empty() ? json(nullptr) : json(c.stack)},
                          {"device", c.device.empty() ? json(nullptr) : json(c.device)},
                          {"per_device", per_device_json(c.per_device, report.devices)},
                          {"evidence", c.evidence},
                          {"explanation", c.explanation},
                          {"fix", fix_json(c.fix)},
                          {"binaries", std::move(binaries)}});
  }
  json libraries = json::array();
  for (const auto& library : report.libraries) {
    libraries.push_back({{"name", library.name},
                         {"version", library.version},
                         {"version_source", library.version_source},
                         {"path", library.path.string()},
                         {"origin", library.origin}});
  }
  json stacks = json::array();
  const Fix* first_fix = nullptr;
  for (const auto& stack : report.stacks) {
    stacks.push_back(stack_json(stack, report));
    if (!first_fix && compat::is_failure(stack.verdict) && !stack.fix.empty())
      first_fix = &stack.fix;
  }
  return {
      {"schema", kCheckSchema},
      {"verdict", to_string(report.verdict)},
      // The interpreter and shell every fix's commands are written for.
      {"commands_for",
       {{"python", report.command_target.python.empty()
                       ? json(nullptr)
                       : json(report.command_target.python.string())},
        {"shell", report.command_target.windows ? "cmd" : "sh"}}},
      {"environment", report.environment
                          ? json{{"source", report.environment->source},
                                 {"path", report.environment->where.string()},
                                 {"python", report.environment->python.empty()
                                                ? json(nullptr)
                                                : json(report.environment->python.string())}}
                          : json(nullptr)},
      {"summary", report.summary},
      {"fix", first_fix ? fix_json(*first_fix) : json(nullptr)},
      {"stacks", std::move(stacks)},
      {"devices", std::move(devices)},
      {"no_gpu", report.no_gpu.empty() ? json(nullptr) : json(report.no_gpu)},
      {"scan",
       {{"files", report.scan.files},
        {"reused", report.scan.reused},
        {"directories", report.scan.directories},
        {"directories_reused", report.scan.directories_reused},
        {"index_problem", report.scan.index.empty() ? json(nullptr) : json(report.scan.index)}}},
      {"driver",
       {{"version", report.driver.version.empty() ? json(nullptr) : json(report.driver.version)},
        {"cuda_version",
         report.driver.cuda_version.empty() ? json(nullptr) : json(report.driver.cuda_version)},
        {"max_ptx_isa",
         report.driver.max_ptx_isa ? json(report.driver.max_ptx_isa->to_string()) : json(nullptr)},
        {"simulated", report.driver.simulated},
        {"os", report.driver.family == kb::DriverFamily::windows_driver ? "windows" : "linux"},
        {"at_least", report.driver.at_least}}},
      {"torch", report.torch ? json(*report.torch) : json(nullptr)},
      {"libraries", std::move(libraries)},
      {"wheels", wheels_json(report.wheels)},
      {"components", std::move(components)},
      {"probes", probes_json(report.probes, report.devices)},
      {"confirm", report.confirm ? json{{"asked", report.confirm->asked},
                                        {"disagreed", report.confirm->disagreed},
                                        {"not_asked", report.confirm->not_asked}}
                                 : json(nullptr)},
      {"findings", report.findings},
      {"unread", report.unread},
      {"verdicts", verdict_table_json()}};
}

json verdict_table_json() {
  json table = json::object();
  for (const auto& facts : compat::verdict_table()) {
    table[std::string(facts.name)] = {
        {"blocks", facts.blocks}, {"warns", facts.warns}, {"meaning", std::string(facts.meaning)}};
  }
  return table;
}

}  // namespace archfit::check
