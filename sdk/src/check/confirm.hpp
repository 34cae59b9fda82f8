#pragma once
// `archfit check --confirm`: hands one container of each judged binary to the
// real driver on each real GPU (cuModuleLoadData) and records whether the
// driver's answer agrees with archfit's verdict. A disagreement is a finding
// naming the file, the device, the verdict and the driver's own error.
#include <filesystem>
#include <vector>

#include "check.hpp"

namespace archfit::check {

struct ConfirmItem {
  BinaryResult* binary;
  const binary::FileScan* scan;
};

// Fills each item's `driver` answers, report.confirm and report.findings.
// Simulated devices are not asked; without a real device or driver the
// findings say so and nothing else changes.
// Each binary's per-device verdicts and chosen images (from the judge) say
// what to hand over and what the driver is expected to answer.
void confirm_with_driver(const std::vector<ConfirmItem>& items,
                         const std::filesystem::path& libcuda, CheckReport& report);

// Whether a verdict promises that the driver loads the binary's code.
bool verdict_says_it_loads(compat::Verdict verdict);

}  // namespace archfit::check
