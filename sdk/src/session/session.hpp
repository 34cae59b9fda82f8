#pragma once
// One owner for a run (docs/design.md, "The session"): a Session holds what
// the flows share — the settings a host gives once (threads, libcuda, the
// knowledge base's folder), the knowledge base (read once, beside the first
// flow's scan, and kept), and the jit runtime (kernel cache, NVRTC, libcuda;
// made on first use) — supplies each check and explain its resources
// (check::CheckResources) from them, and offers the flows themselves:
// scan, check, explain, plugins, and the jit's module, compile and bundle.
// archfit_context is a Session; each `archfit` command makes one per run.
// Nothing the flows share is process-wide: two Sessions with different
// settings have their own cache, NVRTC and knowledge base.
//
// A plugin set is not kept: each plugins() call finds and probes the plugins
// as they are on disk now, and the caller owns the set it gets.
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "binary/scanner.hpp"
#include "binary/tree_scan.hpp"
#include "check/check.hpp"
#include "diagnose/explain.hpp"
#include "jit/fatbin_bundle.hpp"
#include "jit/jit_runtime.hpp"
#include "jit/kernel_module.hpp"
#include "kb/knowledge_base.hpp"
#include "kb/knowledge_base_source.hpp"
#include "plugin/plugin_host.hpp"

namespace archfit::session {

struct SessionSettings {
  unsigned threads = 0;           // 0: one per CPU
  std::filesystem::path libcuda;  // empty: the loader's libcuda.so.1
  // The knowledge base's folder (--kb); nullopt: ARCHFIT_KB_DIR, then the
  // built-in one. A flow may name another (RunChoices::kb_dir).
  std::optional<std::filesystem::path> kb_dir;
  // nullopt: from the environment at each flow (environment_settings.hpp).
  std::optional<binary::ArchiveLimits> archive_limits;
  std::optional<std::filesystem::path> cache_dir;  // where the scan index is kept
};

// How one call of a flow runs where it differs from the session's settings.
struct RunChoices {
  std::optional<std::filesystem::path> kb_dir;  // nullopt: the session's
  // Keep the scan index in the cache folder and answer unchanged files from it.
  bool scan_index = false;
  binary::ProgressCallback on_progress;
};

class Session {
 public:
  explicit Session(SessionSettings settings = {});
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  const SessionSettings& settings() const { return settings_; }

  // ---- what the flows share ----

  // The knowledge base of `kb_dir` (nullopt: the settings'), read with at
  // least `parts` on a thread of its own from the first call on, and kept for
  // the session's life: every later flow gets the same one. Safe from many
  // threads. A read that failed is tried again on the next call; get() on
  // the source throws kb::KbError.
  // `when`: std::launch::deferred reads it in the first get() instead, for a
  // flow with nothing to do meanwhile.
  kb::KnowledgeBaseSource knowledge_base(
      const std::optional<std::filesystem::path>& kb_dir = std::nullopt,
      kb::KbParts parts = kb::KbParts::everything, std::launch when = std::launch::async);

  // What a check or an explain runs with: the session's threads, libcuda and
  // knowledge base, and the archive limits and cache folder of its settings
  // or, where they leave them unset, of the environment as it is now.
  check::CheckResources resources(const RunChoices& choices = {},
                                  kb::KbParts parts = kb::KbParts::without_error_signatures,
                                  std::launch when = std::launch::async);

  // The session's kernel cache, NVRTC and libcuda, made on first use from its
  // settings (the cache and NVRTC from the environment, as documented in
  // docs/op-author-guide.md). Modules made here hold it.
  std::shared_ptr<jit::JitRuntime> jit();

  // ---- the flows ----

  // One file or buffer, with the session's threads (one per CPU when unset).
  binary::FileScan scan_file(const std::filesystem::path& path, bool deep = false);
  binary::FileScan scan_bytes(std::span<const std::byte> bytes, std::string name,
                              bool deep = false);
  // Files, folders and wheels; the session's threads where options leave 0.
  binary::TreeScan scan_tree(const std::vector<std::filesystem::path>& paths,
                             binary::TreeScanOptions options);

  // check::run_check with the session's resources; the knowledge base is
  // read beside the first check's scan and kept for every later flow.
  check::CheckReport check(const check::CheckRequest& request, const RunChoices& choices = {});

  // diagnose::explain with the same resources (its knowledge base whole,
  // with the error signatures): an error explained twice reads the YAML once.
  diagnose::Diagnosis explain(const diagnose::ExplainRequest& request,
                              const RunChoices& choices = {});

  // The plugins `search` finds, each negotiated and probed in a child first.
  plugin::PluginSet plugins(const plugin::PluginSearch& search);

  // An op's kernel module on the session's jit runtime.
  std::shared_ptr<jit::KernelModule> module(jit::KernelModuleSpec spec);
  // One compile for the request's target through the session's cache.
  jit::CachedCompile compile(const jit::CompileRequest& request);
  // Several archs into one fatbin, each compiled in a child with the
  // session's jit settings.
  jit::BundleResult bundle(const jit::BundleRequest& request);

 private:
  unsigned scan_threads() const;

  struct HeldKnowledge {
    kb::KbParts parts;
    kb::KnowledgeBaseSource source;
  };

  SessionSettings settings_;
  std::mutex mutex_;
  std::map<std::filesystem::path, HeldKnowledge> knowledge_;
  std::shared_ptr<jit::JitRuntime> jit_;
};

}  // namespace archfit::session
