#include "sys/file_io.hpp"

#include <atomic>
#include <utility>

#include "sys/utf8_path.hpp"
#include "sys/windows/file_identity.hpp"
#include "sys/windows/wide.hpp"

namespace archfit::sys {

namespace fs = std::filesystem;
using namespace archfit::sys::windows;

namespace {

std::string error_words(const std::string& what, const fs::path& path, DWORD code) {
  return what + " " + utf8_of(path) + ": " + error_text(code);
}

bool write_all(HANDLE file, std::span<const std::byte> bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    DWORD wrote = 0;
    const DWORD want = static_cast<DWORD>(std::min<size_t>(bytes.size() - done, 1u << 30));
    if (!::WriteFile(file, bytes.data() + done, want, &wrote, nullptr) || wrote == 0) return false;
    done += wrote;
  }
  return true;
}

// A new file: CREATE_NEW refuses any file or link already at the path, so
// nothing planted there is written through.
Handle create_new(const fs::path& path) {
  return Handle(::CreateFileW(os_path(path).c_str(), GENERIC_WRITE, 0, nullptr, CREATE_NEW,
                              FILE_ATTRIBUTE_NORMAL, nullptr));
}

bool replace(const fs::path& from, const fs::path& to, DWORD extra_flags = 0) {
  return ::MoveFileExW(os_path(from).c_str(), os_path(to).c_str(),
                       MOVEFILE_REPLACE_EXISTING | extra_flags) != 0;
}

}  // namespace

fs::path unique_temporary_path(const fs::path& dir, std::string_view stem) {
  static std::atomic<uint64_t> serial{0};
  return dir / (std::string(stem) + "." + std::to_string(::GetCurrentProcessId()) + "." +
                std::to_string(serial++) + ".tmp");
}

std::string write_then_replace(const fs::path& temp, const fs::path& target,
                               std::initializer_list<std::span<const std::byte>> parts) {
  Handle file = create_new(temp);
  if (!file.valid()) return error_words("cannot create", temp, ::GetLastError());
  bool ok = true;
  for (const auto& part : parts) {
    if (!(ok = write_all(file.get(), part))) break;
  }
  DWORD cause = ok ? ERROR_SUCCESS : ::GetLastError();
  file.reset();
  if (ok && !replace(temp, target)) {
    ok = false;
    cause = ::GetLastError();
  }
  if (ok) return "";
  ::DeleteFileW(os_path(temp).c_str());
  return error_words("cannot write", target, cause);
}

std::string replace_whole_file(const fs::path& target, std::string_view text) {
  const fs::path folder = target.has_parent_path() ? target.parent_path() : fs::path(".");
  // Appended piece by piece: GCC 12 warns falsely (-Wrestrict) on "." + a temporary.
  std::string name = ".";
  name += utf8_of(target.filename());
  name += ".tmp-" + std::to_string(::GetCurrentProcessId());
  const fs::path temporary = folder / path_of_utf8(name);
  ::DeleteFileW(os_path(temporary).c_str());  // one left by a run that was killed
  Handle file = create_new(temporary);
  if (!file.valid()) return error_words("cannot create", temporary, ::GetLastError());
  if (!write_all(file.get(), std::as_bytes(std::span(text.data(), text.size()))) ||
      !::FlushFileBuffers(file.get())) {
    const DWORD cause = ::GetLastError();
    file.reset();
    ::DeleteFileW(os_path(temporary).c_str());
    return error_words("cannot write", temporary, cause);
  }
  file.reset();
  if (!replace(temporary, target, MOVEFILE_WRITE_THROUGH)) {
    const DWORD cause = ::GetLastError();
    ::DeleteFileW(os_path(temporary).c_str());
    return error_words("cannot replace", target, cause);
  }
  return "";
}

// Windows sets no limit on the size of a file a process writes.
std::optional<uint64_t> file_size_limit() { return std::nullopt; }

NoFollowFile NoFollowFile::open(const fs::path& path) {
  NoFollowFile file;
  // FILE_FLAG_OPEN_REPARSE_POINT opens a link itself, which is then
  // refused; FILE_FLAG_BACKUP_SEMANTICS lets a folder open, to be called
  // not regular.
  Handle handle(::CreateFileW(
      os_path(path).c_str(), GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
      nullptr, OPEN_EXISTING, FILE_FLAG_OPEN_REPARSE_POINT | FILE_FLAG_BACKUP_SEMANTICS, nullptr));
  if (!handle.valid()) {
    const DWORD code = ::GetLastError();
    if (is_missing(code)) {
      file.kind_ = Kind::missing;
    } else {
      file.problem_ = error_text(code);
    }
    return file;
  }
  FileStatus status;
  if (!identify(handle.get(), status)) {
    file.problem_ = error_text(::GetLastError());
    return file;
  }
  file.stamp_ = status.stamp;
  if (status.type == FileType::link) {
    file.kind_ = Kind::link;
    return file;
  }
  if (status.type != FileType::file) {
    file.kind_ = Kind::not_regular;
    return file;
  }
  file.kind_ = Kind::opened;
  file.handle_ = reinterpret_cast<intptr_t>(handle.release());
  return file;
}

void NoFollowFile::release() {
  if (handle_ != -1) ::CloseHandle(reinterpret_cast<HANDLE>(handle_));
  handle_ = -1;
}

bool NoFollowFile::read_at(std::span<std::byte> into, uint64_t offset, std::string* problem) const {
  size_t done = 0;
  while (done < into.size()) {
    OVERLAPPED at{};
    at.Offset = static_cast<DWORD>(offset + done);
    at.OffsetHigh = static_cast<DWORD>((offset + done) >> 32);
    DWORD got = 0;
    const DWORD want = static_cast<DWORD>(std::min<size_t>(into.size() - done, 1u << 30));
    if (!::ReadFile(reinterpret_cast<HANDLE>(handle_), into.data() + done, want, &got, &at) ||
        got == 0) {
      if (problem) *problem = got == 0 ? "the file ends before" : error_text(::GetLastError());
      return false;
    }
    done += got;
  }
  return true;
}

void NoFollowFile::touch() const {
  if (handle_ == -1) return;
  // The read handle may not set times: a second handle to the same file
  // that may (none in a read-only cache, which is fine: best effort).
  Handle writable(::ReOpenFile(reinterpret_cast<HANDLE>(handle_), FILE_WRITE_ATTRIBUTES,
                               FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, 0));
  if (!writable.valid()) return;
  FILETIME now{};
  ::GetSystemTimeAsFileTime(&now);
  ::SetFileTime(writable.get(), nullptr, nullptr, &now);
}

}  // namespace archfit::sys
