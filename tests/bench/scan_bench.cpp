// How fast archfit reads a directory of CUDA libraries compared with reading
// every byte of them — `cat FILES > /dev/null` spawned, and the same read()
// loop in process — measured in the same run.
//
//   archfit_scan_bench [DIR] [--benchmark_* flags]
//
// DIR defaults to the toolkit's library directory. Warm figures come after a
// first pass that pulls the files into the page cache; cold figures evict
// each file from the page cache (posix_fadvise DONTNEED) before every pass.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "binary/fatbin.hpp"
#include "binary/file_scan.hpp"
#include "binary/parallel.hpp"
#include "binary/tree_scan.hpp"
#include "page_cache.hpp"

namespace fs = std::filesystem;
using namespace archfit::binary;

using archfit::bench::evict_from_page_cache;
using archfit::bench::read_every_byte;

namespace {

std::vector<fs::path> g_files;  // every regular file under DIR, symlinks collapsed
uint64_t g_bytes = 0;
fs::path g_dir;

// The real thing: `cat FILES > /dev/null`, spawned, as the issue measures it.
void run_cat(const std::vector<fs::path>& files) {
  std::vector<std::string> args{"cat"};
  for (const auto& file : files) args.push_back(file.string());
  std::vector<char*> argv;
  for (auto& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  if (posix_spawnp(&pid, "cat", &actions, nullptr, argv.data(), environ) == 0) {
    int status = 0;
    ::waitpid(pid, &status, 0);
  }
  posix_spawn_file_actions_destroy(&actions);
}

uint64_t count_images(const TreeScan& scan) {
  uint64_t images = 0;
  for (const auto& file : scan.files) images += file.images.size();
  return images;
}

// Times `work` once per iteration, after evicting the files when `cold`.
template <typename Work>
void time_passes(benchmark::State& state, bool cold, Work work) {
  for (auto _ : state) {
    if (cold) {
      state.PauseTiming();
      evict_from_page_cache(g_files);
      state.ResumeTiming();
    }
    work();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * g_bytes));
}

void BM_Cat(benchmark::State& state, bool cold) {
  time_passes(state, cold, [] { run_cat(g_files); });
}

void BM_ReadEveryByte(benchmark::State& state, bool cold) {
  time_passes(state, cold, [] { benchmark::DoNotOptimize(read_every_byte(g_files)); });
}

void BM_ScanDirectory(benchmark::State& state, bool cold) {
  uint64_t images = 0;
  time_passes(state, cold, [&] { images = count_images(scan_tree({g_dir})); });
  state.counters["images"] = static_cast<double>(images);
}

void BM_ScanOneFile(benchmark::State& state, const fs::path& file) {
  ScanOptions options;
  options.threads = default_threads();
  uint64_t images = 0, containers = 0;
  for (auto _ : state) {
    const FileScan scan = scan_file(file, options);
    images = scan.images.size();
    containers = scan.containers;
  }
  state.counters["images"] = static_cast<double>(images);
  state.counters["containers"] = static_cast<double>(containers);
}

void BM_FindContainerMagic(benchmark::State& state) {
  // 64 MiB without a container: the cost of searching .rodata-like data.
  std::vector<std::byte> data(64u << 20, std::byte{0x5a});
  const ByteReader bytes(data);
  for (auto _ : state) benchmark::DoNotOptimize(find_container_magic(bytes, 0, bytes.size()));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * data.size()));
}

// Keeps the median real time of each aggregate, to print the ratio at the end.
class MedianRecorder : public benchmark::ConsoleReporter {
 public:
  std::map<std::string, double> median_ms;
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const auto& run : runs) {
      if (run.aggregate_name == "median")
        median_ms[run.run_name.function_name] = run.GetAdjustedRealTime();
    }
    ConsoleReporter::ReportRuns(runs);
  }
};

}  // namespace

// cat and the scan, alternated pass by pass, so that a machine whose speed
// drifts (a shared VM) slows both alike; the figure is the median ratio.
void print_paired_ratio(int pairs) {
  std::vector<double> ratios, scans, cats;
  for (int i = 0; i < pairs; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    run_cat(g_files);
    const auto t1 = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(count_images(scan_tree({g_dir})));
    const auto t2 = std::chrono::steady_clock::now();
    cats.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    scans.push_back(std::chrono::duration<double, std::milli>(t2 - t1).count());
    ratios.push_back(scans.back() / cats.back());
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  const auto [low, high] = std::minmax_element(ratios.begin(), ratios.end());
  std::printf(
      "paired warm passes (%d): cat median %.1f ms, scan median %.1f ms; scan/cat median %.3f (min "
      "%.3f, max %.3f)\n",
      pairs, median(cats), median(scans), median(ratios), *low, *high);
}

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  g_dir = argc > 1 ? fs::path(argv[1]) : fs::path(ARCHFIT_CUDA_LIB_DIR);
  g_files = list_files({g_dir}).files;
  for (const auto& file : g_files) g_bytes += fs::file_size(file);
  std::printf("directory %s: %zu files, %.2f GB; %u threads\n", g_dir.c_str(), g_files.size(),
              g_bytes / 1e9, default_threads());
  if (g_files.empty()) {
    std::fprintf(stderr, "no files under %s: nothing to measure\n", g_dir.c_str());
    return 1;
  }
  // Warm the page cache from a known state: evicted, then read once in order,
  // as a first `cat` would leave it. Pages left over from earlier, scattered
  // reads (small folios) cost several times more to map than pages read
  // afresh (measured: the 4,036 headers of libcudnn_engines_precompiled's
  // .nv_fatbin walked in 11-13 ms before, 0.7 ms after), so without this the
  // warm figures depend on what the machine did before the benchmark.
  archfit::bench::warm_from_a_known_state(g_files);

  auto with_repetitions = [](benchmark::internal::Benchmark* b) {
    b->Unit(benchmark::kMillisecond)->UseRealTime()->Repetitions(7)->ReportAggregatesOnly(true);
  };
  with_repetitions(benchmark::RegisterBenchmark("warm/cat", BM_Cat, false)->Iterations(1));
  with_repetitions(
      benchmark::RegisterBenchmark("warm/read_every_byte", BM_ReadEveryByte, false)->Iterations(1));
  with_repetitions(
      benchmark::RegisterBenchmark("warm/archfit_scan_directory", BM_ScanDirectory, false));
  const fs::path cublas_lt = g_dir / "libcublasLt.so.13";
  if (fs::exists(cublas_lt)) {
    with_repetitions(
        benchmark::RegisterBenchmark("warm/archfit_scan_libcublasLt", BM_ScanOneFile, cublas_lt));
  }
  benchmark::RegisterBenchmark("find_container_magic_64MiB", BM_FindContainerMagic)
      ->Unit(benchmark::kMillisecond);
  auto cold = [](benchmark::internal::Benchmark* b) {
    b->Unit(benchmark::kMillisecond)
        ->UseRealTime()
        ->Iterations(1)
        ->Repetitions(3)
        ->ReportAggregatesOnly(true);
  };
  cold(benchmark::RegisterBenchmark("cold/cat", BM_Cat, true));
  cold(benchmark::RegisterBenchmark("cold/archfit_scan_directory", BM_ScanDirectory, true));

  MedianRecorder reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter, "^(warm|find)");
  print_paired_ratio(15);  // still warm: before the cold passes evict everything
  benchmark::RunSpecifiedBenchmarks(&reporter, "^cold");
  read_every_byte(g_files);  // leave the cache warm, as we found it

  auto ratio = [&](const char* scan, const char* cat) {
    const auto s = reporter.median_ms.find(scan), c = reporter.median_ms.find(cat);
    if (s == reporter.median_ms.end() || c == reporter.median_ms.end() || c->second == 0) return;
    std::printf("%-30s %8.1f ms vs %-22s %8.1f ms: %.3f of its time\n", scan, s->second, cat,
                c->second, s->second / c->second);
  };
  std::printf("\nmedians\n");
  ratio("warm/archfit_scan_directory", "warm/cat");
  ratio("warm/archfit_scan_directory", "warm/read_every_byte");
  ratio("cold/archfit_scan_directory", "cold/cat");
  if (auto it = reporter.median_ms.find("warm/archfit_scan_libcublasLt");
      it != reporter.median_ms.end()) {
    std::printf("%-30s %8.1f ms\n", it->first.c_str(), it->second);
  }
  benchmark::Shutdown();
  return 0;
}
