#include "cache_text.hpp"

#include <chrono>
#include <sstream>

namespace archfit::render {

namespace {

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

}  // namespace

std::string cache_entries_text(const std::vector<jit::KernelCache::Entry>& entries,
                               const std::optional<std::filesystem::path>& directory) {
  size_t bad = 0;
  for (const auto& entry : entries) bad += !entry.valid;
  std::ostringstream out;
  out << "cache  " << where(directory) << '\n';
  for (const auto& entry : entries) {
    out << (entry.valid ? "  " : "✗ ") << entry.key << "  " << entry.bytes << " bytes  "
        << "used " << age(entry.last_used) << (entry.readonly ? "  (read-only)" : "");
    if (!entry.valid) out << "  " << entry.problem;
    out << '\n';
  }
  out << entries.size() << " entries" << (bad ? ", " + std::to_string(bad) + " bad" : "") << '\n';
  return out.str();
}

std::string cache_stats_text(const jit::CacheStats& stats) {
  std::ostringstream out;
  out << "cache      " << where(stats.directory) << '\n'
      << "entries    " << stats.entries << " (" << stats.bytes << " bytes of a " << stats.max_bytes
      << "-byte budget)\n";
  for (const auto& dir : stats.readonly_directories) out << "read-only  " << dir.string() << '\n';
  if (!stats.readonly_directories.empty())
    out << "           " << stats.readonly_entries << " entries, " << stats.readonly_bytes
        << " bytes\n";
  return out.str();
}

std::string cache_cleared_text(size_t removed,
                               const std::optional<std::filesystem::path>& directory) {
  return "removed " + std::to_string(removed) + " entries from " + where(directory) + "\n";
}

}  // namespace archfit::render
