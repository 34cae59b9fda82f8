#pragma once
// Writes zip archives (wheels) at test time with libzip: members from text or
// from files on disk, deflated as pip's wheels are or stored, so a test can
// find and corrupt a member's bytes in place.
#include <zip.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace archfit::test {

struct ZipEntry {
  std::string name;
  std::string content;
  bool stored = false;  // true: no compression
};

inline std::string file_content(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

inline void write_zip(const std::filesystem::path& out, const std::vector<ZipEntry>& entries) {
  int error = 0;
  zip_t* archive = zip_open(out.string().c_str(), ZIP_CREATE | ZIP_TRUNCATE, &error);
  if (!archive) throw std::runtime_error("cannot create " + out.string());
  for (const auto& entry : entries) {
    // The buffers live in `entries` until zip_close has written them.
    zip_source_t* source =
        zip_source_buffer(archive, entry.content.data(), entry.content.size(), 0);
    const zip_int64_t index =
        source ? zip_file_add(archive, entry.name.c_str(), source, ZIP_FL_ENC_UTF_8) : -1;
    if (index < 0) {
      if (source) zip_source_free(source);
      zip_discard(archive);
      throw std::runtime_error("cannot add " + entry.name + " to " + out.string());
    }
    zip_set_file_compression(archive, static_cast<zip_uint64_t>(index),
                             entry.stored ? ZIP_CM_STORE : ZIP_CM_DEFLATE, 0);
  }
  if (zip_close(archive) != 0) {
    zip_discard(archive);
    throw std::runtime_error("cannot write " + out.string());
  }
}

// A zip bomb of the overlapping kind ("A better zip bomb", Fifield 2019):
// every name in `names` is an entry of the central directory, and every entry
// points at the first one's local header and its one deflated `content`, so
// the archive holds `content` once and promises it names.size() times.
// libzip writes the first member whole and the others empty; each empty
// one's central directory entry is then made to claim the first one's data.
inline void write_overlapping_zip(const std::filesystem::path& out,
                                  const std::vector<std::string>& names,
                                  const std::string& content) {
  std::vector<ZipEntry> entries;
  for (const auto& name : names) entries.push_back({name, entries.empty() ? content : ""});
  write_zip(out, entries);
  std::string bytes = file_content(out);
  const auto u16 = [&](size_t at) {
    return static_cast<size_t>(static_cast<uint8_t>(bytes[at])) |
           static_cast<size_t>(static_cast<uint8_t>(bytes[at + 1])) << 8;
  };
  // Central directory entry fields: flags and method at 8..11, CRC and both
  // sizes at 16..27, the local header's offset at 42..45; name, extra field
  // and comment lengths at 28, 30 and 32.
  size_t first = bytes.find("PK\x01\x02");
  if (first == std::string::npos)
    throw std::runtime_error("no central directory in " + out.string());
  for (size_t entry = first + 46 + u16(first + 28) + u16(first + 30) + u16(first + 32);
       bytes.compare(entry, 4, "PK\x01\x02") == 0;
       entry += 46 + u16(entry + 28) + u16(entry + 30) + u16(entry + 32)) {
    for (const auto [from, to] : {std::pair<size_t, size_t>{8, 12}, {16, 28}, {42, 46}})
      bytes.replace(entry + from, to - from, bytes, first + from, to - from);
  }
  std::ofstream(out, std::ios::binary | std::ios::trunc) << bytes;
}

}  // namespace archfit::test
