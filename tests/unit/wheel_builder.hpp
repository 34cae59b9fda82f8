#pragma once
// Writes zip archives (wheels) at test time with libzip: members from text or
// from files on disk, deflated as pip's wheels are or stored, so a test can
// find and corrupt a member's bytes in place.
#include <zip.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
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
  zip_t* archive = zip_open(out.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &error);
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

}  // namespace archfit::test
