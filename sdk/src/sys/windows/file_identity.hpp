#pragma once
// What an open handle is, for the Windows side of sys/ alone: its type and
// stamp (GetFileInformationByHandle, GetFileInformationByHandleEx) and the
// path the OS resolved it to (GetFinalPathNameByHandleW).
#include <filesystem>
#include <string>

#include "sys/file_status.hpp"
#include "sys/windows/wide.hpp"

namespace archfit::sys::windows {

// Fills `status` from the open handle; false when the OS will not say
// (GetLastError() tells why). A reparse point is a link only when it is a
// symbolic link or a junction: other tags (OneDrive's placeholders,
// deduplicated files) are the file or folder they stand for.
bool identify(HANDLE file, FileStatus& status);

// The path the OS resolved the open handle to, every link followed, in
// UTF-8 without the \\?\ prefix; "" when it gives none.
std::string final_path(HANDLE file);

}  // namespace archfit::sys::windows
