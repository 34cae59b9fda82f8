#pragma once
// libnvrtc, loaded at run time (docs/design.md, decision 1), and compiles through
// it. The newest copy that loads wins (nvrtc_discovery.hpp); its
// libnvrtc-builtins is loaded from beside it, and the CUDA headers of the
// toolkit or wheel it came from are put on the include path
// (cuda_headers.hpp). Nothing here includes nvrtc.h: callers need no CUDA
// headers.
#include <cstddef>
#include <filesystem>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "binary/image.hpp"
#include "nvrtc_discovery.hpp"
#include "nvrtc_error.hpp"

namespace archfit::jit {

// What nvrtcVersion says: major.minor, "13.0".
using NvrtcVersion = binary::Version;

// A candidate tried before the one that loaded, and why it was passed over.
struct SkippedNvrtc {
  NvrtcCandidate candidate;
  std::string reason;  // "/x/libnvrtc.so.12 could not be loaded: … invalid ELF header"
};

struct NvrtcInfo {
  std::filesystem::path path;        // as found (a link is not resolved)
  std::string origin;                // where it was found: NvrtcCandidate::origin
  NvrtcVersion version;              // nvrtcVersion
  std::vector<int> supported_archs;  // nvrtcGetSupportedArchs: 75 80 86 … 120 121
  // -I directories added to every compile (cuda_headers.hpp); may be empty.
  std::vector<std::filesystem::path> include_dirs;
  // The libnvrtc-builtins.so.<major>.<minor> NVRTC will use: the one beside
  // it, loaded by archfit; or a copy of that name already in the process (a
  // warning says so); empty when none is beside it (NVRTC then asks the
  // loader for one).
  std::filesystem::path builtins;
  // Builtins missing or already loaded from another copy; no CUDA headers.
  std::vector<std::string> warnings;
  std::vector<SkippedNvrtc> skipped;  // by discover(): better-ranked copies that failed
};

// The arch being compiled for: "sm_120" (CUBIN, SASS for exactly 12.0),
// "sm_90a" / "sm_100f" (CUBIN, arch- or family-specific) or "compute_90"
// (PTX, that the driver JIT-compiles for 9.0 and above).
enum class ImageFormat { cubin, ptx };
std::string_view to_string(ImageFormat format);

struct CompileRequest {
  std::string source;
  std::string source_name = "kernel.cu";       // names the source in NVRTC's log
  std::map<std::string, std::string> headers;  // #include name → content
  // NVRTC options (-I, -D, --std=c++17, …); not the arch: that is `target`.
  std::vector<std::string> options;
  // C++ names to lower ("rmsnorm<float>"); extern "C" names need none.
  std::vector<std::string> name_expressions;
  std::string target;  // "sm_120", "sm_90a", "compute_90"
};

struct CompileResult {
  // The CUBIN, or the PTX text with its terminating NUL (cuModuleLoadData
  // reads PTX as a C string).
  std::vector<std::byte> image;
  ImageFormat format = ImageFormat::cubin;
  std::string target;
  // Each name expression of the request, in its order, with its mangled name.
  std::vector<std::pair<std::string, std::string>> lowered_names;
  std::string log;                   // warnings; empty when there were none
  std::vector<std::string> options;  // exactly as NVRTC got them
  double milliseconds = 0;           // nvrtcCreateProgram to the image in hand

  std::span<const std::byte> bytes() const { return image; }
  std::string_view ptx() const;                            // the PTX text; empty for a CUBIN
  std::string lowered(std::string_view expression) const;  // "" when not requested
};

// One loaded NVRTC. Copies share it; every member may be called from many
// threads at once (each compile has its own nvrtcProgram). The library
// stays loaded until the process ends, as the driver does.
class Nvrtc {
 public:
  // The best of find_nvrtc(search) that loads and has every entry point
  // archfit calls; those ranked above it are in info().skipped. Throws
  // NvrtcError naming every place searched, every copy tried and why it
  // failed, and what to install.
  static Nvrtc discover(const NvrtcSearch& search);
  // Exactly this copy. Throws NvrtcError when it does not load or lacks an
  // entry point.
  static Nvrtc load(const NvrtcCandidate& candidate);
  static Nvrtc load(const std::filesystem::path& library);

  const NvrtcInfo& info() const;
  // The precise release, "13.0.88": the candidate's version when it has
  // three parts and agrees with nvrtcVersion; else read_nvrtc_release();
  // else the PTX of an empty program (one compile, the first time it is
  // asked); else major.minor.
  const std::string& build() const;
  // Where build() came from: "dist-info", "version.json", "file name",
  // "library", "compiler" or "nvrtcVersion".
  const std::string& build_source() const;
  // "NVRTC 13.0 (13.0.88, library) from /usr/local/cuda/lib64/libnvrtc.so.13 (CUDA_HOME)"
  std::string describe() const;

  // Compiles for request.target. Options NVRTC gets: --gpu-architecture=
  // <target>, the request's, a fixed -frandom-seed (unless the request has
  // one, and where this NVRTC accepts it: 12.4 does not, 12.9 and 13.0 do),
  // then -I for each info().include_dirs. Throws NvrtcCompileError on
  // failure, NvrtcError for a malformed target or an arch in the options.
  CompileResult compile(const CompileRequest& request) const;
  // Whether -frandom-seed is passed: unknown (true) until a compile has
  // shown otherwise.
  bool random_seed_supported() const;

  struct Impl;

 private:
  explicit Nvrtc(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<Impl> impl_;
};

// The option archfit adds so that output is reproducible (docs/op-author-guide.md,
// "-frandom-seed").
inline constexpr std::string_view kRandomSeedOption = "-frandom-seed=0x61726368";

}  // namespace archfit::jit
