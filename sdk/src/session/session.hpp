#pragma once
// One owner for a run (docs/design.md, "The session"): a Session holds what
// the flows share — the settings a host gives once (threads, libcuda), the
// knowledge base (read once and kept), and the jit runtime (kernel cache,
// NVRTC, libcuda; made on first use) — and offers the flows themselves:
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
#include "plugin/plugin_host.hpp"

namespace archfit::session {

struct SessionSettings {
  unsigned threads = 0;           // 0: one per CPU
  std::filesystem::path libcuda;  // empty: the loader's libcuda.so.1
};

class Session {
 public:
  explicit Session(SessionSettings settings = {});
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  const SessionSettings& settings() const { return settings_; }

  // ---- what the flows share ----

  // The whole knowledge base of `kb_dir` (nullopt: ARCHFIT_KB_DIR, then the
  // built-in one), read on first use and kept for the session's life. Safe
  // from many threads; throws kb::KbError when it cannot be read (and reads
  // again on the next call).
  std::shared_ptr<const kb::KnowledgeBase> knowledge_base(
      const std::optional<std::filesystem::path>& kb_dir = std::nullopt);

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

  // check::run_check with the session's threads and libcuda where the
  // options leave them unset, and its knowledge base once it holds one (a
  // first check reads its own beside the scan, as it always has).
  check::CheckReport check(check::CheckOptions options);

  // diagnose::explain with the session's knowledge base (and so the check it
  // may run first): an error explained twice reads the YAML once.
  diagnose::Diagnosis explain(diagnose::ExplainRequest request);

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
  std::shared_ptr<const kb::KnowledgeBase> held(const std::filesystem::path& dir);
  unsigned scan_threads() const;

  SessionSettings settings_;
  std::mutex mutex_;
  std::map<std::filesystem::path, std::shared_ptr<const kb::KnowledgeBase>> knowledge_;
  std::shared_ptr<jit::JitRuntime> jit_;
};

}  // namespace archfit::session
