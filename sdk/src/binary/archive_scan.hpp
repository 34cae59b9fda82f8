#pragma once
// Scans the members of a zip archive (a Python wheel) that can hold device
// code, each decompressed into memory and handed to scan_bytes, so a wheel is
// judged as it is, without installing it.
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

#include "decompression_budget.hpp"
#include "file_names.hpp"
#include "scanner.hpp"
#include "zip_archive.hpp"

namespace archfit::binary {

// Largest uncompressed member read into memory; a bigger one is reported,
// not read (a zip bomb must not take the host process down).
inline constexpr uint64_t kMaxMemberBytes = 8ull << 30;

// libzip handles are not thread-safe: each concurrent reader of one archive
// takes its own, and gives it back for the next member. All of them draw on
// the archive's one decompression budget.
class ZipReaderPool {
 public:
  explicit ZipReaderPool(std::filesystem::path path, const ArchiveLimits& limits = {});
  const std::filesystem::path& path() const { return path_; }
  DecompressionBudget& budget() { return budget_; }
  std::unique_ptr<ZipArchive> acquire();  // throws ZipError
  void release(std::unique_ptr<ZipArchive> archive);

 private:
  std::filesystem::path path_;
  DecompressionBudget budget_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<ZipArchive>> idle_;
};

// Never throws: a member that cannot be read, or would take the archive past
// its decompression budget, comes back unreadable with a problem.
// `on_bytes` hears of the decompression as it goes.
FileScan scan_member(ZipReaderPool& pool, const ZipMember& member, const ScanOptions& options,
                     const std::function<void(uint64_t)>& on_bytes = {});

}  // namespace archfit::binary
