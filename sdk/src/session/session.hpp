#pragma once
// One owner for a run (issue 25, first step): a Session holds what the flows
// share — the settings a host gives once (threads, libcuda) and the
// knowledge base, loaded once and kept — and offers the flows themselves.
// archfit_context is a Session; the `archfit` command makes one per run.
// The kernel cache and NVRTC are still process-wide (jit/); the plugin set
// is still loaded per call.
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "check/check.hpp"
#include "diagnose/explain.hpp"
#include "kb/knowledge_base.hpp"

namespace archfit::session {

struct SessionSettings {
  unsigned threads = 0;           // 0: one per CPU
  std::filesystem::path libcuda;  // empty: the loader's libcuda.so.1
};

class Session {
 public:
  explicit Session(SessionSettings settings = {});

  const SessionSettings& settings() const { return settings_; }

  // The whole knowledge base of `kb_dir` (nullopt: ARCHFIT_KB_DIR, then the
  // built-in one), read on first use and kept for the session's life. Safe
  // from many threads; throws kb::KbError when it cannot be read (and reads
  // again on the next call).
  std::shared_ptr<const kb::KnowledgeBase> knowledge_base(
      const std::optional<std::filesystem::path>& kb_dir = std::nullopt);

  // check::run_check with the session's threads and libcuda where the
  // options leave them unset, and its knowledge base once it holds one (a
  // first check reads its own beside the scan, as it always has).
  check::CheckReport check(check::CheckOptions options);

  // diagnose::explain with the session's knowledge base (and so the check it
  // may run first): an error explained twice reads the YAML once.
  diagnose::Diagnosis explain(diagnose::ExplainRequest request);

 private:
  std::shared_ptr<const kb::KnowledgeBase> held(const std::filesystem::path& dir);

  SessionSettings settings_;
  std::mutex mutex_;
  std::map<std::filesystem::path, std::shared_ptr<const kb::KnowledgeBase>> knowledge_;
};

}  // namespace archfit::session
