// How fast the JIT kernel cache answers (issue 4, "Speed"):
//
//   fresh_process_lookup_200KB  a new KernelCache (so a cold in-process memory, as in a new
//                               process) finds a 200 KB entry on disk, page cache warm:
//                               open, read, checksum, touch. Target: under 2 ms.
//   repeat_request              the same key asked again in the same process. Target: under 1 µs.
//   cache_key_200KB_source      what computing a key costs, for scale: a caller should
//                               compute a module's key once, not on every request.
//
//   archfit_jit_cache_bench [--benchmark_* flags]
//
// Entries live in a temporary directory that is removed at the end.
#include <benchmark/benchmark.h>
#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>

#include "jit/cache/cache_key.hpp"
#include "jit/cache/kernel_cache.hpp"

namespace fs = std::filesystem;
using namespace archfit::jit;

namespace {

constexpr size_t kImageBytes = 200 * 1024;

fs::path g_dir;
std::string g_key;

KernelCache::Options cache_options() {
  KernelCache::Options options;
  options.dir = g_dir;
  return options;
}

std::vector<std::byte> never_built() {
  throw std::logic_error("the entry should have been on disk");
}

void BM_FreshProcessLookup(benchmark::State& state) {
  for (auto _ : state) {
    KernelCache cache(cache_options());
    const auto result = cache.get_or_build(g_key, never_built);
    if (result.source != CacheSource::primary) state.SkipWithError("not served from disk");
    benchmark::DoNotOptimize(result.image->data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * kImageBytes));
}

void BM_RepeatRequest(benchmark::State& state) {
  KernelCache cache(cache_options());
  cache.get_or_build(g_key, never_built);
  for (auto _ : state) benchmark::DoNotOptimize(cache.get_or_build(g_key, never_built).image);
}

void BM_CacheKey(benchmark::State& state) {
  CacheKeyInput input{"13.0",
                      "V13.0.88 CL-36424714",
                      "sm_120",
                      {"--std=c++17", "-frandom-seed=1"},
                      "kernel.cu",
                      std::string(kImageBytes, 'x'),
                      {{"common.cuh", "#pragma once"}}};
  for (auto _ : state) benchmark::DoNotOptimize(cache_key(input));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * kImageBytes));
}

// Keeps each benchmark's median real time per iteration, in nanoseconds.
class MedianNanoseconds : public benchmark::ConsoleReporter {
 public:
  std::map<std::string, double> ns;
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const auto& run : runs) {
      if (run.aggregate_name == "median") {
        ns[run.run_name.function_name] =
            run.GetAdjustedRealTime() / benchmark::GetTimeUnitMultiplier(run.time_unit) * 1e9;
      }
    }
    ConsoleReporter::ReportRuns(runs);
  }
};

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  std::string pattern = (fs::temp_directory_path() / "archfit-cache-bench-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    std::perror("mkdtemp");
    return 1;
  }
  g_dir = fs::path(pattern) / "cache";
  g_key = cache_key({"13.0", "bench", "sm_120", {}, "bench.cu", "bench", {}});
  {
    KernelCache cache(cache_options());
    cache.get_or_build(g_key, [] { return std::vector<std::byte>(kImageBytes, std::byte{0x5a}); });
  }
  auto repeated = [](benchmark::internal::Benchmark* b) {
    b->UseRealTime()->Repetitions(5)->ReportAggregatesOnly(true);
  };
  repeated(benchmark::RegisterBenchmark("fresh_process_lookup_200KB", BM_FreshProcessLookup)
               ->Unit(benchmark::kMicrosecond));
  repeated(benchmark::RegisterBenchmark("repeat_request", BM_RepeatRequest)
               ->Unit(benchmark::kNanosecond));
  repeated(benchmark::RegisterBenchmark("cache_key_200KB_source", BM_CacheKey)
               ->Unit(benchmark::kMicrosecond));
  MedianNanoseconds reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  std::error_code ignored;
  fs::remove_all(pattern, ignored);

  auto line = [&](const char* name, const char* what, double target_ns) {
    const auto it = reporter.ns.find(name);
    if (it == reporter.ns.end()) return;
    std::printf("%-52s %10.3f µs  (target < %g µs: %s)\n", what, it->second / 1e3, target_ns / 1e3,
                it->second < target_ns ? "met" : "MISSED");
  };
  std::printf("\nmedians\n");
  line("fresh_process_lookup_200KB", "fresh-process lookup of a 200 KB entry on disk", 2e6);
  line("repeat_request", "repeat request in the same process", 1e3);
  if (auto it = reporter.ns.find("cache_key_200KB_source"); it != reporter.ns.end())
    std::printf("%-52s %10.3f µs\n", "cache_key() of a 200 KB source", it->second / 1e3);
  return 0;
}
