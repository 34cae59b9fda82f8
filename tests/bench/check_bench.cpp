// How long `archfit check --gpu "RTX 5090"` takes on a site-packages the size
// of a CUDA PyTorch install — 200 CUDA .so files, over 1 GB — compared with
// what a user would run instead, `python3 -c "import torch;
// print(torch.cuda.get_arch_list())"` (Debian's python3-torch), measured in
// the same run. Issue 3 asks for under 300 ms warm, both cores busy, and at
// least 10x faster than the import.
//
//   archfit_check_bench [--benchmark_* flags]
//
// The environment is built in a temporary directory, removed at exit: copies
// (distinct files, not links: archfit collapses links by inode) of real NVIDIA
// libraries from ARCHFIT_CUDA_LIB_DIR laid out as the nvidia-* wheels lay them
// out, a torch whose library is an nvcc fixture without sm_120, and the other
// nvcc fixtures of ARCHFIT_FIXTURE_DIR spread over several extension
// distributions. Every distribution has a *.dist-info with METADATA and RECORD.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "binary/parallel.hpp"
#include "check/check.hpp"
#include "compat/verdict.hpp"
#include "page_cache.hpp"
#include "session/session.hpp"

namespace fs = std::filesystem;

namespace {

constexpr size_t kFiles = 200;
constexpr uint64_t kMinBytes = 1'000'000'000;
constexpr const char* kPython = "/usr/bin/python3";
constexpr const char* kTorchScript = "import torch; print(torch.cuda.get_arch_list())";

// Real libraries as pip's nvidia-* wheels install them: distribution, the
// folder under site-packages/nvidia, and the toolkit's files. About 1.3 GB.
struct NvidiaWheel {
  const char* distribution;
  const char* folder;
  std::vector<const char*> libraries;
};
const std::vector<NvidiaWheel> kNvidiaWheels = {
    {"nvidia_cublas", "cublas", {"libcublas.so.13", "libcublasLt.so.13", "libnvblas.so.13"}},
    {"nvidia_cuda_runtime", "cuda_runtime", {"libcudart.so.13"}},
    {"nvidia_cuda_cupti",
     "cuda_cupti",
     {"libcupti.so.13", "libcheckpoint.so", "libnvperf_host.so", "libnvperf_target.so",
      "libpcsamplingutil.so"}},
    {"nvidia_cuda_nvrtc", "cuda_nvrtc", {"libnvrtc.so.13", "libnvrtc-builtins.so.13.0"}},
    {"nvidia_curand", "curand", {"libcurand.so.10"}},
    {"nvidia_cusparse", "cusparse", {"libcusparse.so.12"}},
    {"nvidia_nvjitlink", "nvjitlink", {"libnvJitLink.so.13"}},
    {"nvidia_nvtx", "nvtx", {"libnvtx3interop.so.1"}},
    {"nvidia_cudnn_cu13",
     "cudnn",
     {"libcudnn.so.9", "libcudnn_graph.so.9", "libcudnn_cnn.so.9", "libcudnn_ops.so.9",
      "libcudnn_heuristic.so.9", "libcudnn_engines_runtime_compiled.so.9"}},
};
constexpr int kExtensionDistributions = 8;

// A temporary directory that is gone when the benchmark ends, however main returns.
class TempDir {
 public:
  TempDir()
      : path_(fs::temp_directory_path() / ("archfit_check_bench_" + std::to_string(::getpid()))) {
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

struct Environment {
  fs::path site;
  std::vector<fs::path> files;  // the .so files, each a distinct inode
  uint64_t bytes = 0;
  size_t nvidia_files = 0;
  size_t distributions = 0;
};

void write_file(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

// Copies `files` (site-relative path, source) and writes the dist-info as pip
// does: METADATA, INSTALLER, and a RECORD naming every installed file.
void install(Environment& env, const std::string& name, const std::string& version,
             const std::vector<std::pair<std::string, fs::path>>& files) {
  std::string record;
  for (const auto& [relative, source] : files) {
    const fs::path target = env.site / relative;
    fs::create_directories(target.parent_path());
    fs::copy_file(source, target);
    const uint64_t size = fs::file_size(target);
    env.files.push_back(target);
    env.bytes += size;
    record += relative + ",," + std::to_string(size) + "\n";
  }
  const std::string dist_info = name + "-" + version + ".dist-info";
  write_file(env.site / dist_info / "METADATA",
             "Metadata-Version: 2.1\nName: " + name + "\nVersion: " + version + "\n");
  write_file(env.site / dist_info / "INSTALLER", "pip\n");
  record += dist_info + "/METADATA,,\n" + dist_info + "/INSTALLER,,\n" + dist_info + "/RECORD,,\n";
  write_file(env.site / dist_info / "RECORD", record);
  ++env.distributions;
}

std::optional<Environment> build_environment(const fs::path& site) {
  Environment env;
  env.site = site;
  const fs::path cuda_lib = ARCHFIT_CUDA_LIB_DIR;
  for (const auto& wheel : kNvidiaWheels) {
    std::vector<std::pair<std::string, fs::path>> files;
    for (const char* library : wheel.libraries) {
      if (fs::is_regular_file(cuda_lib / library))
        files.emplace_back(std::string("nvidia/") + wheel.folder + "/lib/" + library,
                           cuda_lib / library);
    }
    if (!files.empty()) install(env, wheel.distribution, "13.0.0", files);
  }
  env.nvidia_files = env.files.size();

  std::vector<fs::path> fixtures;
  std::error_code error;
  for (fs::directory_iterator it(ARCHFIT_FIXTURE_DIR, error), end; !error && it != end;
       it.increment(error)) {
    if (it->path().extension() == ".so") fixtures.push_back(it->path());
  }
  std::sort(fixtures.begin(), fixtures.end());
  const fs::path torch_fixture = fs::path(ARCHFIT_FIXTURE_DIR) / "sm_86_sm_89.so";
  if (fixtures.empty() || !fs::exists(torch_fixture)) {
    std::fprintf(stderr, "archfit_check_bench: the nvcc fixtures are not built in %s\n",
                 ARCHFIT_FIXTURE_DIR);
    return std::nullopt;
  }
  // torch as a cu124 wheel has it on an RTX 50: SASS sm_86 and sm_89, no PTX.
  install(env, "torch", "2.5.1+cu124", {{"torch/lib/libtorch_cuda.so", torch_fixture}});
  write_file(site / "torch" / "version.py",
             "__version__ = '2.5.1+cu124'\ncuda: Optional[str] = '12.4'\nhip: Optional[str] = "
             "None\n");

  // The rest, up to 200 files: the fixtures in turn, over several extensions.
  const size_t remaining = kFiles - std::min(kFiles, env.files.size());
  const size_t per_distribution =
      (remaining + kExtensionDistributions - 1) / kExtensionDistributions;
  for (size_t d = 0, next = 0; next < remaining; ++d) {
    const std::string name = "cuda_ext_" + std::to_string(d);
    std::vector<std::pair<std::string, fs::path>> files;
    for (size_t i = 0; i < per_distribution && next < remaining; ++i, ++next) {
      const fs::path& source = fixtures[next % fixtures.size()];
      files.emplace_back(name + "/kernels_" + std::to_string(i) + "_" + source.filename().string(),
                         source);
    }
    install(env, name, "1.0", files);
  }
  return env;
}

struct Spawned {
  int exit_status = -1;  // -1: could not be started or did not exit normally
  std::string output;    // stdout and stderr, when captured
};

// Runs argv[0] (an absolute path) and waits; output goes to /dev/null unless captured.
Spawned spawn(std::vector<std::string> args, bool capture) {
  std::vector<char*> argv;
  for (auto& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  int pipe_fds[2] = {-1, -1};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (capture && ::pipe2(pipe_fds, O_CLOEXEC) == 0) {
    posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDERR_FILENO);
  } else {
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  }
  Spawned result;
  pid_t pid = 0;
  const bool started = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ) == 0;
  posix_spawn_file_actions_destroy(&actions);
  if (pipe_fds[1] >= 0) ::close(pipe_fds[1]);
  if (pipe_fds[0] >= 0) {
    char buffer[4096];
    for (ssize_t n; started && (n = ::read(pipe_fds[0], buffer, sizeof buffer)) > 0;)
      result.output.append(buffer, static_cast<size_t>(n));
    ::close(pipe_fds[0]);
  }
  int status = 0;
  if (started && ::waitpid(pid, &status, 0) == pid && WIFEXITED(status))
    result.exit_status = WEXITSTATUS(status);
  return result;
}

Spawned run_python(bool capture) { return spawn({kPython, "-c", kTorchScript}, capture); }

Environment g_env;

archfit::check::CheckReport check_once() {
  // As `archfit check --gpu "RTX 5090" --site-packages`: a Session of its
  // own, so the knowledge base is read beside the scan each time.
  archfit::check::CheckRequest request;
  request.gpus = {"RTX 5090"};
  request.site_packages = {g_env.site};
  return archfit::session::Session().check(request);
}

void BM_Check(benchmark::State& state) {
  size_t components = 0;
  for (auto _ : state) components = check_once().components.size();
  state.counters["components"] = static_cast<double>(components);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * g_env.bytes));
}

void BM_Cli(benchmark::State& state) {
  for (auto _ : state)
    spawn({ARCHFIT_CLI, "check", "--gpu", "RTX 5090", "--site-packages", g_env.site.string()},
          false);
}

void BM_ImportTorch(benchmark::State& state) {
  for (auto _ : state) run_python(false);
}

// Keeps each aggregate's median real and CPU time, for the summary.
class MedianRecorder : public benchmark::ConsoleReporter {
 public:
  std::map<std::string, std::pair<double, double>> median_ms;  // real, cpu
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const auto& run : runs) {
      if (run.aggregate_name == "median")
        median_ms[run.run_name.function_name] = {run.GetAdjustedRealTime(),
                                                 run.GetAdjustedCPUTime()};
    }
    ConsoleReporter::ReportRuns(runs);
  }
};

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

// What the check found, so that the figure is evidently about a real check.
void print_report_summary(const archfit::check::CheckReport& report) {
  std::map<std::string, int> component_verdicts, binary_verdicts;
  size_t binaries = 0;
  for (const auto& component : report.components) {
    ++component_verdicts[std::string(archfit::compat::to_string(component.verdict))];
    for (const auto& binary : component.binaries) {
      ++binary_verdicts[std::string(archfit::compat::to_string(binary.judgement.verdict))];
      ++binaries;
    }
  }
  auto counts = [](const std::map<std::string, int>& by_verdict) {
    std::string text;
    for (const auto& [verdict, count] : by_verdict)
      text += (text.empty() ? "" : ", ") + verdict + " " + std::to_string(count);
    return text;
  };
  std::printf("check on %s (%s): verdict %s\n",
              !report.devices.empty() ? report.devices[0].name.c_str() : "?",
              !report.devices.empty() ? report.devices[0].cc.to_string().c_str() : "?",
              std::string(archfit::check::to_string(report.verdict)).c_str());
  std::printf("  %zu components: %s\n", report.components.size(),
              counts(component_verdicts).c_str());
  std::printf("  %zu binaries with device code: %s\n", binaries, counts(binary_verdicts).c_str());
  std::printf("  %zu findings%s\n", report.findings.size(),
              report.findings.empty() ? "" : (": " + report.findings.front()).c_str());
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  const TempDir temp;
  {
    auto env = build_environment(temp.path() / "site-packages");
    if (!env) return 1;
    g_env = std::move(*env);
  }
  std::printf(
      "environment %s: %zu .so files (%zu NVIDIA libraries from %s, %zu nvcc fixtures) in "
      "%zu distributions, %.2f GB; %u threads\n",
      g_env.site.c_str(), g_env.files.size(), g_env.nvidia_files, ARCHFIT_CUDA_LIB_DIR,
      g_env.files.size() - g_env.nvidia_files, g_env.distributions, g_env.bytes / 1e9,
      archfit::binary::default_threads());
  if (g_env.files.size() != kFiles || g_env.bytes < kMinBytes) {
    std::printf("NOTE: issue 3 asks for %zu files and at least %.1f GB; this toolkit gives less\n",
                kFiles, kMinBytes / 1e9);
  }
  archfit::bench::warm_from_a_known_state(g_env.files);
  print_report_summary(check_once());

  const Spawned probe = run_python(true);
  const bool have_torch = probe.exit_status == 0;
  if (have_torch) {
    std::printf("%s -c \"%s\" prints: %s", kPython, kTorchScript, probe.output.c_str());
  } else {
    std::printf(
        "SKIPPED the import-torch comparison: %s cannot import torch (exit %d; install "
        "Debian's python3-torch, or run `make bench-check`):\n%s\n",
        kPython, probe.exit_status, probe.output.c_str());
  }
  std::fflush(stdout);

  // CPU is the whole process's (every thread) for the check; for the spawned
  // commands it is only this process's, which waits.
  auto repeat = [](benchmark::internal::Benchmark* b, int repetitions) {
    b->Unit(benchmark::kMillisecond)
        ->UseRealTime()
        ->Iterations(1)
        ->Repetitions(repetitions)
        ->ReportAggregatesOnly(true);
  };
  repeat(benchmark::RegisterBenchmark("warm/archfit_check", BM_Check)->MeasureProcessCPUTime(), 11);
  if (fs::exists(ARCHFIT_CLI)) repeat(benchmark::RegisterBenchmark("warm/archfit_cli", BM_Cli), 7);
  if (have_torch) repeat(benchmark::RegisterBenchmark("warm/import_torch", BM_ImportTorch), 7);
  MedianRecorder reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);

  // The check and the import alternated pass by pass, so that a machine whose
  // speed drifts (a shared VM) slows both alike; the figure is the median ratio.
  std::vector<double> checks, imports, ratios;
  for (int i = 0; have_torch && i < 7; ++i) {
    auto start = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(check_once());
    checks.push_back(ms_since(start));
    start = std::chrono::steady_clock::now();
    run_python(false);
    imports.push_back(ms_since(start));
    ratios.push_back(imports.back() / checks.back());
  }

  std::printf("\nsummary (%zu .so files, %.2f GB, warm page cache, %u threads)\n",
              g_env.files.size(), g_env.bytes / 1e9, archfit::binary::default_threads());
  const auto check = reporter.median_ms.find("warm/archfit_check");
  if (check != reporter.median_ms.end()) {
    const auto [real, cpu] = check->second;
    std::printf(
        "archfit check (run_check) median %8.1f ms (issue 3: < 300 ms: %s); process CPU "
        "%.1f ms = %.2f cores busy of %u\n",
        real, real < 300 ? "met" : "MISSED", cpu, cpu / real, archfit::binary::default_threads());
  }
  if (const auto cli = reporter.median_ms.find("warm/archfit_cli");
      cli != reporter.median_ms.end()) {
    std::printf("archfit check (CLI, spawned) median %6.1f ms\n", cli->second.first);
  }
  if (const auto torch = reporter.median_ms.find("warm/import_torch");
      torch != reporter.median_ms.end() && check != reporter.median_ms.end()) {
    const double ratio = torch->second.first / check->second.first;
    std::printf(
        "import torch (spawned) median  %8.1f ms; import torch / archfit check = %.1fx "
        "(issue 3: >= 10x: %s)\n",
        torch->second.first, ratio, ratio >= 10 ? "met" : "MISSED");
  }
  if (!ratios.empty()) {
    const auto [low, high] = std::minmax_element(ratios.begin(), ratios.end());
    std::printf(
        "paired passes (%zu): check median %.1f ms, import torch median %.1f ms; "
        "import/check median %.1fx (min %.1fx, max %.1fx)\n",
        ratios.size(), median(checks), median(imports), median(ratios), *low, *high);
  }
  benchmark::Shutdown();
  return 0;
}
