#include "session.hpp"

#include "binary/file_scan.hpp"
#include "binary/parallel.hpp"

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

std::shared_ptr<jit::JitRuntime> Session::jit() {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (!jit_) {
    jit::JitSettings settings;
    settings.libcuda = settings_.libcuda;
    jit_ = std::make_shared<jit::JitRuntime>(std::move(settings));
  }
  return jit_;
}

unsigned Session::scan_threads() const {
  return settings_.threads ? settings_.threads : binary::default_threads();
}

binary::FileScan Session::scan_file(const std::filesystem::path& path, bool deep) {
  return binary::scan_file(path, {.deep = deep, .threads = scan_threads()});
}

binary::FileScan Session::scan_bytes(std::span<const std::byte> bytes, std::string name,
                                     bool deep) {
  return binary::scan_bytes(bytes, std::move(name), {.deep = deep, .threads = scan_threads()});
}

binary::TreeScan Session::scan_tree(const std::vector<std::filesystem::path>& paths,
                                    binary::TreeScanOptions options) {
  if (options.threads == 0) options.threads = settings_.threads;
  return binary::scan_tree(paths, options);
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

plugin::PluginSet Session::plugins(const plugin::PluginSearch& search) {
  return plugin::load_plugins(search);
}

std::shared_ptr<jit::KernelModule> Session::module(jit::KernelModuleSpec spec) {
  return std::make_shared<jit::KernelModule>(std::move(spec), jit());
}

jit::CachedCompile Session::compile(const jit::CompileRequest& request) {
  return jit()->compile(request);
}

jit::BundleResult Session::bundle(const jit::BundleRequest& request) {
  return jit::build_bundle(request, jit()->settings());
}

}  // namespace archfit::session
