#include "cache_command.hpp"

#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "jit/cache/kernel_cache.hpp"
#include "jit/nvrtc/nvrtc_facts.hpp"
#include "render/cache_text.hpp"
#include "session/session.hpp"
#include "util/json_text.hpp"

namespace archfit::cli {

namespace {

using nlohmann::json;

json entries_json(const std::vector<jit::KernelCache::Entry>& entries) {
  json out = json::array();
  for (const auto& entry : entries) {
    out.push_back({{"key", entry.key},
                   {"path", entry.path.string()},
                   {"bytes", entry.bytes},
                   {"readonly", entry.readonly},
                   {"valid", entry.valid},
                   {"problem", entry.problem.empty() ? json(nullptr) : json(entry.problem)}});
  }
  return out;
}

int print_entries(const std::vector<jit::KernelCache::Entry>& entries, bool json_output,
                  const jit::KernelCache& cache) {
  size_t bad = 0;
  for (const auto& entry : entries) bad += !entry.valid;
  if (json_output) {
    std::cout << util::json_text(
                     json{{"directory",
                           cache.directory() ? json(cache.directory()->string()) : json(nullptr)},
                          {"entries", entries_json(entries)}},
                     2)
              << '\n';
  } else {
    std::cout << render::cache_entries_text(entries, cache.directory());
  }
  return bad ? 1 : 0;
}

}  // namespace

void CacheCommand::add_to(CLI::App& app) {
  cache_ = app.add_subcommand("cache",
                              "The JIT kernel cache: ARCHFIT_CACHE_DIR, else "
                              "$XDG_CACHE_HOME/archfit, else ~/.cache/archfit");
  cache_->require_subcommand(1);
  list_ = cache_->add_subcommand("list", "Every entry, oldest use first (headers checked)");
  stats_ = cache_->add_subcommand("stats", "Entries, bytes and the budget");
  verify_ = cache_->add_subcommand(
      "verify", "Check every entry's checksum; bad ones are removed (exit 1 if any)");
  clear_ = cache_->add_subcommand("clear", "Remove every entry of the primary directory");
  for (CLI::App* command : {list_, stats_, verify_, clear_})
    command->add_flag("--json", json_, "Print JSON");
}

bool CacheCommand::chosen() const { return cache_ && cache_->parsed(); }

int CacheCommand::run() const {
  session::Session session;  // its kernel cache: ARCHFIT_CACHE_DIR, …
  jit::KernelCache& cache = session.jit()->cache();
  if (list_->parsed()) return print_entries(cache.list(), json_, cache);
  if (verify_->parsed()) return print_entries(cache.verify(), json_, cache);
  if (clear_->parsed()) {
    const size_t removed = cache.clear();
    // The NVRTC discovery records go too: the next compile discovers anew.
    jit::KernelCache(jit::record_cache_options(cache)).clear();
    if (json_) {
      std::cout << util::json_text(json{{"removed", removed}}) << '\n';
    } else {
      std::cout << render::cache_cleared_text(removed, cache.directory());
    }
    return 0;
  }
  const jit::CacheStats stats = cache.stats();
  if (json_) {
    json readonly = json::array();
    for (const auto& dir : stats.readonly_directories) readonly.push_back(dir.string());
    std::cout << util::json_text(
                     json{{"directory",
                           stats.directory ? json(stats.directory->string()) : json(nullptr)},
                          {"readonly_directories", readonly},
                          {"max_bytes", stats.max_bytes},
                          {"entries", stats.entries},
                          {"bytes", stats.bytes},
                          {"readonly_entries", stats.readonly_entries},
                          {"readonly_bytes", stats.readonly_bytes}},
                     2)
              << '\n';
  } else {
    std::cout << render::cache_stats_text(stats);
  }
  return 0;
}

}  // namespace archfit::cli
