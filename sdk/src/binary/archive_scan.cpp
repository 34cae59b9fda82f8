#include "archive_scan.hpp"

namespace archfit::binary {

namespace {

uint64_t size_or_zero(const std::filesystem::path& path) {
  std::error_code error;
  const uint64_t bytes = std::filesystem::file_size(path, error);
  return error ? 0 : bytes;  // then acquire() says why it cannot be read
}

}  // namespace

ZipReaderPool::ZipReaderPool(std::filesystem::path path, const ArchiveLimits& limits)
    : path_(std::move(path)), budget_(size_or_zero(path_), limits) {}

std::unique_ptr<ZipArchive> ZipReaderPool::acquire() {
  {
    const std::lock_guard lock(mutex_);
    if (!idle_.empty()) {
      auto archive = std::move(idle_.back());
      idle_.pop_back();
      return archive;
    }
  }
  return std::make_unique<ZipArchive>(path_);
}

void ZipReaderPool::release(std::unique_ptr<ZipArchive> archive) {
  const std::lock_guard lock(mutex_);
  idle_.push_back(std::move(archive));
}

FileScan scan_member(ZipReaderPool& pool, const ZipMember& member, const ScanOptions& options,
                     const std::function<void(uint64_t)>& on_bytes) {
  const std::string path = member_path(pool.path(), member.name);
  try {
    auto archive = pool.acquire();
    const MemberBytes bytes = archive->read(member, kMaxMemberBytes, on_bytes, &pool.budget());
    pool.release(std::move(archive));
    return scan_bytes(bytes.bytes(), path, options);
  } catch (const ZipError& error) {
    FileScan scan;
    scan.path = path;
    scan.file_size = member.size;
    scan.unreadable = true;
    scan.problems.push_back({0, error.what()});
    return scan;
  }
}

}  // namespace archfit::binary
