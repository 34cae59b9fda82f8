#pragma once
// probe → scan → judge → advise: the pre-flight answer to "will this
// environment run on this GPU, and if not, what exactly do I change?".
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "compat/rules.hpp"
#include "env/attribution.hpp"
#include "env/cuda_libraries.hpp"

namespace archfit::check {

// archfit itself could not run the check (bad option, unreadable knowledge
// base); the message says what to change. Exit code 2 in the CLI.
class CheckError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct CheckOptions {
  std::optional<std::string> gpu;     // "RTX 5090", "sm_120", "12.0": simulate this device
  std::optional<std::string> driver;  // "570.86": simulate this driver release
  std::vector<std::filesystem::path> site_packages;  // --site-packages / --venv
  std::optional<std::filesystem::path> custom_nodes;
  std::vector<std::filesystem::path> paths;  // further files or trees to judge
  std::optional<std::filesystem::path> kb_dir;
  std::filesystem::path libcuda;  // empty: the loader's libcuda.so.1
  unsigned threads = 0;
};

struct DeviceInfo {
  std::string name;
  compat::ComputeCapability cc;
  bool simulated = false;
  uint64_t memory = 0;
};

struct DriverInfo {
  std::string version;       // "570.86.16"; empty when unknown
  std::string cuda_version;  // "12.8" (from the driver) ; empty when simulated or absent
  std::optional<binary::Version> max_ptx_isa;
  bool simulated = false;
};

struct Fix {
  std::string summary;
  std::vector<std::string> commands;
};

struct BinaryResult {
  std::filesystem::path path;
  compat::BinaryJudgement judgement;
};

struct ComponentResult {
  env::Component component;
  compat::Verdict verdict = compat::Verdict::no_device_code;
  std::string evidence;     // of the worst binary
  std::string explanation;  // of the worst binary
  Fix fix;                  // empty when nothing needs changing
  std::vector<BinaryResult> binaries;
};

enum class OverallVerdict { fits, fails, unknown };
std::string_view to_string(OverallVerdict verdict);

struct CheckReport {
  std::optional<DeviceInfo> device;  // nullopt: no GPU and none given
  DriverInfo driver;
  std::optional<std::string> torch;         // "2.5.1+cu124" when a torch is installed
  std::vector<env::CudaLibrary> libraries;  // CUDA libraries a process could load, in search order
  std::vector<ComponentResult> components;  // worst first
  std::vector<std::string> findings;        // probe and scan problems, in sentences
  OverallVerdict verdict = OverallVerdict::unknown;
};

CheckReport run_check(const CheckOptions& options);

}  // namespace archfit::check
