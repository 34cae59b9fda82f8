#pragma once
// What a check is asked (CheckRequest: which GPUs, which driver, which
// environment) apart from what it runs with (CheckResources: the knowledge
// base, threads, libcuda, the scan index's folder, archive limits, a progress
// line). A Session supplies the resources from its settings
// (session/session.hpp); a request says nothing about how to run.
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "binary/decompression_budget.hpp"
#include "binary/scan_progress.hpp"
#include "kb/knowledge_base_source.hpp"
#include "plugin/plugin_host.hpp"
#include "report.hpp"
#include "sys/library_loading.hpp"

namespace archfit::check {

// archfit itself could not run the check (bad option, unreadable knowledge
// base); the message says what to change. Exit code 2 in the CLI.
class CheckError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct CheckRequest {
  // "RTX 5090", "sm_120", "12.0": simulate these devices instead of the real
  // ones; several for a machine with more than one GPU.
  std::vector<std::string> gpus;
  std::optional<std::string> driver;                 // "570.86": simulate this driver release
  std::vector<std::filesystem::path> site_packages;  // --site-packages / --venv
  std::optional<std::filesystem::path> custom_nodes;
  std::vector<std::filesystem::path> wheels;  // --wheel: judged as they are, not installed
  std::vector<std::filesystem::path> paths;   // further files or trees to judge
  // --confirm: ask the real driver to load one container of each judged
  // binary on each real GPU, and say where it disagrees with the verdict.
  bool confirm = false;
  // Given nothing to scan, report the devices and driver alone (verdict
  // unknown) instead of failing: `archfit explain --gpu sm_120` weighs an
  // error against a GPU without an environment.
  bool probe_only_when_nothing_to_scan = false;
  // Load the plugins this search finds and add their probes' facts to the
  // report (ProbeResult); nullopt: load none.
  std::optional<plugin::PluginSearch> plugins;
  // How the environment was chosen when the user named none (reported as is).
  std::optional<EnvironmentChoice> environment;
};

struct CheckResources {
  // Required: the knowledge base, possibly still loading; the check reads
  // the environment's metadata and walks its tree before it waits for it.
  kb::KnowledgeBaseSource knowledge_base;
  unsigned threads = 0;           // 0: one per CPU
  std::filesystem::path libcuda;  // empty: the loader's libcuda.so.1
  // A folder to keep the scan index in (scan_index.hpp), so that an
  // unchanged file is not read again; nullopt reads every file.
  std::optional<std::filesystem::path> scan_index_dir;
  // How much each --wheel's members may decompress to, in all; a member past
  // it is not read, and the verdict is then unknown, never fits.
  binary::ArchiveLimits archive_limits;
  binary::ProgressCallback on_progress;  // the scan's progress, for a progress line
  // What the environment adds to the request's plugin search, if it has one.
  plugin::PluginEnvironment plugin_environment;
  // Where the loader looks beyond the environment for a library a binary
  // links (check/library_needs.hpp); nullopt: this machine's
  // (sys::loader_search, ld.so.conf's folders and LD_LIBRARY_PATH).
  std::optional<sys::LoaderSearch> loader_search;
};

// The knowledge base a check reads, waited for; CheckError when it could
// not be read.
const kb::KnowledgeBase& knowledge_base_of(const CheckResources& resources);

}  // namespace archfit::check
