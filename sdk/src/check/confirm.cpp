#include "confirm.hpp"

#include "binary/zip_archive.hpp"
#include "confirm_container.hpp"
#include "env/module_confirm.hpp"

namespace archfit::check {

bool verdict_says_it_loads(compat::Verdict verdict) {
  return verdict == compat::Verdict::native || verdict == compat::Verdict::ptx_jit;
}

namespace {

std::string answer_text(const env::ModuleLoad& load) {
  if (load.loaded) return "it loaded";
  return "the driver answered " + load.error_name + " (" + std::to_string(load.result) + ")";
}

// One device: the requests, the driver's answers, and the comparison.
// Device `d` of the report: each binary's judgement there is already in its
// per_device and chosen_per_device.
void confirm_on(size_t d, const std::vector<ConfirmItem>& items,
                const std::filesystem::path& libcuda, CheckReport& report) {
  const DeviceInfo& device = report.devices[d];
  std::vector<env::ModuleRequest> requests;
  std::vector<std::pair<const ConfirmItem*, compat::Verdict>> asked;
  for (const auto& item : items) {
    // Members of a wheel are not on disk to read back; the driver is asked
    // about installed files only.
    if (item.scan->path.find(binary::kMemberSeparator) != std::string::npos) {
      ++report.confirm->not_asked;
      continue;
    }
    auto container = container_to_confirm(*item.scan, item.binary->chosen_per_device[d]);
    if (!container) {
      ++report.confirm->not_asked;
      continue;
    }
    requests.push_back({item.scan->path, std::move(*container)});
    asked.emplace_back(&item, item.binary->per_device[d]);
  }
  if (requests.empty()) return;

  env::ModuleConfirmOptions options;
  options.library = libcuda;
  options.device = device.ordinal;
  const env::ModuleConfirmation confirmation = env::confirm_modules(requests, options);
  report.findings.insert(report.findings.end(), confirmation.findings.begin(),
                         confirmation.findings.end());
  for (size_t i = 0; i < confirmation.loads.size() && i < asked.size(); ++i) {
    const env::ModuleLoad& load = confirmation.loads[i];
    if (!load.asked) {
      ++report.confirm->not_asked;
      continue;
    }
    const auto& [item, verdict] = asked[i];
    DriverAnswer answer;
    answer.device = device.name;
    answer.loaded = load.loaded;
    if (!load.loaded) answer.error = load.error_name + " (" + std::to_string(load.result) + ")";
    answer.agrees = load.loaded == verdict_says_it_loads(verdict);
    ++report.confirm->asked;
    if (!answer.agrees) {
      ++report.confirm->disagreed;
      report.findings.push_back("The driver disagrees about " + item->scan->path + " on " +
                                device.name + ": archfit judged " +
                                std::string(compat::to_string(verdict)) + ", but " +
                                answer_text(load) + ".");
    }
    item->binary->driver.push_back(std::move(answer));
  }
}

}  // namespace

void confirm_with_driver(const std::vector<ConfirmItem>& items,
                         const std::filesystem::path& libcuda, CheckReport& report) {
  report.confirm = ConfirmSummary{};
  bool any_real = false;
  for (size_t d = 0; d < report.devices.size(); ++d) {
    if (report.devices[d].simulated || report.devices[d].ordinal < 0) continue;
    any_real = true;
    confirm_on(d, items, libcuda, report);
  }
  if (!any_real) {
    report.findings.push_back(
        "--confirm asks the real driver about real GPUs, and there is none here to ask" +
        std::string(report.devices.empty() ? "" : " (the GPUs named with --gpu are simulated)") +
        "; the verdicts stand unconfirmed.");
  }
}

}  // namespace archfit::check
