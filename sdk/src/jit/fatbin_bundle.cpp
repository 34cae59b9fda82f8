#include "fatbin_bundle.hpp"

#include <chrono>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <system_error>

#include "binary/parallel.hpp"
#include "cached_compile.hpp"
#include "compat/arch.hpp"
#include "env/python_locate.hpp"
#include "jit_runtime.hpp"
#include "store/store_location.hpp"
#include "sys/file_status.hpp"
#include "sys/library_loading.hpp"
#include "sys/machine.hpp"
#include "sys/read_file.hpp"
#include "sys/run_program.hpp"
#include "sys/user_folders.hpp"
#include "sys/utf8_path.hpp"

namespace archfit::jit {

namespace fs = std::filesystem;

namespace {

constexpr std::chrono::minutes kCompileLimit{10};

bool executable(const fs::path& path) {
  return !path.empty() && sys::may_run(path) && fs::is_regular_file(path);
}

// "sm_90a" → {"elf", "90a"}; "compute_120" → {"ptx", "120"}.
std::pair<std::string, std::string> fatbinary_kind(const std::string& arch) {
  const auto target = compat::parse_target(arch);
  if (!target) throw BundleError("--arch " + arch + ": expected sm_XY[a|f] or compute_XY");
  return {target->ptx ? "ptx" : "elf", target->number()};
}

// The variables that make a child `archfit jit compile` use `settings`, as
// the one reader of the environment (session/environment_settings.hpp)
// would have filled them from its own environment.
std::vector<std::pair<std::string, std::string>> child_environment(const JitSettings& settings) {
  std::vector<std::pair<std::string, std::string>> variables;
  if (settings.cache) {
    const KernelCache::Options& cache = *settings.cache;
    if (cache.dir) variables.emplace_back(store::kCacheDirVariable, sys::utf8_of(*cache.dir));
    std::string readonly;
    for (const auto& dir : cache.readonly_dirs)
      readonly +=
          (readonly.empty() ? "" : std::string(1, sys::kPathListSeparator)) + sys::utf8_of(dir);
    if (!readonly.empty()) variables.emplace_back(store::kCacheReadonlyDirsVariable, readonly);
    variables.emplace_back(store::kCacheMaxBytesVariable, std::to_string(cache.max_bytes));
  }
  if (settings.nvrtc_search) {
    const NvrtcSearch& search = *settings.nvrtc_search;
    if (!search.archfit_nvrtc.empty())
      variables.emplace_back("ARCHFIT_NVRTC", sys::utf8_of(search.archfit_nvrtc));
    if (!search.cuda_home.empty())
      variables.emplace_back(search.cuda_home_variable, sys::utf8_of(search.cuda_home));
  }
  return variables;
}

// `archfit jit compile` of one arch, as its command line.
std::vector<std::string> compile_arguments(const BundleRequest& request, const std::string& arch,
                                           const fs::path& image_file) {
  std::vector<std::string> args{
      "jit", "compile", "--json", "--arch", arch, "--output", sys::utf8_of(image_file)};
  // "--option=-DNAME": an option's value that starts with '-' is not taken
  // for another option.
  for (const auto& option : request.options) args.push_back("--option=" + option);
  for (const auto& name : request.name_expressions) args.push_back("--name-expression=" + name);
  args.push_back(sys::utf8_of(request.source));
  return args;
}

// The JSON answer at the end of what a successful `jit compile --json`
// printed (warnings may come before it); a discarded value when none.
nlohmann::json compile_answer(const std::string& output) {
  for (size_t at = output.rfind("\n{");; at = output.rfind("\n{", at - 1)) {
    const size_t start = at == std::string::npos ? 0 : at + 1;
    auto answer = nlohmann::json::parse(output.begin() + static_cast<std::ptrdiff_t>(start),
                                        output.end(), nullptr, /*allow_exceptions=*/false);
    if (answer.is_object()) return answer;
    if (at == std::string::npos || at == 0) return nlohmann::json::value_t::discarded;
  }
}

}  // namespace

fs::path find_fatbinary(const FatbinarySearch& search) {
  if (!search.given.empty()) return search.given;
  // fatbinary.exe on Windows, in the toolkit's bin (CUDA 13 moved only its
  // DLLs to bin\x64).
  const std::string name = std::string("fatbinary") + sys::kProgramSuffix;
  std::vector<fs::path> toolkits = search.toolkits;
  if (*sys::kDefaultCudaToolkit) toolkits.emplace_back(sys::kDefaultCudaToolkit);
  for (const auto& root : toolkits)
    if (!root.empty() && executable(root / "bin" / name)) return root / "bin" / name;
  if (!search.path.empty()) return env::find_program(name, search.path).value_or(fs::path());
  return {};
}

BundleResult build_bundle(const BundleRequest& request, const JitSettings& settings) {
  const auto start = std::chrono::steady_clock::now();
  if (request.archs.empty()) throw BundleError("--arch: name at least one arch");
  BundleResult result;
  result.fatbinary = request.fatbinary.empty() ? find_fatbinary({}) : request.fatbinary;
  if (result.fatbinary.empty()) {
    // The places find_fatbinary searched, as this OS writes them.
#ifdef _WIN32
    throw BundleError(
        "no fatbinary.exe found (ARCHFIT_FATBINARY, CUDA_HOME\\bin, CUDA_PATH\\bin, PATH); it "
        "comes with the CUDA toolkit");
#else
    throw BundleError(
        "no fatbinary found (ARCHFIT_FATBINARY, CUDA_HOME/bin, CUDA_PATH/bin, /usr/local/cuda/bin, "
        "PATH); it comes with the CUDA toolkit, or the nvidia-cuda-nvcc wheel");
#endif
  }
  for (const auto& arch : request.archs) fatbinary_kind(arch);  // reject bad names up front

  std::error_code error;
  const fs::path work =
      fs::temp_directory_path() / ("archfit-bundle-" + std::to_string(sys::this_process_id()));
  fs::remove_all(work, error);
  fs::create_directories(work);
  struct Cleanup {
    fs::path dir;
    ~Cleanup() {
      std::error_code ignored;
      fs::remove_all(dir, ignored);
    }
  } cleanup{work};

  // Missing or unreadable: said once here, not by every arch's compile.
  std::string problem;
  if (!sys::read_file(request.source, &problem)) throw BundleError(problem);
  if (request.compiler.empty())
    throw BundleError("no archfit command to compile each arch with (BundleRequest::compiler)");

  result.images.resize(request.archs.size());
  std::vector<std::string> failures(request.archs.size());
  const unsigned jobs = request.jobs ? request.jobs : binary::default_threads();
  sys::ProgramOptions options;
  options.timeout = kCompileLimit;
  options.standard_error = sys::StandardError::merged;  // NVRTC's log, on a failure
  options.environment = child_environment(settings);
  binary::parallel_for(request.archs.size(), jobs, [&](size_t i) {
    const std::string& arch = request.archs[i];
    const fs::path image_file = work / arch;
    sys::ProgramResult compiled;
    try {
      compiled =
          sys::run_program(request.compiler, compile_arguments(request, arch, image_file), options);
    } catch (const std::system_error& error) {
      failures[i] = arch + " (" + error.what() + ")\n";
      return;
    }
    const auto answer = compile_answer(compiled.output);
    if (compiled.succeeded() && answer.is_object()) {
      result.images[i] = {arch, answer.value("milliseconds", 0.0), answer.value("cache", "")};
    } else if (compiled.exited && compiled.exit_status != 0 && !compiled.output.empty()) {
      // `archfit jit compile: …` and NVRTC's whole log.
      failures[i] = arch + ":\n" + compiled.output + (compiled.output.ends_with('\n') ? "" : "\n");
    } else {
      failures[i] = arch + " (its compile " + compiled.how_it_ended(options) + ")\n";
    }
  });
  std::string failed;
  for (const auto& failure : failures) failed += failure;
  if (!failed.empty())
    throw BundleError("compiling " + sys::utf8_of(request.source) + " failed for " + failed);

  // fatbinary reads its arguments as narrow text, which Windows gives it in
  // the ANSI code page: a user folder named outside ASCII (C:\\Users\\José)
  // cannot be opened through it. So it packs into the work folder, named as
  // a narrow program can open it, and the bundle is moved to its place
  // afterwards through the wide API.
  const std::string separator(1, static_cast<char>(fs::path::preferred_separator));
  const std::string packed_name = "bundle.fatbin";
  std::vector<std::string> args = {"--create=" + sys::path_for_narrow_libraries(work) + separator +
                                   packed_name};
  for (const auto& arch : request.archs) {
    const auto [kind, sm] = fatbinary_kind(arch);
    args.push_back("--image3=kind=" + kind + ",sm=" + sm +
                   ",file=" + sys::path_for_narrow_libraries(work / arch));
  }
  sys::ProgramOptions pack;
  pack.timeout = kCompileLimit;
  pack.standard_error = sys::StandardError::merged;
  const sys::ProgramResult packed = sys::run_program(result.fatbinary, args, pack);
  if (!packed.succeeded()) {
    throw BundleError(sys::utf8_of(result.fatbinary) + " failed (" + packed.how_it_ended(pack) +
                      "):\n" + packed.output);
  }
  // A rename where the two share a volume, else a copy.
  fs::rename(work / packed_name, request.output, error);
  if (error) {
    std::error_code copied;
    fs::copy_file(work / packed_name, request.output, fs::copy_options::overwrite_existing, copied);
    if (copied)
      throw BundleError("cannot write " + sys::utf8_of(request.output) + ": " + copied.message());
  }
  result.milliseconds =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace archfit::jit
