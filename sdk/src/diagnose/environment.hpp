#pragma once
// What a diagnosis weighs an error against: the environment the error came
// from, as a check saw it. Read from an archfit.check/1 document — one a
// check just produced, or one saved by `archfit check --json` — so a saved
// report and a fresh probe take the same path.
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace archfit::diagnose {

// The document is not an archfit.check/1 report; the message names the field.
class EnvironmentError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct EnvironmentDevice {
  std::string name;  // "GeForce RTX 5090"
  std::string sm;    // "sm_120"
  bool simulated = false;
};

struct EnvironmentBinary {
  std::string path;
  std::string verdict;            // compat::to_string(Verdict): "native", "no-image", …
  bool loaded = true;             // reach "loaded"; false for a feature's or an unreached copy
  std::vector<std::string> sass;  // "sm_80", "sm_90a"
  std::vector<std::string> ptx;   // "compute_90"
};

struct EnvironmentComponent {
  std::string name;     // "xformers", "ComfyUI-GGUF"
  std::string version;  // distributions only; "" otherwise
  std::string kind;     // "distribution" | "custom_node" | "library"
  std::string verdict;  // the worst over its binaries and the devices
  std::string device;   // the device the verdict is about; "" when none was judged
  std::string evidence;
  std::string fix_summary;
  std::vector<std::string> fix_commands;
  std::vector<EnvironmentBinary> binaries;
  // The core's word on whether the verdict fails ("blocks"); a report from
  // before that field was written takes it from compat's verdict table.
  bool blocks = false;

  bool fails() const { return blocks; }
  // Runs, natively or through the driver's JIT (compat::runs).
  bool runs() const;
};

// A stack as the check judged it (check-json.md "stacks").
struct EnvironmentStack {
  std::string name;     // "PyTorch"
  std::string anchor;   // "torch"; "" for a pack or library
  std::string version;  // "2.5.1+cu124"
  std::string verdict;
  bool blocks = false;
  std::string title;  // "RTX 5090 cannot run PyTorch 2.5.1+cu124" for a blocking one
  std::string evidence;
  std::string fix_summary;
  std::vector<std::string> fix_commands;
  std::string cuda_version;     // "12.8"; "" when the check did not say
  std::string cuda_min_driver;  // the driver that CUDA major needs; "" when not said
};

struct Environment {
  std::string source;  // what it was read from: "archfit check", a report's path
  std::vector<EnvironmentDevice> devices;
  std::string driver_version;       // "570.86.16"; "" when no driver was found or named
  std::string driver_cuda_version;  // "12.8"; "" when simulated or unknown
  bool driver_simulated = false;
  std::string torch;                             // "2.5.1+cu124"; "" when none was seen
  std::vector<EnvironmentComponent> components;  // worst first, as the report has them
  std::vector<EnvironmentStack> stacks;          // failing first, as the report has them
  std::vector<std::string> findings;

  // The device a component's verdict is about, else the first; nullptr when none.
  const EnvironmentDevice* device_named(const std::string& name) const;
  // The component of that name (as pip compares names); nullptr when the
  // check judged none.
  const EnvironmentComponent* component(std::string_view name) const;
};

// Throws EnvironmentError for a document that is not archfit.check/1 or
// lacks a field the diagnosis reads (naming it).
Environment read_environment(const nlohmann::json& check_document, std::string source);

}  // namespace archfit::diagnose
