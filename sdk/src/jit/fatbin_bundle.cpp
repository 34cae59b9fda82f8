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
#include "sys/child_process.hpp"
#include "sys/machine.hpp"
#include "sys/read_file.hpp"
#include "sys/run_program.hpp"
#include "sys/user_folders.hpp"
#include "util/json_text.hpp"

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

// In the child: `arch` through the kernel cache, as `archfit jit compile`
// would, the image written to `image_file`; the answer for the parent.
nlohmann::json compile_one(const BundleRequest& request, const JitSettings& settings,
                           const std::string& source, const std::string& arch,
                           const fs::path& image_file) {
  CompileRequest compile;
  compile.source = source;
  compile.source_name = request.source.filename().string();
  compile.target = arch;
  compile.options = request.options;
  compile.name_expressions = request.name_expressions;
  // A runtime of the child's own, from its owner's settings: the parent's
  // cache and NVRTC may hold locks another of its threads took before fork.
  JitRuntime runtime(settings);
  const CachedCompile compiled = runtime.compile(compile);
  write_image_file(compiled, image_file);
  return {{"milliseconds", compiled.milliseconds}, {"cache", to_string(compiled.source)}};
}

}  // namespace

fs::path find_fatbinary(const FatbinarySearch& search) {
  if (!search.given.empty()) return search.given;
  for (const auto& root : search.toolkits)
    if (!root.empty() && executable(root / "bin" / "fatbinary")) return root / "bin" / "fatbinary";
  if (executable("/usr/local/cuda/bin/fatbinary")) return "/usr/local/cuda/bin/fatbinary";
  if (!search.path.empty()) return env::find_program("fatbinary", search.path).value_or(fs::path());
  return {};
}

BundleResult build_bundle(const BundleRequest& request, const JitSettings& settings) {
  const auto start = std::chrono::steady_clock::now();
  if (request.archs.empty()) throw BundleError("--arch: name at least one arch");
  BundleResult result;
  result.fatbinary = request.fatbinary.empty() ? find_fatbinary({}) : request.fatbinary;
  if (result.fatbinary.empty()) {
    throw BundleError(
        "no fatbinary found (ARCHFIT_FATBINARY, CUDA_HOME/bin, /usr/local/cuda/bin, PATH); it "
        "comes with the CUDA toolkit, or the nvidia-cuda-nvcc wheel");
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

  std::string problem;
  const auto source = sys::read_file(request.source, &problem);
  if (!source) throw BundleError(problem);

  result.images.resize(request.archs.size());
  std::vector<std::string> failures(request.archs.size());
  // One child at a time where forking beside another thread's allocations
  // is unsafe (the asan build, sys/child_process.hpp).
  const unsigned jobs = !sys::kForkBesideAllocatingThreadsIsSafe ? 1
                        : request.jobs                           ? request.jobs
                                                                 : binary::default_threads();
  sys::ChildLimits limits;
  limits.time_limit = kCompileLimit;
  limits.max_bytes = size_t{1} << 20;  // the answer is a line of JSON; the image goes to a file
  binary::parallel_for(request.archs.size(), jobs, [&](size_t i) {
    const std::string& arch = request.archs[i];
    const fs::path image_file = work / arch;
    const sys::ChildOutcome outcome = sys::run_in_child(
        [&] {
          nlohmann::json answer;
          try {
            answer = compile_one(request, settings, *source, arch, image_file);
          } catch (const std::exception& error) {
            answer = {{"error", error.what()}};
          }
          // NVRTC's log is not always UTF-8: replace what is not, never throw.
          const std::string text = util::json_text(answer);
          return std::vector<uint8_t>(text.begin(), text.end());
        },
        limits);
    if (const std::string failure = sys::describe_failure(outcome, limits, "compiling");
        !failure.empty()) {
      failures[i] = arch + " (" + failure + ")\n";
      return;
    }
    const auto answer = nlohmann::json::parse(outcome.output.begin(), outcome.output.end(), nullptr,
                                              /*allow_exceptions=*/false);
    if (!answer.is_object()) {
      failures[i] = arch + " (its compile sent no answer)\n";
    } else if (answer.contains("error")) {
      failures[i] = arch + ":\n" + answer.value("error", std::string()) + "\n";
    } else {
      result.images[i] = {arch, answer.value("milliseconds", 0.0), answer.value("cache", "")};
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
  sys::ProgramOptions options;
  options.timeout = kCompileLimit;
  options.merge_stderr = true;
  const sys::ProgramResult packed = sys::run_program(result.fatbinary, args, options);
  if (!packed.succeeded()) {
    throw BundleError(result.fatbinary.string() + " failed (" +
                      packed.how_it_ended(options.timeout) + "):\n" + packed.output);
  }
  result.milliseconds =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace archfit::jit
