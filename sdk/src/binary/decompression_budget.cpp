#include "decompression_budget.hpp"

#include <algorithm>

namespace archfit::binary {

uint64_t ArchiveLimits::budget_for(uint64_t archive_bytes) const {
  // The product saturates: a ratio raised to "no limit" must not wrap.
  const uint64_t by_ratio = max_ratio != 0 && archive_bytes > UINT64_MAX / max_ratio
                                ? UINT64_MAX
                                : max_ratio * archive_bytes;
  return std::min(std::max(by_ratio, floor_bytes), max_bytes);
}

DecompressionBudget::DecompressionBudget(uint64_t archive_bytes, const ArchiveLimits& limits)
    : archive_bytes_(archive_bytes), limits_(limits), limit_(limits.budget_for(archive_bytes)) {}

bool DecompressionBudget::take(uint64_t bytes) {
  uint64_t spent = spent_.load();
  do {
    if (bytes > limit_ - spent) return false;
  } while (!spent_.compare_exchange_weak(spent, spent + bytes));
  return true;
}

std::string DecompressionBudget::terms() const {
  return std::to_string(limit_) + " bytes (" + std::to_string(limits_.max_ratio) +
         " × the archive's " + std::to_string(archive_bytes_) + " bytes, at least " +
         std::to_string(limits_.floor_bytes) + ", at most " + std::to_string(limits_.max_bytes) +
         ")";
}

}  // namespace archfit::binary
