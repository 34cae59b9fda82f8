// Discovering and loading 20 plugins (issue 7, "Speed": under 50 ms): the
// twenty good plugins of tests/plugins (bench_1 … bench_20, each with its
// manifest), found in their folder and loaded as `archfit` and a host load
// them: archfit-plugin-probe started once (posix_spawn), a child of it per
// plugin loading with Boost.DLL, negotiating, copying out (issue 34).
// Beside it, the way it was done before issue 34, for the figure's sake: a
// fork of this process per plugin (sys::run_in_child), same loading code.
//
//   archfit_plugin_bench [--runs N]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

#include "plugin/plugin_host.hpp"
#include "plugin/plugin_load.hpp"
#include "plugin/plugin_wire.hpp"
#include "sys/child_process.hpp"

namespace {

struct Figures {
  double median = 0;
  double best = 0;
};

Figures time_runs(int runs, const std::function<void()>& once) {
  std::vector<double> times;
  for (int run = 0; run < runs; ++run) {
    const auto start = std::chrono::steady_clock::now();
    once();
    times.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count());
  }
  std::sort(times.begin(), times.end());
  return {times[times.size() / 2], times.front()};
}

}  // namespace

int main(int argc, char** argv) {
  using namespace archfit::plugin;
  int runs = 15;
  if (argc > 2 && std::strcmp(argv[1], "--runs") == 0) runs = std::max(1, std::atoi(argv[2]));
  PluginSearch search;
  search.environment = search.install_dir = false;
  search.paths = {ARCHFIT_BENCH_PLUGIN_DIR};
  size_t loaded = 0, rejected = 0;
  const Figures helper = time_runs(runs, [&] {
    const auto set = load_plugins(search);
    loaded = set.loaded.size();
    rejected = set.rejected.size();
  });
  std::printf(
      "discover and load %zu plugins in archfit-plugin-probe (%zu rejected): median %.2f ms, "
      "best %.2f ms of %d (target < 50 ms: %s)\n",
      loaded, rejected, helper.median, helper.best, runs, helper.median < 50 ? "met" : "MISSED");

  // Before issue 34: each plugin in a fork of this process.
  const auto manifests = find_manifests(ARCHFIT_BENCH_PLUGIN_DIR);
  size_t forked_loaded = 0;
  const Figures forked = time_runs(runs, [&] {
    forked_loaded = 0;
    for (const auto& path : manifests) {
      const Manifest manifest = read_manifest(path);
      archfit::sys::ChildLimits limits;
      const auto outcome = archfit::sys::run_in_child(
          [&] { return encode_loaded(load_in_this_process(manifest, 1, 1)); }, limits);
      if (outcome.ending == archfit::sys::ChildOutcome::Ending::exited &&
          outcome.exit_status == 0 && !decode_answer(outcome.output, manifest).name.empty())
        ++forked_loaded;
    }
  });
  std::printf(
      "the same %zu plugins, each in a fork of this process (before issue 34): median %.2f ms, "
      "best %.2f ms of %d\n",
      forked_loaded, forked.median, forked.best, runs);
  return loaded == 20 ? 0 : 1;
}
