#include "sys/directory_listing.hpp"

#include <memory>
#include <utility>
#include <vector>

#include "sys/windows/file_identity.hpp"
#include "sys/windows/wide.hpp"

namespace archfit::sys {

using namespace archfit::sys::windows;

namespace {

// The open folder and the batch of entries last read from it.
struct Listing {
  Handle folder;
  std::vector<unsigned char> batch = std::vector<unsigned char>(64 * 1024);
  size_t at = 0;            // the next entry's offset in `batch`
  bool batch_read = false;  // `batch` holds entries not all given yet
  bool first = true;        // the next read restarts the listing
  std::string name;         // the entry last given, in UTF-8
};

DirectoryListing::Type type_of(const FILE_ID_BOTH_DIR_INFO& entry) {
  if ((entry.FileAttributes & FILE_ATTRIBUTE_REPARSE_POINT) != 0) {
    // EaSize holds the reparse tag of a reparse point in a listing.
    if (entry.EaSize == IO_REPARSE_TAG_SYMLINK || entry.EaSize == IO_REPARSE_TAG_MOUNT_POINT)
      return DirectoryListing::Type::link;
    return DirectoryListing::Type::unknown;  // a placeholder: a stat tells
  }
  if ((entry.FileAttributes & FILE_ATTRIBUTE_DIRECTORY) != 0)
    return DirectoryListing::Type::directory;
  return DirectoryListing::Type::file;
}

}  // namespace

DirectoryListing DirectoryListing::open(const std::filesystem::path& dir) {
  DirectoryListing listing;
  auto state = std::make_unique<Listing>();
  state->folder.reset(::CreateFileW(os_path(dir).c_str(),
                                    FILE_LIST_DIRECTORY | FILE_READ_ATTRIBUTES,
                                    FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, nullptr,
                                    OPEN_EXISTING, FILE_FLAG_BACKUP_SEMANTICS, nullptr));
  if (!state->folder.valid()) {
    listing.problem_ = error_text(::GetLastError());
    return listing;
  }
  FileStatus status;
  if (identify(state->folder.get(), status)) {
    if (status.type != FileType::directory) {
      listing.problem_ = "Not a directory";
      return listing;
    }
    listing.stamp_ = status.stamp;
  }
  listing.handle_ = state.release();
  return listing;
}

std::optional<DirectoryListing::Entry> DirectoryListing::next() {
  if (handle_ == nullptr) return std::nullopt;
  auto& state = *static_cast<Listing*>(handle_);
  for (;;) {
    if (!state.batch_read) {
      const auto kind = state.first ? FileIdBothDirectoryRestartInfo : FileIdBothDirectoryInfo;
      state.first = false;
      if (!::GetFileInformationByHandleEx(state.folder.get(), kind, state.batch.data(),
                                          static_cast<DWORD>(state.batch.size()))) {
        const DWORD code = ::GetLastError();
        if (code != ERROR_NO_MORE_FILES) problem_ = error_text(code);
        return std::nullopt;
      }
      state.batch_read = true;
      state.at = 0;
    }
    const auto& entry =
        *reinterpret_cast<const FILE_ID_BOTH_DIR_INFO*>(state.batch.data() + state.at);
    if (entry.NextEntryOffset == 0) {
      state.batch_read = false;
    } else {
      state.at += entry.NextEntryOffset;
    }
    const std::wstring_view name(entry.FileName, entry.FileNameLength / sizeof(wchar_t));
    if (name == L"." || name == L"..") continue;
    state.name = to_utf8(name);
    return Entry{state.name, type_of(entry), static_cast<uint64_t>(entry.FileId.QuadPart)};
  }
}

void DirectoryListing::release() {
  delete static_cast<Listing*>(handle_);
  handle_ = nullptr;
}

}  // namespace archfit::sys
