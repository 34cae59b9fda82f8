#pragma once
// Read-only access to a zip archive (a Python wheel is one) through libzip:
// its member list, and one member's bytes in memory. Nothing is extracted to
// disk, so "will this wheel work on my GPU?" needs no install and no space.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "decompression_budget.hpp"

struct zip;  // libzip's archive handle

namespace archfit::binary {

// The archive or a member could not be read; the message names which and why.
class ZipError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ZipMember {
  uint64_t index = 0;
  std::string name;   // "torch/lib/libtorch_cuda.so"
  uint64_t size = 0;  // uncompressed, as the central directory states it
  uint64_t compressed_size = 0;
  int32_t method = -1;  // ZIP_CM_STORE (0), ZIP_CM_DEFLATE (8), …; -1 unknown
};

// A member's bytes, uninitialised before the read (a 1 GB library need not be
// zero-filled first).
struct MemberBytes {
  std::unique_ptr<std::byte[]> data;
  size_t size = 0;
  std::span<const std::byte> bytes() const { return {data.get(), size}; }
};

class ZipArchive {
 public:
  // Throws ZipError when the file is missing or not a zip archive, or when
  // its members' compressed bytes cannot lie side by side in it: members
  // that overlap (a zip bomb sharing one stream among hundreds of entries)
  // or a central directory that lies.
  explicit ZipArchive(const std::filesystem::path& path);
  ~ZipArchive();
  ZipArchive(const ZipArchive&) = delete;
  ZipArchive& operator=(const ZipArchive&) = delete;

  const std::filesystem::path& path() const { return path_; }
  uint64_t file_bytes() const { return file_bytes_; }
  std::vector<ZipMember> members() const;  // directories left out
  std::optional<ZipMember> find(const std::string& name) const;

  // The whole member; ZipError when it is larger than `max_bytes` or than
  // what is left of `budget` (if given; checked before anything is
  // allocated), fails its CRC, or yields other than the bytes the directory
  // promised. `on_bytes`, if given, hears of each chunk decompressed (a 1 GB
  // member takes seconds).
  MemberBytes read(const ZipMember& member, uint64_t max_bytes,
                   const std::function<void(uint64_t)>& on_bytes = {},
                   DecompressionBudget* budget = nullptr) const;
  std::string read_text(const ZipMember& member, uint64_t max_bytes) const;

 private:
  std::filesystem::path path_;
  uint64_t file_bytes_ = 0;  // the archive's size: no member's compressed bytes exceed it
  zip* archive_ = nullptr;
};

// "wheel.whl!/torch/lib/libc10_cuda.so": how a member is named in reports, as
// jar: URLs name a class inside a jar.
std::string member_path(const std::filesystem::path& archive, const std::string& member);
inline constexpr std::string_view kMemberSeparator = "!/";

}  // namespace archfit::binary
