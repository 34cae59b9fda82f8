// A kernel-cache entry file as the cache reads it: the input is the file
// under a fixed key in a read-only store. Every read verifies magic, format,
// key, size and checksum; the only acceptable outcomes are the entry's own
// payload or a refusal. A payload accepted must be exactly the bytes after
// the header (nothing read out of bounds, nothing of another key's).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "fuzz_input.hpp"
#include "store/disk_store.hpp"
#include "store/entry_format.hpp"

namespace fs = std::filesystem;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string key = "ab" + std::string(30, '0');
  static const fs::path root = archfit::fuzz::scratch_dir() / "cache";
  static const archfit::store::DiskStore store(root, false);
  const fs::path entry = store.entry_path(key);
  fs::create_directories(entry.parent_path());
  archfit::fuzz::write_file(entry, archfit::fuzz::text(data, size));
  const auto read = store.read(key);
  if (read.status == archfit::store::DiskStore::Read::Status::ok) {
    const size_t offset = archfit::store::kEntryHeaderSize + key.size();
    // Accepted: the file must be exactly header + key + payload.
    if (size != offset + read.payload.size() ||
        (!read.payload.empty() &&
         std::memcmp(read.payload.data(), data + offset, read.payload.size()) != 0))
      std::abort();
  }
  (void)store.entries(archfit::store::EntryCheck::full);
  return 0;
}
