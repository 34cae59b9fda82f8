// Discovering and loading 20 plugins (issue 7, "Speed": under 50 ms): the
// twenty good plugins of tests/plugins (bench_1 … bench_20, each with its
// manifest), found in their folder, each loaded with Boost.DLL, negotiated,
// copied out and unloaded in a child process of its own (sys/child_process.hpp)
// — as `archfit` and a host do.
//
//   archfit_plugin_bench [--runs N]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "plugin/plugin_host.hpp"

int main(int argc, char** argv) {
  int runs = 15;
  if (argc > 2 && std::strcmp(argv[1], "--runs") == 0) runs = std::max(1, std::atoi(argv[2]));
  archfit::plugin::PluginSearch search;
  search.environment = search.install_dir = false;
  search.paths = {ARCHFIT_BENCH_PLUGIN_DIR};
  std::vector<double> times;
  size_t loaded = 0, rejected = 0;
  for (int run = 0; run < runs; ++run) {
    const auto start = std::chrono::steady_clock::now();
    const auto set = archfit::plugin::load_plugins(search);
    times.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count());
    loaded = set.loaded.size();
    rejected = set.rejected.size();
  }
  std::sort(times.begin(), times.end());
  const double median = times[times.size() / 2];
  std::printf(
      "discover and load %zu plugins (%zu rejected): median %.2f ms, best %.2f ms of %d "
      "(target < 50 ms: %s)\n",
      loaded, rejected, median, times.front(), runs, median < 50 ? "met" : "MISSED");
  return loaded == 20 ? 0 : 1;
}
