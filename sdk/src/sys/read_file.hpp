#pragma once
// Reading a whole file, written once: one open, one stat of the open file,
// one read into a string of the file's size. A log can be 100 MB and a torch
// venv has 80 dist-info folders, so neither a stream copied through a
// growing buffer nor a second pass will do. POSIX: open, fstat, read;
// Windows: CreateFileW, GetFileSizeEx, ReadFile.
#include <cstdint>
#include <filesystem>
#include <limits>
#include <optional>
#include <string>

namespace archfit::sys {

// The file's bytes, at most `limit` of them. nullopt when it cannot be
// opened or read, or is larger than `limit`; `problem` (when given) then says
// why, naming the path: "cannot read /x/METADATA: Permission denied",
// "/x/RECORD is 40000000 bytes; not read (limit 16777216)".
std::optional<std::string> read_file(
    const std::filesystem::path& path, std::string* problem = nullptr,
    std::uintmax_t limit = std::numeric_limits<std::uintmax_t>::max());

}  // namespace archfit::sys
