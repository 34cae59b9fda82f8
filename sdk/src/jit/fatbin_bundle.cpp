#include "fatbin_bundle.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <system_error>

#include "binary/parallel.hpp"
#include "env/python_locate.hpp"
#include "env/run_program.hpp"
#include "env/trust.hpp"

namespace archfit::jit {

namespace fs = std::filesystem;

namespace {

constexpr std::chrono::minutes kCompileLimit{10};

bool executable(const fs::path& path) {
  return !path.empty() && ::access(path.c_str(), X_OK) == 0 && fs::is_regular_file(path);
}

// "sm_90a" → {"elf", "90a"}; "compute_120" → {"ptx", "120"}.
std::pair<std::string, std::string> fatbinary_kind(const std::string& arch) {
  if (arch.rfind("compute_", 0) == 0) return {"ptx", arch.substr(8)};
  if (arch.rfind("sm_", 0) == 0) return {"elf", arch.substr(3)};
  throw BundleError("--arch " + arch + ": expected sm_XY[a|f] or compute_XY");
}

}  // namespace

// A program archfit runs: the variables that name it are ignored when setuid
// (env/trust.hpp).
fs::path find_fatbinary() {
  if (const char* given = env::trusted_path_variable("ARCHFIT_FATBINARY")) return given;
  for (const char* variable : {"CUDA_HOME", "CUDA_PATH"}) {
    if (const char* root = env::trusted_path_variable(variable)) {
      if (executable(fs::path(root) / "bin" / "fatbinary"))
        return fs::path(root) / "bin" / "fatbinary";
    }
  }
  if (executable("/usr/local/cuda/bin/fatbinary")) return "/usr/local/cuda/bin/fatbinary";
  if (const char* path = env::trusted_path_variable("PATH"))
    return env::find_program("fatbinary", path).value_or(fs::path());
  return {};
}

BundleResult build_bundle(const BundleRequest& request) {
  const auto start = std::chrono::steady_clock::now();
  if (request.archs.empty()) throw BundleError("--arch: name at least one arch");
  BundleResult result;
  result.fatbinary = find_fatbinary();
  if (result.fatbinary.empty()) {
    throw BundleError(
        "no fatbinary found (ARCHFIT_FATBINARY, CUDA_HOME/bin, /usr/local/cuda/bin, PATH); it "
        "comes with the CUDA toolkit, or the nvidia-cuda-nvcc wheel");
  }
  for (const auto& arch : request.archs) fatbinary_kind(arch);  // reject bad names up front

  std::error_code error;
  const fs::path work =
      fs::temp_directory_path() / ("archfit-bundle-" + std::to_string(::getpid()));
  fs::remove_all(work, error);
  fs::create_directories(work);
  struct Cleanup {
    fs::path dir;
    ~Cleanup() {
      std::error_code ignored;
      fs::remove_all(dir, ignored);
    }
  } cleanup{work};

  result.images.resize(request.archs.size());
  std::vector<std::string> failures(request.archs.size());
  const unsigned jobs = request.jobs ? request.jobs : binary::default_threads();
  env::ProgramOptions options;
  options.timeout = kCompileLimit;
  options.merge_stderr = true;
  binary::parallel_for(request.archs.size(), jobs, [&](size_t i) {
    const std::string& arch = request.archs[i];
    std::vector<std::string> args = {"jit", "compile", request.source.string(), "--arch",
                                     arch,  "-o",      (work / arch).string(),  "--json"};
    args.insert(args.end(), request.compile_args.begin(), request.compile_args.end());
    const env::ProgramResult run = env::run_program(request.archfit, args, options);
    if (!run.succeeded()) {
      failures[i] = arch + " (" + run.how_it_ended(options.timeout) + "):\n" + run.output;
      return;
    }
    const auto brace = run.output.find('{');
    const auto json = brace == std::string::npos
                          ? nlohmann::json()
                          : nlohmann::json::parse(run.output.substr(brace), nullptr,
                                                  /*allow_exceptions=*/false);
    result.images[i].arch = arch;
    if (json.is_object()) {
      result.images[i].milliseconds = json.value("milliseconds", 0.0);
      result.images[i].cache = json.value("cache", "");
    }
  });
  std::string failed;
  for (const auto& failure : failures) failed += failure;
  if (!failed.empty())
    throw BundleError("compiling " + request.source.string() + " failed for " + failed);

  std::vector<std::string> args = {"--create=" + request.output.string()};
  for (const auto& arch : request.archs) {
    const auto [kind, sm] = fatbinary_kind(arch);
    args.push_back("--image3=kind=" + kind + ",sm=" + sm + ",file=" + (work / arch).string());
  }
  const env::ProgramResult packed = env::run_program(result.fatbinary, args, options);
  if (!packed.succeeded()) {
    throw BundleError(result.fatbinary.string() + " failed (" +
                      packed.how_it_ended(options.timeout) + "):\n" + packed.output);
  }
  result.milliseconds =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace archfit::jit
