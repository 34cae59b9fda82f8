#include "archive_scan.hpp"

#include <algorithm>
#include <cctype>

namespace archfit::binary {

namespace fs = std::filesystem;

namespace {

bool ends_with_ignoring_case(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() &&
         std::equal(suffix.begin(), suffix.end(), text.end() - suffix.size(),
                    [](char a, char b) { return std::tolower(a) == std::tolower(b); });
}

}  // namespace

bool is_wheel(const fs::path& path) { return ends_with_ignoring_case(path.native(), ".whl"); }

bool may_hold_device_code(std::string_view name) {
  const std::string_view file = name.substr(name.rfind('/') + 1);
  for (const std::string_view suffix : {".so", ".cubin", ".fatbin", ".ptx"})
    if (ends_with_ignoring_case(file, suffix)) return true;
  return file.find(".so.") != std::string_view::npos;  // libnvrtc.so.12
}

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
    const MemberBytes bytes = archive->read(member, kMaxMemberBytes, on_bytes);
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
