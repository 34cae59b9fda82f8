#pragma once
// The inverse of report_json: an archfit.check/1 document read back into
// compat's types — verdicts as compat::Verdict, devices as compute
// capabilities, images as compat::Target — for whoever weighs a report it did
// not run (diagnose/, given a report a check just produced or one saved by
// `archfit check --json`: both take this one path). Reports from earlier
// editions of the schema read too: a field added later may be absent.
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "compat/arch.hpp"
#include "compat/verdict.hpp"
#include "report.hpp"

namespace archfit::check {

// The document is not an archfit.check/1 report, or a field is not what the
// schema says; the message names the field ("components[3].verdict").
class ReportReadError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A verdict as a report names it: the verdict this archfit knows by that
// name, or none (a newer archfit's); the name is kept either way.
struct ReportedVerdict {
  std::optional<compat::Verdict> verdict;
  std::string name;  // "no-image"; "" when the report gave none

  bool is(compat::Verdict other) const { return verdict == other; }
  friend bool operator==(const ReportedVerdict&, const ReportedVerdict&) = default;
};

struct ReportedDevice {
  std::string name;  // "GeForce RTX 5090"
  compat::ComputeCapability cc;
  bool simulated = false;

  std::string sm() const { return cc.sm_name(); }  // "sm_120"
};

struct ReportedBinary {
  std::string path;
  ReportedVerdict verdict;
  bool loaded = true;  // reach "loaded"; false for a feature's or an unreached copy
  // As the report lists them; a name that is no target (a damaged image's
  // "sm_5") is left out.
  std::vector<compat::Target> sass;  // sm_80, sm_90a
  std::vector<compat::Target> ptx;   // compute_90
};

struct ReportedComponent {
  std::string name;         // "xformers", "ComfyUI-GGUF"
  std::string version;      // distributions only; "" otherwise
  std::string kind;         // "distribution" | "custom_node" | "library"
  ReportedVerdict verdict;  // the worst over its binaries and the devices
  std::string device;       // the device the verdict is about; "" when none was judged
  std::string evidence;
  std::string fix_summary;
  std::vector<std::string> fix_commands;
  std::vector<ReportedBinary> binaries;
  // The core's word on whether the verdict fails ("blocks"); a report from
  // before that field was written takes it from compat's verdict table.
  bool blocks = false;

  bool fails() const { return blocks; }
  // Runs, natively or through the driver's JIT (compat::runs); a verdict
  // this archfit does not know does not.
  bool runs() const { return verdict.verdict && compat::runs(*verdict.verdict); }
};

// A stack as the check judged it (check-json.md "stacks").
struct ReportedStack {
  std::string name;     // "PyTorch"
  std::string anchor;   // "torch"; "" for a pack or library
  std::string version;  // "2.5.1+cu124"
  ReportedVerdict verdict;
  bool blocks = false;
  std::string title;  // "RTX 5090 cannot run PyTorch 2.5.1+cu124" for a blocking one
  std::string evidence;
  std::string fix_summary;
  std::vector<std::string> fix_commands;
  std::string cuda_version;     // "12.8"; "" when the check did not say
  std::string cuda_min_driver;  // the driver that CUDA major needs; "" when not said
};

struct ReportedEnvironment {
  std::string source;  // what it was read from: "archfit check", a report's path
  std::vector<ReportedDevice> devices;
  std::string driver_version;       // "570.86.16"; "" when no driver was found or named
  std::string driver_cuda_version;  // "12.8"; "" when simulated or unknown
  bool driver_simulated = false;
  std::string torch;                          // "2.5.1+cu124"; "" when none was seen
  std::vector<ReportedComponent> components;  // worst first, as the report has them
  std::vector<ReportedStack> stacks;          // failing first, as the report has them
  std::vector<std::string> findings;
  // The interpreter and shell the report's fixes are written for; an older
  // report without `commands_for` leaves it empty.
  CommandTarget command_target;

  // The device a component's verdict is about, else the first; nullptr when none.
  const ReportedDevice* device_named(const std::string& name) const;
  // The component of that name (as pip compares names); nullptr when the
  // check judged none.
  const ReportedComponent* component(std::string_view name) const;
};

// Throws ReportReadError for a document that is not archfit.check/1 or
// lacks a field the reader needs (naming it).
ReportedEnvironment read_report(const nlohmann::json& check_document, std::string source);

}  // namespace archfit::check
