#pragma once
// The Windows side of sys/ alone: text crosses the OS boundary here, UTF-8
// inside archfit and UTF-16 in every Win32 call, and the OS's error codes
// become the words the Linux build prints for the same failure.
#ifndef NOMINMAX
#define NOMINMAX
#endif
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace archfit::sys::windows {

std::wstring to_wide(std::string_view utf8);
std::string to_utf8(std::wstring_view wide);

// The path as Win32 calls take it: absolute, with backslashes, and with the
// \\?\ prefix once it is long enough that MAX_PATH (260) would cut it.
std::wstring os_path(const std::filesystem::path& path);

// A path the OS gave back (GetFinalPathNameByHandleW, GetModuleFileNameW)
// without its \\?\ prefix, in UTF-8: "C:\ComfyUI\python_embeded\python.exe".
std::string path_from_os(std::wstring_view path);

// The file a loaded module came from (GetModuleFileNameW, however long), in
// UTF-8; "" when the OS will not say.
std::string module_file_name(HMODULE module);

// The words for a Win32 error: the C library's for those the Linux build
// meets too ("No such file or directory", "Permission denied", "File name
// too long"), so both builds refuse with the same words; the system's
// message otherwise.
std::string error_text(DWORD code);

// Whether the error means nothing is at the path.
bool is_missing(DWORD code);

// Nanoseconds since 1970 from a FILETIME (100 ns ticks since 1601).
int64_t unix_ns(const FILETIME& time);
int64_t unix_ns(const LARGE_INTEGER& time);

// A handle closed when it goes out of scope.
class Handle {
 public:
  Handle() = default;
  explicit Handle(HANDLE handle) : handle_(handle) {}
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle(Handle&& other) noexcept : handle_(other.release()) {}
  Handle& operator=(Handle&& other) noexcept {
    if (this != &other) reset(other.release());
    return *this;
  }
  ~Handle() { reset(); }
  HANDLE get() const { return handle_; }
  bool valid() const { return handle_ != nullptr && handle_ != INVALID_HANDLE_VALUE; }
  HANDLE release() {
    HANDLE handle = handle_;
    handle_ = INVALID_HANDLE_VALUE;
    return handle;
  }
  void reset(HANDLE handle = INVALID_HANDLE_VALUE) {
    if (valid()) ::CloseHandle(handle_);
    handle_ = handle;
  }

 private:
  HANDLE handle_ = INVALID_HANDLE_VALUE;
};

}  // namespace archfit::sys::windows
