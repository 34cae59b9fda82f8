// A fresh process getting a cached ~200 KB NVRTC image through the C ABI
// (issue 4, "Speed": under 2 ms with the entry on disk, excluding the
// driver's own load).
//
// The parent compiles the module once into a private cache, then starts
// fresh child processes; each creates a context, registers the module (no
// prebuilt image that runs on the simulated sm_120 GPU, so the NVRTC path),
// and loads it: archfit finds NVRTC's discovery record and the image in the
// cache, so no NVRTC is loaded. The driver is the test-only libcuda
// (tests/fakes/), whose calls take microseconds; they are counted in, so the
// figure is an upper bound on archfit's share.
//
//   archfit_jit_fresh_process_bench [--runs N]
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "archfit/archfit.h"

extern char** environ;

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

// Eight kernels of 96 unrolled steps each: a ~210 KB sm_120 CUBIN.
std::string big_source() {
  std::string source;
  for (int k = 0; k < 8; ++k) {
    const std::string n = std::to_string(k);
    source += "extern \"C\" __global__ void step_" + n +
              "(const float* __restrict__ x, float* __restrict__ y, int n) {\n"
              "  int i = blockIdx.x * blockDim.x + threadIdx.x; float a = x[i];\n"
              "#pragma unroll\n"
              "  for (int j = 0; j < 96; ++j) a = a * x[(i + j * " +
              std::to_string(k + 1) + ") % n] + " + n + ".5f / (j + 1);\n  y[i] = a;\n}\n";
  }
  return source;
}

double us_since(Clock::time_point start) {
  return std::chrono::duration<double, std::micro>(Clock::now() - start).count();
}

// One load in this process; prints "context_us module_us load_us cache path arch".
int child() {
  const std::string source = big_source();
  const char* entries[] = {"step_0", "step_7"};
  const auto start = Clock::now();
  archfit_context_options options{};
  options.struct_size = sizeof options;
  options.libcuda = ARCHFIT_FAKE_CUDA;
  archfit_context* context = nullptr;
  if (archfit_context_create(&options, &context) != ARCHFIT_OK) {
    std::fprintf(stderr, "context: %s\n", archfit_last_error());
    return 1;
  }
  const double context_us = us_since(start);
  archfit_module_desc desc{};
  desc.struct_size = sizeof desc;
  desc.name = "bench.steps";
  desc.source = source.c_str();
  desc.source_name = "steps.cu";
  desc.entry_points = entries;
  desc.entry_point_count = 2;
  const auto module_start = Clock::now();
  archfit_module* module = nullptr;
  if (archfit_module_create(context, &desc, &module) != ARCHFIT_OK) {
    std::fprintf(stderr, "module: %s\n", archfit_last_error());
    return 1;
  }
  const double module_us = us_since(module_start);
  const auto load_start = Clock::now();
  archfit_loaded_module* loaded = nullptr;
  if (archfit_module_load(module, 0, &loaded) != ARCHFIT_OK) {
    std::fprintf(stderr, "load: %s\n", archfit_last_error());
    return 1;
  }
  const double load_us = us_since(load_start);
  archfit_load_info info{};
  info.struct_size = sizeof info;
  if (archfit_loaded_module_info(loaded, &info) != ARCHFIT_OK) return 1;
  std::printf("%.1f %.1f %.1f %s %s %s\n", context_us, module_us, load_us, info.cache, info.path,
              info.arch);
  archfit_loaded_module_destroy(loaded);
  archfit_module_destroy(module);
  archfit_context_destroy(context);
  return 0;
}

// Runs this program with --child; its output line.
std::string run_child(const char* self) {
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) return {};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 1);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
  char child_flag[] = "--child";
  char* argv[] = {const_cast<char*>(self), child_flag, nullptr};
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, self, &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(pipe_fds[1]);
  std::string out;
  char buffer[512];
  for (ssize_t n; (n = ::read(pipe_fds[0], buffer, sizeof buffer)) > 0;) out.append(buffer, n);
  ::close(pipe_fds[0]);
  int status = 0;
  if (spawned == 0) ::waitpid(pid, &status, 0);
  return spawned == 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? out : std::string();
}

double percentile(std::vector<double> values, double p) {
  std::sort(values.begin(), values.end());
  return values[static_cast<size_t>(p * static_cast<double>(values.size() - 1) + 0.5)];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--child") == 0) return child();
  int runs = 30;
  if (argc > 2 && std::strcmp(argv[1], "--runs") == 0) runs = std::max(3, std::atoi(argv[2]));

  std::string pattern = (fs::temp_directory_path() / "archfit-fresh-bench-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    std::perror("mkdtemp");
    return 1;
  }
  ::setenv("ARCHFIT_CACHE_DIR", (fs::path(pattern) / "cache").c_str(), 1);
  ::setenv("ARCHFIT_FAKE_CUDA_DEVICES", "NVIDIA GeForce RTX 5090,12.0,1", 1);
  const char* self = "/proc/self/exe";
  const std::string self_path = fs::read_symlink(self).string();

  const auto first_start = Clock::now();
  const std::string first = run_child(self_path.c_str());
  const double first_ms = us_since(first_start) / 1e3;
  if (first.empty()) {
    std::fprintf(stderr, "the first (compiling) child failed\n");
    return 1;
  }
  std::printf("first process (compiles, records NVRTC): %s   whole process %.0f ms\n",
              first.substr(0, first.find('\n')).c_str(), first_ms);

  std::vector<double> context_us, module_us, load_us, process_ms;
  for (int i = 0; i < runs; ++i) {
    const auto start = Clock::now();
    const std::string line = run_child(self_path.c_str());
    process_ms.push_back(us_since(start) / 1e3);
    double c = 0, m = 0, l = 0;
    char cache[64] = {}, path[64] = {}, arch[64] = {};
    if (std::sscanf(line.c_str(), "%lf %lf %lf %63s %63s %63s", &c, &m, &l, cache, path, arch) !=
            6 ||
        std::strcmp(cache, "primary") != 0) {
      std::fprintf(stderr, "child %d did not hit the cache: %s\n", i, line.c_str());
      return 1;
    }
    context_us.push_back(c);
    module_us.push_back(m);
    load_us.push_back(l);
  }
  std::error_code ignored;
  fs::remove_all(pattern, ignored);

  std::printf("\n%d fresh processes, each: context, module, load of a cached %s image\n", runs,
              "~210 KB sm_120");
  std::printf("%-44s %9s %9s %9s\n", "", "median", "p90", "min");
  auto row = [](const char* what, const std::vector<double>& us) {
    std::printf("%-44s %7.3f ms %7.3f ms %7.3f ms\n", what, percentile(us, 0.5) / 1e3,
                percentile(us, 0.9) / 1e3, percentile(us, 0.0) / 1e3);
  };
  row("archfit_context_create", context_us);
  row("archfit_module_create", module_us);
  row("archfit_module_load (cache hit)", load_us);
  std::vector<double> total;
  for (size_t i = 0; i < load_us.size(); ++i) total.push_back(module_us[i] + load_us[i]);
  row("module_create + module_load", total);
  std::vector<double> process_us;
  for (const double ms : process_ms) process_us.push_back(ms * 1e3);
  row("whole child process (exec to exit)", process_us);
  const double median = percentile(total, 0.5) / 1e3;
  std::printf("\nmodule_create + module_load median %.3f ms (target < 2 ms: %s)\n", median,
              median < 2.0 ? "met" : "MISSED");
  return 0;
}
