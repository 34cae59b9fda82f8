#pragma once
// The knowledge base: what archfit knows about GPUs, PTX and drivers, PyTorch
// wheels and fix recipes, loaded from the YAML files under sdk/data/kb (see
// README.md there), and the questions advice asks of it.
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "error_category.hpp"
#include "kb_error.hpp"
#include "packages.hpp"
#include "provenance.hpp"
#include "types.hpp"
#include "util/pattern.hpp"

namespace archfit::kb {

struct GpuEntry {
  std::string name;  // "GeForce RTX 5090"
  ComputeCapability cc;
  // "aarch64" for a GPU that only comes in such machines (Grace, DGX Spark,
  // Jetson); "" when it comes in any, and the machine archfit runs on counts.
  std::string machine;
  std::vector<std::string> aliases;
  std::string note;
  Provenance provenance;
};

struct PtxIsaEntry {
  PtxIsa isa;
  std::string cuda;                         // the CUDA release that introduced it: "12.8"
  std::optional<DriverVersion> min_driver;  // absent for a release that shipped no driver
  std::string note;
  Provenance provenance;
};

// Where a device's driver comes from: a Linux driver release (the numbers of
// NVIDIA's toolkit/driver table), or Jetson Linux (L4T) in JetPack.
enum class DriverPlatform { standard, jetson };

// An architecture (compute capability) and the first CUDA toolkit whose
// compiler targets it: no driver older than that toolkit's knows the device.
struct ArchitectureEntry {
  ComputeCapability cc;
  std::string name;                         // "Ada Lovelace"; may be empty
  std::string first_cuda;                   // "11.8"
  std::optional<DriverVersion> min_driver;  // that toolkit's driver; absent where none applies
  DriverPlatform platform = DriverPlatform::standard;
  std::string note;
  Provenance provenance;
};

// CUDA minor-version compatibility: an application built with this CUDA
// major runs on drivers at or above min_driver.
struct CudaFloor {
  uint32_t cuda_major = 0;
  DriverVersion min_driver;
  Provenance provenance;
};

struct CudaTag {
  std::string tag;   // "cu128"
  std::string cuda;  // "12.8"
  std::string index_url;
  std::optional<DriverVersion> toolkit_driver;  // the Linux driver of that CUDA release
  bool windows_ptx = true;  // false: the tag's Windows wheels carry SASS only (cu13x)
  Provenance provenance;
};

// drivers.yaml: the minimum driver of a CUDA release's GA toolkit on each OS
// (NVIDIA's toolkit/driver table), and of a CUDA major's minor-version
// compatibility. `windows` is a branch ("580") where NVIDIA publishes no
// Windows number; the provenance then says so.
struct ReleaseDrivers {
  std::string cuda;  // "12.8"; for a floor, the major alone: "12"
  DriverVersion linux_driver;
  DriverVersion windows_driver;
  Provenance provenance;

  const DriverVersion& of(DriverFamily family) const {
    return family == DriverFamily::windows_driver ? windows_driver : linux_driver;
  }
};

// The platform a PyTorch wheel is for and whose driver runs it: Windows
// wheels differ (cu13x carry no PTX), and a driver's numbers are its OS's.
struct TorchPlatform {
  bool windows_wheels = false;
  DriverFamily driver = DriverFamily::linux_driver;
};

struct TorchBuild {
  std::string tag;             // "cu128"
  std::vector<uint32_t> sass;  // SM numbers with a cubin: 75, 80, …, 120
  std::vector<uint32_t> ptx;   // SM numbers with PTX: 120
  Provenance provenance;
};

// A package released in step with torch (torchvision, torchaudio).
struct Companion {
  std::string name;     // "torchvision"
  std::string version;  // "0.23.0"
  // Built per CUDA tag like torch ("0.23.0+cu128" on the tag's index); false
  // for one build for every CUDA, installed from PyPI (torchaudio 2.11.1).
  bool per_cuda = true;
};

struct TorchVersion {
  std::string version;                // "2.7.1"
  std::vector<Companion> companions;  // pinned to it
};

struct TorchRelease {
  std::string release;                 // "2.7"
  std::vector<TorchVersion> versions;  // "2.7.0", "2.7.1": all built alike, oldest first
  std::string pypi_tag;                // the build PyPI carries ("cu126"); "" when unknown
  std::vector<TorchBuild> builds;      // ordered by CUDA version
  Provenance provenance;               // of `versions`' companions and `pypi_tag`
};

// A fix that applies to devices in [min_cc, max_cc]. Commands may hold
// {arch_list}, replaced by the device's capability ("12.0").
struct ComponentFix {
  std::optional<ComputeCapability> min_cc;
  std::optional<ComputeCapability> max_cc;
  std::string summary;
  std::vector<std::string> commands;
  Provenance provenance;
};

// One release of a component on PyPI: the torch it installs beside and the
// images of its main library (as build systems name them: sm_90a, compute_80).
struct ComponentRelease {
  std::string version;             // "0.0.32.post2"
  std::string torch;               // its requirement on torch, as written: "==2.8.0", ">=2.10"
  std::vector<std::string> archs;  // "sm_75", "sm_90a", "compute_80"
  Provenance provenance;
};

struct Component {
  std::string name;                        // "xformers"
  std::vector<std::string> distributions;  // pip distribution names
  std::vector<ComponentFix> fixes;
  std::vector<ComponentRelease> releases;  // oldest first; empty when not listed
  std::string rebuild;                     // a source build for any device, with {arch_list}
  // One copy of the library per CUDA release, of which a process loads the
  // one for torch's CUDA: "libbitsandbytes_cuda{cuda}" (cuda124 for 12.4).
  // Empty for components with one library.
  std::string library_per_cuda;
  std::string cuda_override_env;  // the variable that picks another release: BNB_CUDA_VERSION
  Provenance provenance;
};

// errors.yaml: how one kind of CUDA failure reads, and what it means.
// One step of an error's fix. A step about one component ("install a
// PyTorch built with CUDA 12.8") is dropped when a check of the environment
// finds that component runs on the GPU, or gives its own exact fix for it;
// a step that asks for a check is
// dropped when a check that judged components was weighed.
struct FixStep {
  std::string text;             // may hold {sm}
  std::string about;            // a component name ("torch"); "" for any
  bool unless_checked = false;  // errors.yaml `unless: checked`
};

// Whose message a pattern is: the library that prints it ("torch",
// "xformers"), the releases that print it in these words, and where it was
// read. `library` is "" for text any caller relays (CUDA's own error strings).
struct PatternOrigin {
  std::string library;
  std::string versions;  // "1.13-2.10", ">=2.11"; "" when not said
  std::string source;
};

struct ErrorSignature {
  ErrorCategory category = ErrorCategory::not_recognised;
  std::vector<std::string> patterns;
  std::vector<util::Pattern> regexes;  // `patterns`, compiled, case-insensitive
  std::vector<PatternOrigin> origins;  // one per pattern
  std::vector<int> cuda_errors;        // cudaError_t / CUresult numbers
  // A diagnosis's one-line title (what a toast shows); may hold {gpu} and
  // {sm}. `title_with_component` (may hold {component}) is used when a
  // component is named and the environment does not refute it; "" for none.
  std::string title;
  std::string title_with_component;
  std::string explanation;  // may hold {sm}
  std::vector<FixStep> fix;
  Provenance provenance;
};

// Where a message says which GPU it ran on (errors.yaml `gpu_arch`): the
// expression's groups are the capability, as its form says: "sm" (one group,
// "120" of "sm_120"), "dotted" or "tuple" (major and minor: "12.0", "(12, 0)").
struct GpuArchPattern {
  std::string pattern;
  util::Pattern regex;
  std::string form;  // "sm" | "dotted" | "tuple"
};

// A library's own statement of the archs it was built for (errors.yaml
// `built_for`): "list" (group 1 holds sm_/compute_ names) or "range" (groups
// 1-4: the minimum and maximum capability, major and minor).
struct BuiltForPattern {
  std::string pattern;
  util::Pattern regex;
  std::string form;  // "list" | "range"
  PatternOrigin origin;
};

// The answer to resolve_gpu.
struct ResolvedGpu {
  enum class How { name, alias, prefix, capability };
  std::string name;  // the entry's name; "sm_120" when the query was a capability
  ComputeCapability cc;
  How how = How::name;
  const GpuEntry* entry = nullptr;  // null when the query was a capability
};

// A PyTorch wheel that has an image for a device.
struct TorchImage {
  const TorchVersion* version = nullptr;  // "2.7.0"
  const TorchRelease* release = nullptr;
  const TorchBuild* build = nullptr;
  const CudaTag* tag = nullptr;
  bool via_ptx = false;      // false: a cubin runs; true: the driver JIT-compiles PTX
  uint32_t arch = 0;         // the SM number of the image that runs
  DriverVersion min_driver;  // the floor of the tag's CUDA major
  // The driver this device needs for the image: min_driver for a cubin, the
  // tag's toolkit driver for PTX (which it must JIT), and never older than
  // the first driver that knew the device (first_driver_for); nullopt if unknown.
  std::optional<DriverVersion> needed_driver;
  bool on_pypi = false;  // this version's PyPI wheel is this build
};

struct ComponentAdvice {
  const Component* component = nullptr;
  std::vector<const ComponentFix*> fixes;  // those whose range holds the device
  std::vector<std::string> commands;       // their commands, {arch_list} filled in
  std::string rebuild_command;             // Component::rebuild, filled in
};

class KnowledgeBase {
 public:
  const std::filesystem::path& dir() const { return dir_; }
  const std::vector<GpuEntry>& gpus() const { return gpus_; }
  const std::vector<ArchitectureEntry>& architectures() const {
    return architectures_;
  }  // by compute capability
  const std::vector<PtxIsaEntry>& ptx_isa() const { return ptx_isa_; }
  const std::vector<CudaFloor>& cuda_floors() const { return cuda_floors_; }
  const std::vector<CudaTag>& cuda_tags() const { return cuda_tags_; }
  const std::vector<TorchRelease>& torch_releases() const {
    return torch_releases_;
  }  // oldest first
  const std::vector<Component>& components() const { return components_; }
  // In errors.yaml's order, which is the order they are tried in.
  const std::vector<ErrorSignature>& error_signatures() const { return error_signatures_; }
  const std::vector<GpuArchPattern>& gpu_arch_patterns() const { return gpu_arch_patterns_; }
  const std::vector<util::Pattern>& gpu_name_patterns() const { return gpu_name_patterns_; }
  const std::vector<BuiltForPattern>& built_for_patterns() const { return built_for_patterns_; }
  // packages.yaml: stacks, supplier wheels, feature libraries (packages.hpp).
  const Packages& packages() const { return packages_; }

  // A GPU name or alias (forgivingly: case, spaces, "NVIDIA"/"GeForce"; a
  // driver-reported name with a suffix such as "NVIDIA H100 80GB HBM3"
  // matches the longest entry it starts with, word by word) or a capability
  // ("sm_120", "12.0", "120"). Throws UnknownGpuError listing close names.
  ResolvedGpu resolve_gpu(std::string_view query) const;
  // Entry names closest to `query`, closest first.
  std::vector<std::string> closest_gpu_names(std::string_view query, size_t count = 5) const;

  // The oldest driver that JIT-compiles PTX of this ISA; nullopt for an ISA
  // the knowledge base does not list.
  std::optional<DriverVersion> min_driver_for_ptx_isa(
      PtxIsa isa, DriverFamily family = DriverFamily::linux_driver) const;
  // The newest PTX ISA this driver is known to accept; nullopt if it is older
  // than every listed ISA's driver. A driver newer than the table may know
  // more: the answer is then a lower bound.
  std::optional<PtxIsa> max_ptx_isa_for_driver(
      const DriverVersion& driver, DriverFamily family = DriverFamily::linux_driver) const;
  std::optional<PtxIsa> max_ptx_isa_for_driver(  // throws KbError
      std::string_view driver, DriverFamily family = DriverFamily::linux_driver) const;
  // The minor-version-compatibility floor of a CUDA major (12 -> 525.60.13;
  // on Windows 528.33).
  std::optional<DriverVersion> cuda_floor_for_major(
      uint32_t cuda_major, DriverFamily family = DriverFamily::linux_driver) const;
  // The driver of a CUDA release's GA toolkit ("12.8": 570.26 on Linux,
  // 570.65 on Windows): drivers.yaml; nullopt for a release it does not list.
  std::optional<DriverVersion> toolkit_driver(std::string_view cuda, DriverFamily family) const;
  // The oldest driver known to report `cuda` ("12.8") to cuDriverGetVersion:
  // the GA driver of the newest listed release not above it. What a driver
  // whose number cannot be read (WSL2 has no /proc/driver/nvidia/version) is
  // at least; every decision that compares it with a GA driver or a floor
  // comes out as it would with the real number, or more careful.
  std::optional<DriverVersion> driver_reporting_cuda(std::string_view cuda,
                                                     DriverFamily family) const;
  const std::vector<ReleaseDrivers>& toolkit_drivers() const { return toolkit_drivers_; }

  const CudaTag* cuda_tag(std::string_view tag) const;
  // `version` is "2.7.0", "2.7.0+cu128" (then `tag` may be empty) or a
  // release series "2.7"; nullptr when the knowledge base has no such build.
  const TorchBuild* torch_build(std::string_view version, std::string_view tag = {}) const;
  // Every torch version and CUDA tag with a cubin for `cc` (same major,
  // minor not above) or PTX at or below it: oldest version first, and within
  // a version by CUDA tag.
  std::vector<TorchImage> torch_images_for(ComputeCapability cc, TorchPlatform platform = {}) const;
  // gpus.yaml's `architectures` entry for exactly this capability; nullptr
  // when the knowledge base does not list it.
  const ArchitectureEntry* architecture(ComputeCapability cc) const;
  // The driver of the first CUDA toolkit that targets `cc` (12.0: CUDA 12.8,
  // 570.26; 8.9: CUDA 11.8, 520.61.05): no older driver knows the device.
  // nullopt when the capability is not listed (newer or older than the
  // table) or its entry names no driver (Jetson Orin: JetPack brings it).
  std::optional<DriverVersion> first_driver_for(
      ComputeCapability cc, DriverFamily family = DriverFamily::linux_driver) const;

  // The recipes for a distribution ("xformers") on a device; nullopt when
  // there are none.
  // The component a pip distribution belongs to; null when none.
  const Component* component_for(std::string_view distribution) const;
  std::optional<ComponentAdvice> component_advice(std::string_view distribution,
                                                  ComputeCapability cc) const;

 private:
  friend class Loader;

  std::filesystem::path dir_;
  std::vector<GpuEntry> gpus_;
  std::unordered_map<std::string, size_t> gpu_keys_;  // gpu_name_key -> index in gpus_
  std::vector<ArchitectureEntry> architectures_;      // by compute capability
  std::vector<PtxIsaEntry> ptx_isa_;                  // by ISA
  std::vector<CudaFloor> cuda_floors_;
  std::vector<ReleaseDrivers> toolkit_drivers_;  // by CUDA release
  std::vector<ReleaseDrivers> driver_floors_;    // drivers.yaml's cuda_major_floors, per OS
  std::vector<CudaTag> cuda_tags_;               // by CUDA version
  std::vector<TorchRelease> torch_releases_;
  std::vector<Component> components_;
  std::vector<ErrorSignature> error_signatures_;
  std::vector<GpuArchPattern> gpu_arch_patterns_;
  std::vector<util::Pattern> gpu_name_patterns_;  // errors.yaml `gpu_name`: group 1 is the name
  std::vector<BuiltForPattern> built_for_patterns_;
  Packages packages_;
};

// Reads gpus.yaml (names and architectures), ptx_isa.yaml and torch.yaml
// (and components.yaml, errors.yaml and packages.yaml when present) from
// `dir` and checks every entry. Throws KbFormatError naming
// the file, line and field of the first problem, KbError for a missing file.
// A check matches no error messages: without_error_signatures skips
// errors.yaml, a sixth of the YAML it would parse before every check.
enum class KbParts { everything, without_error_signatures };
KnowledgeBase load_knowledge_base(const std::filesystem::path& dir,
                                  KbParts parts = KbParts::everything);

// Where the knowledge base is: `explicit_dir` (--kb) if given, else
// `environment_dir` (what ARCHFIT_KB_DIR names, as the one reader of the
// environment, session/environment_settings.hpp, read it) if given, else
// <prefix>/share/archfit/kb beside the running library or executable, else
// the source tree of this build, else the configured install directory.
// Throws KbError when an explicit or environment directory does not exist
// (naming --kb's folder or ARCHFIT_KB_DIR), or when none is found.
std::filesystem::path resolve_kb_dir(
    const std::optional<std::filesystem::path>& explicit_dir = {},
    const std::optional<std::filesystem::path>& environment_dir = {});

std::string_view to_string(Confidence confidence);
std::string_view to_string(DriverPlatform platform);  // "standard" | "jetson"

}  // namespace archfit::kb
