#pragma once
// Pieces of a check report for tests that build one by hand (render's tests:
// the plan script, the checklist's words) rather than run a check.
#include <string>

#include "check/report.hpp"

namespace archfit::testing {

// A report on one simulated GPU, with nothing judged yet.
inline check::CheckReport report_on_device(const std::string& name, compat::ComputeCapability cc) {
  check::CheckReport report;
  check::DeviceInfo device;
  device.name = name;
  device.cc = cc;
  device.simulated = true;
  report.devices = {device};
  return report;
}

// The PyTorch stack at `version` ("2.5.1+cu124") with `verdict`.
inline check::StackResult pytorch_stack(const std::string& version, compat::Verdict verdict) {
  check::StackResult torch;
  torch.name = "PyTorch";
  torch.anchor = "torch";
  torch.version = version;
  torch.verdict = verdict;
  return torch;
}

}  // namespace archfit::testing
