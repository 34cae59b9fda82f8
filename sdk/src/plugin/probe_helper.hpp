#pragma once
// archfit-plugin-probe: the small program a plugin is loaded in. The host
// starts it with posix_spawn (sys/run_program.hpp) — never fork(), which in
// a threaded host (Python with its threads, a check on another thread, a
// dlopen under way) copies locks other threads hold and can hang or crash the
// copy — in its own process group, with no file of the host's open beyond
// stdin, stdout and stderr.
//
// The helper, single-threaded, makes itself a child subreaper and loads the
// plugin in a forked child of its own (sys::run_in_child; on Windows, which
// has no fork, in a process of the helper's own, `archfit-plugin-probe
// --one`, in a job object with a time and a memory limit): whatever the
// plugin does — crash, hang, flood its stdout and stderr, fork a daemon that
// setsid()s away — ends there. What the plugin prints is drained, the first
// 4 KiB passed on to the host's stderr and more than 1 MiB refused; every
// process it left behind is killed and reaped before the helper answers, and
// such a plugin is rejected.
//
// One helper loads every plugin of a search, one child each, in turn: one
// program started per search, not per plugin. Its answer, on its stdout,
// for each plugin in order: one line of JSON saying how the plugin's child
// ended and how many bytes it sent, then those bytes (plugin_wire.hpp).
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "plugin_host.hpp"
#include "sys/child_process.hpp"

namespace archfit::plugin {

inline constexpr const char* kProbeHelperName = "archfit-plugin-probe";
// What a plugin's child may print before it is killed and rejected, and the
// first part of that passed on to the host's stderr.
inline constexpr size_t kPluginMessageLimit = size_t{1} << 20;
inline constexpr size_t kPluginMessagesShown = 4096;
// The helper's own time beyond the plugin's limit: its start, and the
// killing of what a plugin left running.
inline constexpr std::chrono::milliseconds kProbeHelperGrace{5'000};

// The limits the helper puts on a plugin's child.
sys::ChildLimits plugin_child_limits(std::chrono::milliseconds time_limit);

// The helper beside the running archfit: <module dir>/archfit-plugin-probe,
// else <module dir>/../libexec/archfit/archfit-plugin-probe (an install, the
// wheel), else the one this build made. Throws PluginError naming where it
// looked when none exists, or why the one found is not trusted.
std::filesystem::path find_probe_helper();

// How one plugin's child ended, what it sent (outcome.output), and how long
// it took from its fork to its end, as the helper reports them.
struct ProbeAnswer {
  sys::ChildOutcome outcome;
  double milliseconds = 0;
};

// Starts `helper` on the manifests (each already read and trust-checked)
// and returns one answer for each, in order. Throws PluginError when the
// helper cannot be started, dies, or answers in a form it never writes.
std::vector<ProbeAnswer> probe_in_helper(const std::filesystem::path& helper,
                                         const std::vector<std::filesystem::path>& manifests,
                                         uint32_t abi_min, uint32_t abi_max,
                                         std::chrono::milliseconds time_limit);

// The helper's main(): archfit-plugin-probe <abi min> <abi max> <time limit
// in ms> <manifest>…; the limit is each plugin's. Exits 0 with its answers
// on stdout, 2 for arguments it does not take (saying so on stderr).
int probe_helper_main(int argc, char** argv);

}  // namespace archfit::plugin
