#pragma once
// What `archfit cache list|verify|stats|clear` tell people of the JIT kernel
// cache (jit/cache/): where it is, its entries with their age, its budget.
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "jit/cache/kernel_cache.hpp"

namespace archfit::render {

// "cache  DIR", one line per entry (✗ and why for a bad one), the count.
std::string cache_entries_text(const std::vector<jit::KernelCache::Entry>& entries,
                               const std::optional<std::filesystem::path>& directory);

// The directories, the entries and bytes against the budget.
std::string cache_stats_text(const jit::CacheStats& stats);

// "removed N entries from DIR".
std::string cache_cleared_text(size_t removed,
                               const std::optional<std::filesystem::path>& directory);

}  // namespace archfit::render
