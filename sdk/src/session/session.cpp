#include "session.hpp"

namespace archfit::session {

Session::Session(SessionSettings settings) : settings_(std::move(settings)) {}

std::shared_ptr<const kb::KnowledgeBase> Session::held(const std::filesystem::path& dir) {
  const std::lock_guard<std::mutex> lock(mutex_);
  const auto found = knowledge_.find(dir);
  return found == knowledge_.end() ? nullptr : found->second;
}

std::shared_ptr<const kb::KnowledgeBase> Session::knowledge_base(
    const std::optional<std::filesystem::path>& kb_dir) {
  const std::filesystem::path dir = kb::resolve_kb_dir(kb_dir);
  if (auto known = held(dir)) return known;
  // Read outside the lock: two first callers may both read it; one is kept.
  auto loaded = std::make_shared<const kb::KnowledgeBase>(kb::load_knowledge_base(dir));
  const std::lock_guard<std::mutex> lock(mutex_);
  return knowledge_.try_emplace(dir, std::move(loaded)).first->second;
}

check::CheckReport Session::check(check::CheckOptions options) {
  if (options.threads == 0) options.threads = settings_.threads;
  if (options.libcuda.empty()) options.libcuda = settings_.libcuda;
  std::shared_ptr<const kb::KnowledgeBase> knowledge;
  if (!options.kb) {
    try {
      knowledge = held(kb::resolve_kb_dir(options.kb_dir));
    } catch (const kb::KbError&) {
      // No such folder: the check reads it and says so in its own words.
    }
    options.kb = knowledge.get();
  }
  return check::run_check(options);
}

diagnose::Diagnosis Session::explain(diagnose::ExplainRequest request) {
  std::shared_ptr<const kb::KnowledgeBase> knowledge;
  if (!request.kb) {
    try {
      knowledge = knowledge_base(request.kb_dir);
    } catch (const kb::KbError& error) {
      throw diagnose::unreadable_knowledge_base(error);
    }
    request.kb = knowledge.get();
  }
  if (request.check) {
    if (request.check->threads == 0) request.check->threads = settings_.threads;
    if (request.check->libcuda.empty()) request.check->libcuda = settings_.libcuda;
  }
  return diagnose::explain(request);
}

}  // namespace archfit::session
