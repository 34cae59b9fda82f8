#pragma once
// The report model of a check (docs/design.md, "report"): what was judged
// against what, each binary's verdict per device, each component's and each
// stack's verdict with its evidence and fix, and the overall verdict.
// report_json.hpp writes it as archfit.check/1; render/check_text.hpp as text.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "binary/scanner.hpp"
#include "compat/driver.hpp"
#include "compat/rules.hpp"
#include "env/attribution.hpp"
#include "env/cuda_libraries.hpp"
#include "env/wheel.hpp"
#include "kb/types.hpp"
#include "probes.hpp"

namespace archfit::check {

// Which environment a check judges and how it was chosen, for the report's
// first line: "$VIRTUAL_ENV" and the venv.
struct EnvironmentChoice {
  std::string source;  // "$VIRTUAL_ENV", "$CONDA_PREFIX", "ComfyUI portable", "python3 on PATH"
  std::filesystem::path where;
  std::filesystem::path python;  // its interpreter, which runs the fix's pip; empty when unknown
};

// The environment a check's fixes are for (environment_commands.hpp).
struct CommandTarget {
  std::filesystem::path python;  // its interpreter, as this OS sees it; empty: unknown
  bool windows = false;          // a Windows environment (read here from Linux or WSL)
};

struct DeviceInfo {
  std::string name;
  compat::ComputeCapability cc;
  bool simulated = false;
  uint64_t memory = 0;
  int ordinal = -1;  // the driver's device number; -1 when simulated
  // The CPU of the machine the GPU sits in, as ELF names it: "x86_64",
  // "aarch64". A real GPU's is this machine's; a simulated one's the
  // knowledge base's for GPUs that only come in one (Jetson, Grace), else
  // this machine's.
  std::string machine;
  // The first driver that knows this architecture (gpus.yaml
  // `architectures`), and whether the driver checked against is that new;
  // true when either is unknown.
  std::optional<compat::DriverVersion> first_driver;
  bool driver_knows_it = true;

  std::string label() const;  // "NVIDIA GeForce RTX 5090 (sm_120)"
};

struct DriverInfo {
  std::string version;       // "570.86.16"; empty when unknown
  std::string cuda_version;  // "12.8" (from the driver) ; empty when simulated or absent
  std::optional<binary::Version> max_ptx_isa;
  bool simulated = false;
  // Whose numbers `version` and every driver a fix asks for are: Windows for
  // a Windows environment and under WSL2, whose driver is the Windows one.
  kb::DriverFamily family = kb::DriverFamily::linux_driver;
  // The driver's own number could not be read (WSL2 has no
  // /proc/driver/nvidia/version): `version` is the oldest driver that
  // reports `cuda_version`, which this one is at least.
  bool at_least = false;
};

struct Fix {
  std::string summary;
  // Run in order; each is one command line of `shell`, pip run by the judged
  // environment's interpreter (environment_commands.hpp).
  std::vector<std::string> commands;
  std::string shell = "sh";  // "sh" (POSIX) or "cmd" (Windows)
  // On Windows, the same commands for PowerShell; empty elsewhere.
  std::vector<std::string> powershell_commands;
  // What the commands pin, one requirement each ("torch==2.8.0",
  // "torchvision==0.23.0+cu126"), and the index they come from ("" for PyPI).
  std::vector<std::string> requirements;
  std::string index_url;
  std::string driver;  // the NVIDIA driver the fix needs at least; "" when no need is known
  // Other ways out, each complete on its own ("or keep xformers: …").
  std::vector<Fix> alternatives;

  bool empty() const { return summary.empty() && commands.empty(); }
};

// How a binary is reached when the package that holds it is used (reach.hpp).
enum class Reach {
  loaded,     // on the normal path: the package's own, or linked or opened by what is
  feature,    // loaded, but its kernels serve one feature only (packages.yaml features)
  unreached,  // nothing in what was checked links or opens it
};
std::string_view to_string(Reach reach);  // "loaded" | "feature" | "unreached"

// The real driver's answer to cuModuleLoadData on one device (--confirm).
struct DriverAnswer {
  std::string device;
  bool loaded = false;
  std::string error;   // "CUDA_ERROR_NO_BINARY_FOR_GPU (209)"; empty when loaded
  bool agrees = true;  // loaded exactly when archfit's verdict says it runs
};

struct BinaryResult {
  std::filesystem::path path;
  compat::BinaryJudgement judgement;        // on the device where it fares worst
  size_t judged_on = 0;                     // that device: an index into CheckReport::devices
  std::vector<compat::Verdict> per_device;  // in the order of CheckReport::devices
  // The image the judge picked on each device (compat::BinaryJudgement::chosen).
  std::vector<std::optional<size_t>> chosen_per_device;
  std::vector<DriverAnswer> driver;  // --confirm only: one per real device asked
  // The ISA of the PTX the driver would JIT-compile on the device it fares
  // worst on (ptx-jit, ptx-too-new-for-driver); nullopt otherwise.
  std::optional<binary::Version> ptx_isa;
  Reach reach = Reach::loaded;
  // How it is reached ("linked from torch/lib/libtorch_cuda.so"), the feature
  // it serves, or why nothing loads it. Only a loaded binary makes a verdict.
  std::string reach_reason;
  std::string machine;  // "x86_64", "aarch64"; "" for a cubin, fatbin or PTX file
};

// What --confirm did, for the report's summary.
struct ConfirmSummary {
  size_t asked = 0;      // containers handed to the driver, over all devices
  size_t disagreed = 0;  // of those, answers that contradict the verdict
  size_t not_asked = 0;  // binaries with nothing launchable to hand over, or inside a wheel
};

struct ComponentResult {
  env::Component component;
  // The worst of its loaded binaries (features and unreached copies never
  // count); when none is loaded, the worst of the rest, which blocks nothing.
  compat::Verdict verdict = compat::Verdict::no_device_code;
  std::string device;                       // the device the verdict, evidence and fix are about
  std::vector<compat::Verdict> per_device;  // in the order of CheckReport::devices
  std::string evidence;                     // of the worst binary
  std::string explanation;                  // of the worst binary
  Fix fix;                                  // empty when nothing needs changing
  std::vector<BinaryResult> binaries;
  Reach reach = Reach::unreached;  // its best-reached binary's
  std::string stack;               // the stack it is judged in; "" when none

  // Its verdict fails something a process loads on the normal path.
  bool blocks() const { return reach == Reach::loaded && compat::is_failure(verdict); }
};

// A feature whose kernels have no image a GPU runs: the rest works.
struct FeatureNote {
  std::string feature;  // packages.yaml's words
  std::string component;
  std::filesystem::path library;
  compat::Verdict verdict = compat::Verdict::no_image;
  std::string device;
  std::string evidence;
};

// The CUDA runtime a stack is built for, and the driver that runtime needs.
struct CudaRuntime {
  uint32_t major = 0;
  std::string version;  // "12.8" or "12"; as exact as the source says
  std::string source;   // "torch/version.py", "libcudart.so.13 (linked by …)"
  std::optional<compat::DriverVersion> min_driver;  // the major's minor-version floor
};

// A library a stack's binary links that is neither in the environment nor
// where the loader looks (missing-library): the import fails on it first.
struct MissingLibrary {
  std::string library;    // "libcudart.so.12", as the binary names it
  std::string needed_by;  // the binary that links it, as the report shows it: "xformers/_C.so"
  // What installs it (packages.yaml `provided_libraries`): the
  // distribution, and the requirement a fix installs ("nvidia-cuda-runtime==13.*").
  std::string distribution;
  std::string requirement;
};

// What a user installs and moves as one: the PyTorch stack (torch with
// torchvision, torchaudio, triton and the nvidia-* wheels it requires), any
// other package with the CUDA wheels it requires, a custom-node pack, a
// library named alone. One verdict over every binary its own binaries
// reach, and one fix.
struct StackResult {
  std::string name;     // "PyTorch", "xformers", "ComfyUI-GGUF"
  std::string anchor;   // the distribution whose build decides ("torch"); "" for a pack or file
  std::string version;  // the anchor's: "2.5.1+cu124"
  env::ComponentKind kind = env::ComponentKind::distribution;
  std::vector<std::string> members;  // component names, the anchor first
  compat::Verdict verdict = compat::Verdict::no_device_code;
  std::vector<compat::Verdict> per_device;  // in the order of CheckReport::devices
  std::string device;                       // the device the verdict, evidence and fix are about
  std::string evidence;
  std::string explanation;
  std::optional<CudaRuntime> cuda;
  Fix fix;
  std::vector<FeatureNote> notes;  // features that will not work; the stack still runs
  std::vector<MissingLibrary> missing_libraries;  // what stops it loading (missing-library)
  // The binaries its verdict weighs: indices into CheckReport::components
  // and their binaries.
  std::vector<std::pair<size_t, size_t>> binaries;

  std::string name_and_version() const;  // "PyTorch 2.5.1+cu124"; the name alone without a version
};

enum class OverallVerdict { fits, fails, unknown };
std::string_view to_string(OverallVerdict verdict);

// How much of the environment was read this time.
struct ScanFigures {
  size_t files = 0;               // files looked at (passing over sources and text by name)
  size_t reused = 0;              // of them, answered from the scan index without reading
  size_t directories = 0;         // directories walked
  size_t directories_reused = 0;  // of them, not listed: the index said what they hold
  std::string index;  // why the index could not be used or kept; "" when it was, or not asked
};

struct CheckReport {
  std::optional<EnvironmentChoice> environment;  // when archfit chose it (CheckRequest)
  std::vector<DeviceInfo> devices;  // every GPU judged against; empty: no GPU and none given
  std::string no_gpu;  // with no device: why, in words ("no NVIDIA driver is installed here …")
  ScanFigures scan;
  DriverInfo driver;
  std::optional<std::string> torch;         // "2.5.1+cu124" when a torch is installed
  std::vector<env::CudaLibrary> libraries;  // CUDA libraries a process could load, in search order
  std::vector<env::Wheel> wheels;           // --wheel files, with their tags
  std::vector<StackResult> stacks;          // failing first, PyTorch first among them
  // The interpreter and OS every fix command was written for.
  CommandTarget command_target;
  std::vector<ComponentResult> components;  // worst first
  std::vector<ProbeResult> probes;          // what probe plugins reported (CheckRequest::plugins)
  std::vector<std::string> findings;        // probe and scan problems, in sentences
  std::optional<ConfirmSummary> confirm;    // present when --confirm asked the driver
  // What could not be read ("x.whl!/pkg/_C.so: not read: …"): a member of a
  // --wheel past its decompression budget, a wheel refused whole, a library
  // or extension module too damaged to show a single image. Its device code
  // was not judged, so the verdict cannot be fits.
  std::vector<std::string> unread;
  OverallVerdict verdict = OverallVerdict::unknown;
  // The answer in one line: the verdict, what fails where, and the first
  // fix's command ("fails: … run: pip install …").
  std::string summary;
};

}  // namespace archfit::check
