#include "nvrtc.hpp"

#include <nvrtc.h>

#include <algorithm>
#include <atomic>
#include <boost/dll/shared_library.hpp>
#include <cctype>
#include <chrono>
#include <mutex>
#include <sstream>

#include "compat/arch.hpp"
#include "cuda_headers.hpp"
#include "sys/file_status.hpp"
#include "sys/library_loading.hpp"
#include "sys/trust.hpp"
#include "sys/utf8_path.hpp"
#include "util/pattern.hpp"

namespace archfit::jit {

namespace fs = std::filesystem;

namespace {

// Every NVRTC entry point archfit calls, each looked up by its name into
// the NvrtcApi member of that name. All exist from NVRTC 11.2 on.
// clang-format off
#define ARCHFIT_NVRTC_ENTRY_POINTS(X) \
  X(nvrtcVersion) \
  X(nvrtcGetNumSupportedArchs) \
  X(nvrtcGetSupportedArchs) \
  X(nvrtcCreateProgram) \
  X(nvrtcAddNameExpression) \
  X(nvrtcCompileProgram) \
  X(nvrtcGetProgramLogSize) \
  X(nvrtcGetProgramLog) \
  X(nvrtcGetCUBINSize) \
  X(nvrtcGetCUBIN) \
  X(nvrtcGetPTXSize) \
  X(nvrtcGetPTX) \
  X(nvrtcGetLoweredName) \
  X(nvrtcDestroyProgram) \
  X(nvrtcGetErrorString)
// clang-format on

struct NvrtcApi {
#define ARCHFIT_NVRTC_MEMBER(name) decltype(&::name) name = nullptr;
  ARCHFIT_NVRTC_ENTRY_POINTS(ARCHFIT_NVRTC_MEMBER)
#undef ARCHFIT_NVRTC_MEMBER
};

enum class SeedSupport : int { unknown, yes, no };

std::string join(const std::vector<std::string>& items, std::string_view separator = " ") {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += separator;
    out += item;
  }
  return out;
}

size_t version_part_count(const std::string& version) {
  if (version.empty()) return 0;
  return static_cast<size_t>(std::count(version.begin(), version.end(), '.')) + 1;
}

bool starts_with_version(const std::string& version, const NvrtcVersion& nvrtc) {
  const std::string prefix = nvrtc.to_string() + ".";
  return version.starts_with(prefix);
}

bool names_arch(const std::string& option) {
  return option == "-arch" || option == "--gpu-architecture" || option.starts_with("-arch=") ||
         option.starts_with("--gpu-architecture=");
}

// `#include "x.h"` NVRTC could not open, from its log:
// 12.x: catastrophic error: could not open source file "cuda_fp16.h" (no directories in search
// list) 13.0: catastrophic error: cannot open source file "cuda_fp16.h"
std::vector<std::string> missing_headers_in(const std::string& log) {
  static const util::Pattern pattern(R"re((?:could not|cannot) open source file "([^"]+)")re");
  std::vector<std::string> out;
  for (const auto& name : pattern.find_all(log, 1)) {
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
  }
  return out;
}

}  // namespace

struct Nvrtc::Impl {
  boost::dll::shared_library library;
  boost::dll::shared_library builtins;
  NvrtcApi api;
  NvrtcInfo info;
  std::string candidate_version;
  std::string candidate_version_source;

  mutable std::atomic<SeedSupport> seed{SeedSupport::unknown};
  mutable std::once_flag build_once;
  mutable std::string build;
  mutable std::string build_source;

  std::string result_name(nvrtcResult result) const {
    const char* text = api.nvrtcGetErrorString ? api.nvrtcGetErrorString(result) : nullptr;
    return (text ? std::string(text) : "NVRTC error") + " (" +
           std::to_string(static_cast<int>(result)) + ")";
  }

  // Throws NvrtcError for a failed call outside a compile.
  void check(nvrtcResult result, const char* call) const {
    if (result == NVRTC_SUCCESS) return;
    throw NvrtcError(std::string(call) + " failed in " + info.path.string() + ": " +
                     result_name(result));
  }

  void resolve_api();
  void load_builtins();
  void find_build() const;
};

std::string_view to_string(ImageFormat format) {
  return format == ImageFormat::cubin ? "cubin" : "ptx";
}

std::string_view CompileResult::ptx() const {
  if (format != ImageFormat::ptx || image.empty()) return {};
  std::string_view text(reinterpret_cast<const char*>(image.data()), image.size());
  if (text.back() == '\0') text.remove_suffix(1);
  return text;
}

std::string CompileResult::lowered(std::string_view expression) const {
  for (const auto& [name, mangled] : lowered_names) {
    if (name == expression) return mangled;
  }
  return {};
}

// Looks up every entry point; throws NvrtcError naming those missing.
void Nvrtc::Impl::resolve_api() {
  std::vector<std::string> missing;
  const auto resolve = [&](const char* name, auto& out) {
    if (!library.has(name)) {
      missing.emplace_back(name);
      return;
    }
    out = reinterpret_cast<std::remove_reference_t<decltype(out)>>(&library.get<char>(name));
  };
#define ARCHFIT_NVRTC_RESOLVE(name) resolve(#name, api.name);
  ARCHFIT_NVRTC_ENTRY_POINTS(ARCHFIT_NVRTC_RESOLVE)
#undef ARCHFIT_NVRTC_RESOLVE
  if (!missing.empty()) {
    throw NvrtcError(info.path.string() + " lacks " + join(missing, ", ") +
                     ": it is not a libnvrtc archfit can use (NVRTC 11.2 or newer is needed).");
  }
}

namespace {

// How NVRTC's library files are named on this OS, for messages.
const char* nvrtc_file_names() {
  return sys::is_library_name_of_this_os("nvrtc64_130_0.dll") ? "nvrtc64_*.dll" : "libnvrtc.so*";
}

// The name NVRTC asks the loader for its builtins by:
// libnvrtc-builtins.so.12.8 beside libnvrtc.so, nvrtc-builtins64_128.dll
// beside nvrtc64_120_0.dll.
std::string builtins_name(const fs::path& nvrtc, const NvrtcVersion& version) {
  std::string extension = sys::utf8_of(nvrtc.extension());
  for (char& c : extension) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (extension == ".dll")
    return "nvrtc-builtins64_" + std::to_string(version.major) + std::to_string(version.minor) +
           ".dll";
  return "libnvrtc-builtins.so." + version.to_string();
}

}  // namespace

void Nvrtc::Impl::load_builtins() {
  // NVRTC loads its builtins library by name alone on its first compile.
  // On Linux 12.x finds it beside itself (RUNPATH $ORIGIN); 13.0 has no
  // RUNPATH and takes whatever the loader finds — another toolkit's, or none
  // for a wheel. On Windows LoadLibrary searches the program's folder,
  // System32 and PATH, not NVRTC's folder: a wheel's or torch's NVRTC fails
  // every compile with NVRTC_ERROR_BUILTIN_OPERATION_FAILURE. Loaded here
  // first by path, the copy beside it is the one that name then resolves to
  // (both loaders reuse a library already loaded under that name).
  std::error_code error;
  const std::string soname = builtins_name(info.path, info.version);
  std::vector<fs::path> dirs{fs::absolute(info.path, error).parent_path(),
                             library.location().parent_path()};
  if (auto real = fs::canonical(info.path, error); !error) dirs.push_back(real.parent_path());
  fs::path beside;
  for (const auto& dir : dirs) {
    if (fs::exists(dir / soname, error)) {
      beside = dir / soname;
      break;
    }
  }
  if (beside.empty()) {
    info.warnings.push_back(soname + " is not beside " + info.path.string() +
                            "; NVRTC will ask the loader for it, and every compile fails if "
                            "the loader finds none.");
  } else if (const fs::path other = sys::loaded_library_file(soname);
             !other.empty() && !sys::same_file(other, beside)) {
    info.builtins = other;
    info.warnings.push_back(soname + " is already loaded in this process from " + other.string() +
                            ", so NVRTC uses that copy rather than the one beside " +
                            info.path.string() + ".");
  } else {
    try {
      builtins.load(beside, boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local);
      sys::keep_loaded(builtins.location());
      info.builtins = beside;
    } catch (const std::exception& failure) {
      throw NvrtcError(info.path.string() + " is unusable: its " + beside.string() +
                       " could not be loaded: " + failure.what() + ".");
    }
  }
}

Nvrtc Nvrtc::load(const fs::path& library) { return load(NvrtcCandidate{library, "", "", ""}); }

Nvrtc Nvrtc::load(const NvrtcCandidate& candidate) {
  auto impl = std::make_shared<Impl>();
  impl->info.path = candidate.path;
  impl->info.origin = candidate.origin;
  impl->candidate_version = candidate.version;
  impl->candidate_version_source = candidate.version_source;
  const fs::path& path = candidate.path;
  std::error_code error;
  if (!fs::exists(path, error))
    throw NvrtcError(path.string() + " could not be loaded: no such file.");
  // A library an environment variable points at may sit in a folder anyone
  // can write to, or in another user's (issue 24): judged like a plugin's,
  // along its whole real path. A site-packages wheel is the environment's own.
  if (candidate.origin == "ARCHFIT_NVRTC" || candidate.origin == "CUDA_HOME" ||
      candidate.origin == "CUDA_PATH" || candidate.origin == sys::kLibraryPathVariable) {
    if (auto untrusted = sys::untrusted_path_chain(path, "libraries"); !untrusted.empty())
      throw NvrtcError(path.string() + " (from " + candidate.origin +
                       ") is not loaded: " + untrusted + ".");
  }
  try {
    // rtld_local: archfit's NVRTC never shadows a host's (PyTorch's) copy.
    impl->library.load(fs::absolute(path, error),
                       boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local);
  } catch (const std::exception& failure) {
    throw NvrtcError(path.string() + " could not be loaded: " + failure.what() + ".");
  }
  const fs::path location = impl->library.location();
  sys::keep_loaded(location);

  impl->resolve_api();

  NvrtcInfo& info = impl->info;
  const NvrtcApi& api = impl->api;
  int major = 0, minor = 0;
  impl->check(api.nvrtcVersion(&major, &minor), "nvrtcVersion");
  info.version = {static_cast<uint16_t>(major), static_cast<uint16_t>(minor)};
  int count = 0;
  impl->check(api.nvrtcGetNumSupportedArchs(&count), "nvrtcGetNumSupportedArchs");
  info.supported_archs.resize(static_cast<size_t>(std::max(count, 0)));
  if (count > 0)
    impl->check(api.nvrtcGetSupportedArchs(info.supported_archs.data()), "nvrtcGetSupportedArchs");

  impl->load_builtins();
  info.include_dirs = cuda_include_dirs(path);
  if (info.include_dirs.empty()) {
    info.warnings.push_back("No CUDA headers (cuda_fp16.h, cuda_runtime.h …) beside " +
                            path.string() + ": a source that includes them needs -I.");
  }
  return Nvrtc(std::move(impl));
}

Nvrtc Nvrtc::discover(const NvrtcSearch& search) {
  const auto candidates = find_nvrtc(search);
  std::vector<SkippedNvrtc> skipped;
  for (const auto& candidate : candidates) {
    try {
      Nvrtc nvrtc = load(candidate);
      nvrtc.impl_->info.skipped = std::move(skipped);
      return nvrtc;
    } catch (const NvrtcError& failure) {
      skipped.push_back({candidate, failure.what()});
    }
  }
  std::ostringstream message;
  message << "No usable NVRTC (" << nvrtc_file_names() << ") was found. Searched: ARCHFIT_NVRTC ("
          << (search.archfit_nvrtc.empty() ? "unset" : sys::utf8_of(search.archfit_nvrtc))
          << "), CUDA_HOME/CUDA_PATH ("
          << (search.cuda_home.empty() ? "unset" : sys::utf8_of(search.cuda_home)) << "), "
          << sys::kLibraryPathVariable << ", the loader path, " << search.site_packages.size()
          << " site-packages (nvidia/*/lib, nvidia/*/bin, torch/lib)";
  if (!search.default_toolkit.empty()) message << ", " << sys::utf8_of(search.default_toolkit);
  message << ".";
  for (const auto& skip : skipped) message << "\n  " << skip.reason;
  message << "\nInstall one (pip install nvidia-cuda-nvrtc for CUDA 13, nvidia-cuda-nvrtc-cu12 "
             "for CUDA 12, or a CUDA toolkit) or set ARCHFIT_NVRTC to "
          << nvrtc_file_names() << ".";
  throw NvrtcError(message.str());
}

const NvrtcInfo& Nvrtc::info() const { return impl_->info; }

void Nvrtc::Impl::find_build() const {
  const std::string& version = candidate_version;
  if (version_part_count(version) >= 3 && starts_with_version(version, info.version)) {
    build = version;
    build_source = candidate_version_source;
    return;
  }
  if (const std::string release = read_nvrtc_release(info.path);
      version_part_count(release) >= 3 && starts_with_version(release, info.version)) {
    build = release;
    build_source = "library";
    return;
  }
  // The PTX of an empty program names the release in a comment:
  // "// Cuda compilation tools, release 13.0, V13.0.88".
  build = info.version.to_string();
  build_source = "nvrtcVersion";
  if (info.supported_archs.empty()) return;
  nvrtcProgram program = nullptr;
  if (api.nvrtcCreateProgram(&program, "", "archfit_build_id.cu", 0, nullptr, nullptr) !=
      NVRTC_SUCCESS)
    return;
  const std::string arch =
      "--gpu-architecture=compute_" + std::to_string(info.supported_archs.front());
  const char* options[] = {arch.c_str()};
  size_t size = 0;
  if (api.nvrtcCompileProgram(program, 1, options) == NVRTC_SUCCESS &&
      api.nvrtcGetPTXSize(program, &size) == NVRTC_SUCCESS && size > 0) {
    std::string ptx(size, '\0');
    if (api.nvrtcGetPTX(program, ptx.data()) == NVRTC_SUCCESS) {
      static const util::Pattern release(
          R"(Cuda compilation tools, release [0-9.]+, V([0-9][0-9.]*))");
      const auto match = release.search(ptx);
      if (match && starts_with_version((*match)[1], info.version)) {
        build = (*match)[1];
        build_source = "compiler";
      }
    }
  }
  api.nvrtcDestroyProgram(&program);
}

const std::string& Nvrtc::build() const {
  std::call_once(impl_->build_once, [this] { impl_->find_build(); });
  return impl_->build;
}

const std::string& Nvrtc::build_source() const {
  build();
  return impl_->build_source;
}

std::string Nvrtc::describe() const {
  const auto& info = impl_->info;
  std::string out = "NVRTC " + info.version.to_string() + " (" + build() + ", " + build_source() +
                    ") from " + info.path.string();
  if (!info.origin.empty()) out += " (" + info.origin + ")";
  return out;
}

bool Nvrtc::random_seed_supported() const { return impl_->seed.load() != SeedSupport::no; }

namespace {

// The sentence that follows a failed compile's log when a header was missing.
std::string missing_header_advice(const NvrtcInfo& info, const std::vector<std::string>& missing) {
  bool cuda_header = false;
  for (const auto& name : missing)
    cuda_header |= name.starts_with("cuda") || name.starts_with("nv/");
  std::string out = "\nNVRTC could not open " + join(missing, ", ") + ".";
  if (!cuda_header)
    return out + " Pass its directory with -I, or give it in the request's headers.";
  if (!info.include_dirs.empty()) {
    std::vector<std::string> dirs;
    for (const auto& dir : info.include_dirs) dirs.push_back(dir.string());
    return out + " It is not in the CUDA headers beside this NVRTC (" + join(dirs, ", ") +
           "); pass its directory with -I.";
  }
  const int major = info.version.major;
  const std::string minor = info.version.to_string();
  const std::string wheel =
      major >= 13 ? "nvidia-cuda-runtime==" + minor + ".*"
                  : "nvidia-cuda-runtime-cu" + std::to_string(major) + "==" + minor + ".*";
  return out + " This NVRTC (" + info.path.string() +
         ") has no CUDA headers beside it: the nvidia-cuda-nvrtc wheels ship only nvrtc.h. "
         "Install the headers of the same release into the same site-packages (pip install " +
         wheel + ") or a CUDA " + minor + " toolkit, or pass -I<dir with cuda_fp16.h>.";
}

struct ProgramGuard {
  const NvrtcApi& api;
  nvrtcProgram program = nullptr;
  ~ProgramGuard() {
    if (program) api.nvrtcDestroyProgram(&program);
  }
};

}  // namespace

CompileResult Nvrtc::compile(const CompileRequest& request) const {
  const Impl& impl = *impl_;
  const NvrtcApi& api = impl.api;
  const auto target = compat::parse_target(request.target);
  if (!target) {
    throw NvrtcError("\"" + request.target +
                     "\" is not a target NVRTC compiles for: write sm_XY, "
                     "sm_XYa, sm_XYf (a CUBIN) or compute_XY (PTX).");
  }
  bool has_seed = false;
  for (const auto& option : request.options) {
    if (names_arch(option)) {
      throw NvrtcError("The options of " + request.source_name + " name an arch (" + option +
                       "); give it as the request's target instead.");
    }
    has_seed |= option.starts_with("-frandom-seed");
  }

  CompileResult result;
  result.target = request.target;
  result.format = target->ptx ? ImageFormat::ptx : ImageFormat::cubin;

  std::vector<const char*> header_names, header_contents;
  for (const auto& [name, content] : request.headers) {
    header_names.push_back(name.c_str());
    header_contents.push_back(content.c_str());
  }

  const bool add_seed = !has_seed && impl.seed.load() != SeedSupport::no;
  const auto options_for = [&](bool seed) {
    std::vector<std::string> options{"--gpu-architecture=" + request.target};
    options.insert(options.end(), request.options.begin(), request.options.end());
    if (seed) options.emplace_back(kRandomSeedOption);
    // A narrow path NVRTC can open: the short form of a folder named
    // outside ASCII on Windows.
    for (const auto& dir : impl.info.include_dirs)
      options.push_back("-I" + sys::path_for_narrow_libraries(dir));
    return options;
  };

  const auto started = std::chrono::steady_clock::now();
  for (int attempt = 0;; ++attempt) {
    const bool seed = add_seed && attempt == 0;
    result.options = options_for(seed);
    std::vector<const char*> argv;
    for (const auto& option : result.options) argv.push_back(option.c_str());

    ProgramGuard guard{api};
    impl.check(
        api.nvrtcCreateProgram(&guard.program, request.source.c_str(), request.source_name.c_str(),
                               static_cast<int>(header_names.size()), header_contents.data(),
                               header_names.data()),
        "nvrtcCreateProgram");
    for (const auto& expression : request.name_expressions)
      impl.check(api.nvrtcAddNameExpression(guard.program, expression.c_str()),
                 "nvrtcAddNameExpression");
    const nvrtcResult compiled =
        api.nvrtcCompileProgram(guard.program, static_cast<int>(argv.size()), argv.data());

    size_t log_size = 0;
    result.log.clear();
    if (api.nvrtcGetProgramLogSize(guard.program, &log_size) == NVRTC_SUCCESS && log_size > 1) {
      result.log.resize(log_size);
      if (api.nvrtcGetProgramLog(guard.program, result.log.data()) != NVRTC_SUCCESS)
        result.log.clear();
      while (!result.log.empty() && result.log.back() == '\0') result.log.pop_back();
    }

    // NVRTC 12.4 and older: "nvrtc: error: unrecognized option -frandom-seed=… found".
    if (seed && compiled == NVRTC_ERROR_INVALID_OPTION &&
        result.log.find("-frandom-seed") != std::string::npos) {
      impl.seed.store(SeedSupport::no);
      continue;
    }
    if (compiled != NVRTC_SUCCESS) {
      auto missing = missing_headers_in(result.log);
      std::string message = impl.info.path.string() + " (NVRTC " + impl.info.version.to_string() +
                            ") could not compile " + request.source_name + " for " +
                            request.target + ": " + impl.result_name(compiled) +
                            ".\nOptions: " + join(result.options) + "\nLog:\n" + result.log;
      if (!missing.empty()) message += missing_header_advice(impl.info, missing);
      throw NvrtcCompileError(std::move(message), request.source_name, request.target,
                              result.options, result.log, static_cast<int>(compiled),
                              std::move(missing));
    }
    if (seed) impl.seed.store(SeedSupport::yes);

    size_t size = 0;
    if (result.format == ImageFormat::cubin) {
      impl.check(api.nvrtcGetCUBINSize(guard.program, &size), "nvrtcGetCUBINSize");
      result.image.resize(size);
      impl.check(api.nvrtcGetCUBIN(guard.program, reinterpret_cast<char*>(result.image.data())),
                 "nvrtcGetCUBIN");
    } else {
      impl.check(api.nvrtcGetPTXSize(guard.program, &size), "nvrtcGetPTXSize");
      result.image.resize(size);
      impl.check(api.nvrtcGetPTX(guard.program, reinterpret_cast<char*>(result.image.data())),
                 "nvrtcGetPTX");
    }
    for (const auto& expression : request.name_expressions) {
      const char* lowered = nullptr;
      impl.check(api.nvrtcGetLoweredName(guard.program, expression.c_str(), &lowered),
                 "nvrtcGetLoweredName");
      result.lowered_names.emplace_back(expression, lowered ? lowered : "");
    }
    break;
  }
  result.milliseconds =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  return result;
}

}  // namespace archfit::jit
