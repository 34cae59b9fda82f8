// How much archfit adds to an NVRTC compile, and how compiles for several
// archs scale over threads (issue 4, "Speed"):
//
// 1. A cold compile of kernels/rmsnorm.cu (three name expressions, for the
//    newest arch this NVRTC knows) through archfit's whole miss path — NVRTC
//    found and loaded (LazyNvrtc, its discovery record written), the key
//    computed, the compile, the entry written to an empty cache under its
//    lock — against the same compile through NVRTC's C API called directly
//    (dlopen + dlsym, the same options archfit passes). Cold: the first compile in a fresh
//    process, so each sample is a child process of this one; children of
//    the two kinds alternate. The target is within 5 %.
// 2. rmsnorm for 4 archs one after another against 2 threads sharing them,
//    in one warm process (`jit bundle` must be at least 1.7x faster on 2
//    cores); each thread's image must equal the one-thread image.
//
//   archfit_jit_nvrtc_bench [--runs N] [--library /path/libnvrtc.so]
#include <dlfcn.h>
#include <nvrtc.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "jit/cached_compile.hpp"
#include "jit/nvrtc/nvrtc.hpp"

extern char** environ;

namespace fs = std::filesystem;
using archfit::jit::CompileRequest;
using archfit::jit::Nvrtc;
using Clock = std::chrono::steady_clock;

namespace {

const fs::path kKernel = fs::path(ARCHFIT_KERNELS_DIR) / "rmsnorm.cu";
const std::vector<std::string> kExpressions = {"rmsnorm<float>", "rmsnorm<__half>",
                                               "rmsnorm<__nv_bfloat16>"};

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

CompileRequest rmsnorm(const std::string& target) {
  CompileRequest request;
  request.source = read_text(kKernel);
  request.source_name = "rmsnorm.cu";
  request.name_expressions = kExpressions;
  request.target = target;
  return request;
}

// Child: through archfit, into the empty cache `cache_dir`. Prints
// "load_ms compile_ms image_bytes": load is finding and loading NVRTC and
// recording it; compile is compile_cached (key, compile, entry written).
int child_archfit(const fs::path& library, const std::string& target, const fs::path& cache_dir) {
  const auto request = rmsnorm(target);
  const auto loading = Clock::now();
  archfit::jit::NvrtcSearch search;
  search.archfit_nvrtc = library;
  search.default_toolkit.clear();
  archfit::jit::KernelCache::Options options;
  options.dir = cache_dir;
  archfit::jit::KernelCache cache(options);
  archfit::jit::LazyNvrtc nvrtc(search);
  nvrtc.facts(cache);
  const double load = ms_since(loading);
  const auto compiling = Clock::now();
  const auto result = archfit::jit::compile_cached(nvrtc, cache, request);
  if (result.source != archfit::jit::CacheSource::built) return 4;
  std::printf("%.3f %.3f %zu\n", load, ms_since(compiling), result.image->size());
  return 0;
}

// NVRTC's C API called directly: what an op author would write without archfit.
// clang-format off
#define DIRECT_ENTRY_POINTS(X) \
  X(nvrtcCreateProgram) X(nvrtcAddNameExpression) X(nvrtcCompileProgram) X(nvrtcDestroyProgram) \
  X(nvrtcGetProgramLogSize) X(nvrtcGetProgramLog) X(nvrtcGetCUBINSize) X(nvrtcGetCUBIN) \
  X(nvrtcGetLoweredName)
// clang-format on

struct DirectNvrtc {
  void* handle = nullptr;
#define DIRECT_MEMBER(name) decltype(&name) name##_ = nullptr;
  DIRECT_ENTRY_POINTS(DIRECT_MEMBER)
#undef DIRECT_MEMBER

  explicit DirectNvrtc(const fs::path& library) {
    handle = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) std::exit(2);
#define DIRECT_RESOLVE(name) name##_ = reinterpret_cast<decltype(&name)>(::dlsym(handle, #name));
    DIRECT_ENTRY_POINTS(DIRECT_RESOLVE)
#undef DIRECT_RESOLVE
  }

  // rmsnorm with `options`, as archfit's compile does it; the CUBIN's size.
  size_t compile(const std::string& source, const std::vector<std::string>& options) const {
    std::vector<const char*> argv;
    for (const auto& option : options) argv.push_back(option.c_str());
    nvrtcProgram program = nullptr;
    nvrtcCreateProgram_(&program, source.c_str(), "rmsnorm.cu", 0, nullptr, nullptr);
    for (const auto& expression : kExpressions)
      nvrtcAddNameExpression_(program, expression.c_str());
    if (nvrtcCompileProgram_(program, static_cast<int>(argv.size()), argv.data()) != NVRTC_SUCCESS)
      std::exit(3);
    size_t log_size = 0;
    nvrtcGetProgramLogSize_(program, &log_size);
    std::string log(log_size, '\0');
    nvrtcGetProgramLog_(program, log.data());
    size_t size = 0;
    nvrtcGetCUBINSize_(program, &size);
    std::vector<char> image(size);
    nvrtcGetCUBIN_(program, image.data());
    std::vector<std::string> lowered;
    for (const auto& expression : kExpressions) {
      const char* name = nullptr;
      nvrtcGetLoweredName_(program, expression.c_str(), &name);
      lowered.emplace_back(name ? name : "");
    }
    nvrtcDestroyProgram_(&program);
    return image.size();
  }
};

// Child: NVRTC's C API directly, with the options archfit passed.
int child_direct(const fs::path& library, const std::vector<std::string>& options) {
  const std::string source = read_text(kKernel);
  const auto loading = Clock::now();
  const DirectNvrtc direct(library);
  const double load = ms_since(loading);
  const auto compiling = Clock::now();
  const size_t size = direct.compile(source, options);
  std::printf("%.3f %.3f %zu\n", load, ms_since(compiling), size);
  return 0;
}

// Child: through archfit, each target in turn (a `jit bundle` worker).
int child_targets(const fs::path& library, const std::vector<std::string>& targets) {
  const Nvrtc nvrtc = Nvrtc::load(library);
  for (const auto& target : targets) nvrtc.compile(rmsnorm(target));
  return 0;
}

// Runs the children at once; returns the wall ms and each child's CPU ms.
std::pair<double, std::vector<double>> run_together(
    const std::vector<std::vector<std::string>>& commands) {
  const auto start = Clock::now();
  std::vector<pid_t> children;
  for (const auto& command : commands) {
    std::vector<char*> argv;
    for (const auto& arg : command) argv.push_back(const_cast<char*>(arg.c_str()));
    argv.push_back(nullptr);
    pid_t pid = 0;
    if (::posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ) != 0) std::exit(2);
    children.push_back(pid);
  }
  std::vector<double> cpu;
  for (const pid_t pid : children) {
    int status = 0;
    rusage usage{};
    ::wait4(pid, &status, 0, &usage);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) std::exit(2);
    cpu.push_back((usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1e3 +
                  (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e3);
  }
  return {ms_since(start), cpu};
}

struct Sample {
  double load = 0, compile = 0;
  size_t bytes = 0;
};

Sample run_child(const std::string& command) {
  Sample sample;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe ||
      std::fscanf(pipe, "%lf %lf %zu", &sample.load, &sample.compile, &sample.bytes) != 3) {
    std::fprintf(stderr, "child failed: %s\n", command.c_str());
    std::exit(2);
  }
  ::pclose(pipe);
  return sample;
}

// CPU time of the calling thread, in ms.
double thread_cpu_ms() {
  timespec now{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return now.tv_sec * 1e3 + now.tv_nsec / 1e6;
}

// CPU time of this process, all threads, in ms.
double cpu_ms() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return (usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1e3 +
         (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e3;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

std::string figures(const std::vector<double>& values) {
  char text[96];
  std::snprintf(text, sizeof text, "%8.1f (%.1f-%.1f)", median(values),
                *std::min_element(values.begin(), values.end()),
                *std::max_element(values.begin(), values.end()));
  return text;
}

std::string quote(const std::string& text) { return "'" + text + "'"; }

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 5 && std::strcmp(argv[1], "--child-archfit") == 0)
    return child_archfit(argv[2], argv[3], argv[4]);
  if (argc >= 3 && std::strcmp(argv[1], "--child-targets") == 0)
    return child_targets(argv[2], std::vector<std::string>(argv + 3, argv + argc));
  if (argc >= 3 && std::strcmp(argv[1], "--child-direct") == 0)
    return child_direct(argv[2], std::vector<std::string>(argv + 3, argv + argc));

  int runs = 5;
  fs::path library;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--runs") == 0) runs = std::max(1, std::atoi(argv[i + 1]));
    if (std::strcmp(argv[i], "--library") == 0) library = argv[i + 1];
  }
  const Nvrtc nvrtc = library.empty() ? Nvrtc::discover(archfit::jit::nvrtc_search_over(
                                            "", archfit::env::default_cuda_library_search({})))
                                      : Nvrtc::load(library);
  std::printf("%s\n", nvrtc.describe().c_str());
  const auto& archs = nvrtc.info().supported_archs;
  const std::string target = "sm_" + std::to_string(archs.back());

  // 1. Cold compile, archfit against direct, alternating children.
  const auto reference = nvrtc.compile(rmsnorm(target));
  const std::string self = fs::read_symlink("/proc/self/exe").string();
  std::string direct = quote(self) + " --child-direct " + quote(nvrtc.info().path.string());
  for (const auto& option : reference.options) direct += " " + quote(option);
  const std::string through =
      quote(self) + " --child-archfit " + quote(nvrtc.info().path.string()) + " " + target + " ";
  std::string caches = (fs::temp_directory_path() / "archfit-nvrtc-bench-XXXXXX").string();
  if (::mkdtemp(caches.data()) == nullptr) return 2;
  std::vector<double> a_load, a_compile, a_total, d_load, d_compile, d_total;
  for (int run = 0; run < runs; ++run) {
    const Sample a = run_child(through + quote((fs::path(caches) / std::to_string(run)).string()));
    const Sample d = run_child(direct);
    if (a.bytes != reference.image.size() || d.bytes != reference.image.size())
      std::fprintf(stderr, "image sizes differ: %zu %zu %zu\n", a.bytes, d.bytes,
                   reference.image.size());
    a_load.push_back(a.load), a_compile.push_back(a.compile), a_total.push_back(a.load + a.compile);
    d_load.push_back(d.load), d_compile.push_back(d.compile), d_total.push_back(d.load + d.compile);
  }
  std::printf(
      "\nCold compile of rmsnorm.cu (3 name expressions) for %s, %zu-byte CUBIN, %d fresh "
      "processes each\n",
      target.c_str(), reference.image.size(), runs);
  std::printf("options: ");
  for (const auto& option : reference.options) std::printf("%s ", option.c_str());
  std::printf("\n%-26s %-24s %-24s %-24s\n", "ms: median (min-max)", "load", "compile",
              "load + compile");
  std::printf("%-26s %-24s %-24s %-24s\n", "archfit, the miss path", figures(a_load).c_str(),
              figures(a_compile).c_str(), figures(a_total).c_str());
  std::printf("%-26s %-24s %-24s %-24s\n", "NVRTC C API directly", figures(d_load).c_str(),
              figures(d_compile).c_str(), figures(d_total).c_str());
  std::error_code ignored;
  fs::remove_all(caches, ignored);
  // Each archfit run against the direct run right after it: drift in the
  // machine's speed over the runs cancels out.
  std::vector<double> paired;
  for (size_t i = 0; i < a_total.size(); ++i) paired.push_back(a_total[i] / d_total[i]);
  std::printf(
      "archfit / direct: compile %.3f, load + compile %.3f; median of paired runs %.3f "
      "(target <= 1.05)\n",
      median(a_compile) / median(d_compile), median(a_total) / median(d_total), median(paired));

  // 1b. Warm: both in this process, alternating.
  const DirectNvrtc in_process(nvrtc.info().path);
  const std::string source = read_text(kKernel);
  std::vector<double> warm_archfit, warm_direct;
  for (int run = 0; run < 2 * runs; ++run) {
    auto start = Clock::now();
    nvrtc.compile(rmsnorm(target));
    warm_archfit.push_back(ms_since(start));
    start = Clock::now();
    in_process.compile(source, reference.options);
    warm_direct.push_back(ms_since(start));
  }
  std::printf("warm, alternating in one process (%d each): archfit %s, direct %s ms; ratio %.3f\n",
              2 * runs, figures(warm_archfit).c_str(), figures(warm_direct).c_str(),
              median(warm_archfit) / median(warm_direct));

  // 2. Four archs: one thread against two.
  std::vector<std::string> targets;
  for (const int sm : {80, 90, 100, 120}) {
    if (std::count(archs.begin(), archs.end(), sm)) targets.push_back("sm_" + std::to_string(sm));
  }
  for (auto it = archs.rbegin(); targets.size() < 4 && it != archs.rend(); ++it) {
    const std::string name = "sm_" + std::to_string(*it);
    if (std::find(targets.begin(), targets.end(), name) == targets.end()) targets.push_back(name);
  }
  std::vector<std::vector<std::byte>> sequential_images(targets.size());
  std::vector<double> sequential, parallel, parallel_cpu, sequential_work, parallel_work,
      idle_estimate;
  bool same = true;
  for (int run = 0; run < std::max(3, runs / 2); ++run) {
    auto start = Clock::now();
    const double work = thread_cpu_ms();
    for (size_t i = 0; i < targets.size(); ++i)
      sequential_images[i] = nvrtc.compile(rmsnorm(targets[i])).image;
    sequential.push_back(ms_since(start));
    sequential_work.push_back(thread_cpu_ms() - work);

    std::vector<std::vector<std::byte>> images(targets.size());
    std::atomic<size_t> next{0};
    double thread_work[2] = {0, 0};
    const auto worker = [&](int id) {
      const double begin = thread_cpu_ms();
      for (size_t i; (i = next++) < targets.size();)
        images[i] = nvrtc.compile(rmsnorm(targets[i])).image;
      thread_work[id] = thread_cpu_ms() - begin;
    };
    start = Clock::now();
    const double cpu = cpu_ms();
    std::thread other(worker, 1);
    worker(0);
    other.join();
    parallel.push_back(ms_since(start));
    parallel_cpu.push_back((cpu_ms() - cpu) / parallel.back());
    parallel_work.push_back(thread_work[0] + thread_work[1]);
    // With a core each, the busier thread's CPU time is the wall time.
    idle_estimate.push_back(sequential_work.back() / std::max(thread_work[0], thread_work[1]));
    same = same && images == sequential_images;
  }
  std::printf("\nrmsnorm.cu for");
  for (const auto& name : targets) std::printf(" %s", name.c_str());
  std::printf(" (warm process, %u hardware threads), ms: median (min-max)\n",
              std::thread::hardware_concurrency());
  std::printf("%-26s %s\n", "one thread", figures(sequential).c_str());
  std::printf("%-26s %s, CPU time / wall time %.2f (2.00: both threads compiled all along)\n",
              "two threads", figures(parallel).c_str(), median(parallel_cpu));
  std::printf("speed-up %.2fx measured (target >= 1.7x); images identical across threads: %s\n",
              median(sequential) / median(parallel), same ? "yes" : "NO");
  std::printf("CPU time of the compiles: one thread %s, two threads together %s ms\n",
              figures(sequential_work).c_str(), figures(parallel_work).c_str());
  std::printf(
      "speed-up on 2 otherwise idle cores, from CPU times (one-thread work / busier thread's "
      "work): %.2fx\n",
      median(idle_estimate));

  // 3. The same four archs in one process against two processes (two archs each).
  const std::string path = nvrtc.info().path.string();
  std::vector<double> one_process, two_processes, two_estimate;
  for (int run = 0; run < std::max(3, runs / 2); ++run) {
    std::vector<std::string> all{self, "--child-targets", path};
    all.insert(all.end(), targets.begin(), targets.end());
    const auto [alone, alone_cpu] = run_together({all});
    std::vector<std::string> first{self, "--child-targets", path, targets[0], targets[2]};
    std::vector<std::string> second{self, "--child-targets", path, targets[1], targets[3]};
    const auto [both, both_cpu] = run_together({first, second});
    one_process.push_back(alone);
    two_processes.push_back(both);
    two_estimate.push_back(alone_cpu[0] / std::max(both_cpu[0], both_cpu[1]));
  }
  std::printf("\nThe same, fresh processes (load + compiles), ms: median (min-max)\n");
  std::printf("%-26s %s\n", "one process", figures(one_process).c_str());
  std::printf("%-26s %s\n", "two processes at once", figures(two_processes).c_str());
  std::printf("speed-up %.2fx measured; on 2 otherwise idle cores, from CPU times: %.2fx\n",
              median(one_process) / median(two_processes), median(two_estimate));

  double load[3] = {0, 0, 0};
  if (::getloadavg(load, 3) > 0) std::printf("load average during the run: %.2f\n", load[0]);
  return same ? 0 : 1;
}
