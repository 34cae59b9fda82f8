#include "report_json.hpp"

namespace archfit::check {

using nlohmann::json;

namespace {

json fix_json(const Fix& fix) { return {{"summary", fix.summary}, {"commands", fix.commands}}; }

json binary_json(const BinaryResult& binary) {
  const auto& j = binary.judgement;
  return {{"path", binary.path.string()},
          {"verdict", compat::to_string(j.verdict)},
          {"chosen", j.chosen_arch.empty() ? json(nullptr) : json(j.chosen_arch)},
          {"sass", j.sass},
          {"ptx", j.ptx},
          {"evidence", j.evidence},
          {"assumes_driver", j.assumes_driver},
          {"scan_incomplete", j.scan_incomplete}};
}

}  // namespace

json check_document(const CheckReport& report) {
  json devices = json::array();
  if (report.device) {
    devices.push_back({{"name", report.device->name},
                       {"sm", report.device->cc.sm()},
                       {"compute_capability", report.device->cc.to_string()},
                       {"simulated", report.device->simulated},
                       {"memory", report.device->memory}});
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
                          {"evidence", c.evidence},
                          {"explanation", c.explanation},
                          {"fix", fix_json(c.fix)},
                          {"binaries", std::move(binaries)}});
  }
  return {
      {"schema", kCheckSchema},
      {"verdict", to_string(report.verdict)},
      {"devices", std::move(devices)},
      {"driver",
       {{"version", report.driver.version.empty() ? json(nullptr) : json(report.driver.version)},
        {"cuda_version",
         report.driver.cuda_version.empty() ? json(nullptr) : json(report.driver.cuda_version)},
        {"max_ptx_isa",
         report.driver.max_ptx_isa ? json(report.driver.max_ptx_isa->to_string()) : json(nullptr)},
        {"simulated", report.driver.simulated}}},
      {"torch", report.torch ? json(*report.torch) : json(nullptr)},
      {"components", std::move(components)},
      {"findings", report.findings}};
}

}  // namespace archfit::check
