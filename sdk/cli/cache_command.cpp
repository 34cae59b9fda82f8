#include "cache_command.hpp"

#include <chrono>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "jit/cache/kernel_cache.hpp"
#include "jit/nvrtc/nvrtc_facts.hpp"
#include "session/session.hpp"

namespace archfit::cli {

namespace {

using nlohmann::json;

std::string where(const std::optional<std::filesystem::path>& directory) {
  return directory ? directory->string() : std::string("memory only (no usable directory)");
}

// Seconds since the entry was last used, for "used 3 min ago".
std::string age(std::filesystem::file_time_type last_used) {
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(
                           std::filesystem::file_time_type::clock::now() - last_used)
                           .count();
  if (seconds < 120) return std::to_string(seconds) + " s ago";
  if (seconds < 7200) return std::to_string(seconds / 60) + " min ago";
  if (seconds < 172800) return std::to_string(seconds / 3600) + " h ago";
  return std::to_string(seconds / 86400) + " days ago";
}

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
    std::cout << json{{"directory",
                       cache.directory() ? json(cache.directory()->string()) : json(nullptr)},
                      {"entries", entries_json(entries)}}
                     .dump(2)
              << '\n';
  } else {
    std::cout << "cache  " << where(cache.directory()) << '\n';
    for (const auto& entry : entries) {
      std::cout << (entry.valid ? "  " : "✗ ") << entry.key << "  " << entry.bytes << " bytes  "
                << "used " << age(entry.last_used) << (entry.readonly ? "  (read-only)" : "");
      if (!entry.valid) std::cout << "  " << entry.problem;
      std::cout << '\n';
    }
    std::cout << entries.size() << " entries" << (bad ? ", " + std::to_string(bad) + " bad" : "")
              << '\n';
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
      std::cout << json{{"removed", removed}}.dump() << '\n';
    } else {
      std::cout << "removed " << removed << " entries from " << where(cache.directory()) << '\n';
    }
    return 0;
  }
  const jit::CacheStats stats = cache.stats();
  if (json_) {
    json readonly = json::array();
    for (const auto& dir : stats.readonly_directories) readonly.push_back(dir.string());
    std::cout << json{{"directory",
                       stats.directory ? json(stats.directory->string()) : json(nullptr)},
                      {"readonly_directories", readonly},
                      {"max_bytes", stats.max_bytes},
                      {"entries", stats.entries},
                      {"bytes", stats.bytes},
                      {"readonly_entries", stats.readonly_entries},
                      {"readonly_bytes", stats.readonly_bytes}}
                     .dump(2)
              << '\n';
  } else {
    std::cout << "cache      " << where(stats.directory) << '\n'
              << "entries    " << stats.entries << " (" << stats.bytes << " bytes of a "
              << stats.max_bytes << "-byte budget)\n";
    for (const auto& dir : stats.readonly_directories)
      std::cout << "read-only  " << dir.string() << '\n';
    if (!stats.readonly_directories.empty())
      std::cout << "           " << stats.readonly_entries << " entries, " << stats.readonly_bytes
                << " bytes\n";
  }
  return 0;
}

}  // namespace archfit::cli
