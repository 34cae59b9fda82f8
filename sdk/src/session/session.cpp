#include "session.hpp"

#include "binary/file_scan.hpp"
#include "binary/parallel.hpp"
#include "environment_settings.hpp"
#include "kb/kb_error.hpp"

#include <chrono>
#include <future>

namespace archfit::session {

Session::Session(SessionSettings settings) : settings_(std::move(settings)) {}

namespace {

// Whether a source finished with an error: such a read is tried again.
bool failed(const kb::KnowledgeBaseSource& source) {
  if (source.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return false;
  try {
    source.get();
    return false;
  } catch (...) {
    return true;
  }
}

// Whether a knowledge base read with `held` serves one asked with `wanted`.
bool covers(kb::KbParts held, kb::KbParts wanted) {
  return held == kb::KbParts::everything || held == wanted;
}

}  // namespace

kb::KnowledgeBaseSource Session::knowledge_base(const std::optional<std::filesystem::path>& kb_dir,
                                                kb::KbParts parts, std::launch when) {
  // Resolving may throw kb::KbError (no such folder): the source carries it.
  std::filesystem::path dir;
  try {
    const auto& given = kb_dir ? kb_dir : settings_.kb_dir;
    dir = kb::resolve_kb_dir(given, given ? std::nullopt : read_environment_settings().kb_dir);
  } catch (const kb::KbError&) {
    return kb::failed_knowledge_base();
  }
  const std::lock_guard<std::mutex> lock(mutex_);
  const auto found = knowledge_.find(dir);
  if (found != knowledge_.end() && covers(found->second.parts, parts) &&
      !failed(found->second.source))
    return found->second.source;
  auto source = kb::load_knowledge_base_async(dir, parts, when);
  knowledge_.insert_or_assign(dir, HeldKnowledge{parts, source});
  return source;
}

check::CheckResources Session::resources(const RunChoices& choices, kb::KbParts parts,
                                         std::launch when) {
  check::CheckResources resources;
  resources.knowledge_base = knowledge_base(choices.kb_dir, parts, when);
  resources.threads = settings_.threads;
  resources.libcuda = settings_.libcuda;
  resources.on_progress = choices.on_progress;
  EnvironmentSettings environment = read_environment_settings();
  resources.archive_limits =
      settings_.archive_limits ? *settings_.archive_limits : environment.archive_limits;
  if (choices.scan_index)
    resources.scan_index_dir = settings_.cache_dir ? settings_.cache_dir : environment.cache_dir;
  resources.plugin_environment = std::move(environment.plugins);
  return resources;
}

std::shared_ptr<jit::JitRuntime> Session::jit() {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (!jit_) {
    jit::JitSettings settings = read_jit_settings();
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
  options.archive_limits = settings_.archive_limits ? *settings_.archive_limits
                                                    : read_environment_settings().archive_limits;
  return binary::scan_tree(paths, options);
}

check::CheckReport Session::check(const check::CheckRequest& request, const RunChoices& choices) {
  return check::run_check(request, resources(choices));
}

diagnose::Diagnosis Session::explain(const diagnose::ExplainRequest& request,
                                     const RunChoices& choices) {
  // With no check to run first there is nothing to read the knowledge base
  // beside: it is read in this thread, without starting one.
  return diagnose::explain(request,
                           resources(choices, kb::KbParts::everything,
                                     request.check ? std::launch::async : std::launch::deferred));
}

plugin::PluginSet Session::plugins(const plugin::PluginSearch& search) {
  return plugin::load_plugins(search, read_environment_settings().plugins);
}

std::shared_ptr<jit::KernelModule> Session::module(jit::KernelModuleSpec spec) {
  return std::make_shared<jit::KernelModule>(std::move(spec), jit());
}

jit::CachedCompile Session::compile(const jit::CompileRequest& request) {
  return jit()->compile(request);
}

jit::BundleResult Session::bundle(const jit::BundleRequest& request) {
  if (!request.fatbinary.empty()) return jit::build_bundle(request, jit()->settings());
  jit::BundleRequest with_fatbinary = request;
  with_fatbinary.fatbinary = jit::find_fatbinary(read_fatbinary_search());
  return jit::build_bundle(with_fatbinary, jit()->settings());
}

}  // namespace archfit::session
