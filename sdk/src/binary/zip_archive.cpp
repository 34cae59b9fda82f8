#include "zip_archive.hpp"

#include <zip.h>

#include <algorithm>
#include <cstdint>

#include "sys/utf8_path.hpp"

namespace archfit::binary {

namespace fs = std::filesystem;

namespace {

std::string open_error_text(int code) {
  zip_error_t error;
  zip_error_init_with_code(&error, code);
  std::string text = zip_error_strerror(&error);
  zip_error_fini(&error);
  return text;
}

// The most bytes `member` can truly decompress to: its compressed size for a
// stored member, 1032 bytes per compressed byte for deflate (its greatest
// ratio); nullopt for other methods, whose ratios have no useful bound. A
// central directory that claims more is lying (or corrupt) and must not
// decide an allocation. The caller has checked that the compressed bytes
// fit in the archive, so the product cannot overflow.
std::optional<uint64_t> backed_size(const ZipMember& member) {
  constexpr uint64_t kDeflateMaxRatio = 1032;
  switch (member.method) {
    case ZIP_CM_STORE:
      return member.compressed_size;
    case ZIP_CM_DEFLATE:
      return member.compressed_size * kDeflateMaxRatio + 64;
    default:
      return std::nullopt;
  }
}

// What a zip needs around each member's compressed bytes, at the least: its
// local header (30 bytes before the name) and its central directory entry
// (46), and once the end of central directory record (22).
constexpr uint64_t kLocalHeaderBytes = 30;
constexpr uint64_t kCentralEntryBytes = 46;
constexpr uint64_t kEndRecordBytes = 22;

uint64_t saturating_add(uint64_t a, uint64_t b) { return b > UINT64_MAX - a ? UINT64_MAX : a + b; }

// Members that share no bytes fit in the file one after the other. libzip
// 1.7 does not say where a member's data starts, so their sum is the test:
// a bomb whose hundreds of entries point at one deflate stream claims that
// stream once per entry, and a directory that lies about a compressed size
// claims bytes the file does not have. Either way nothing is read.
void require_disjoint_members(zip_t* archive, uint64_t file_bytes, const fs::path& path) {
  const zip_int64_t count = zip_get_num_entries(archive, 0);
  uint64_t compressed = 0;
  uint64_t needed = kEndRecordBytes;
  for (zip_int64_t i = 0; i < count; ++i) {
    zip_stat_t stat;
    zip_stat_init(&stat);
    if (zip_stat_index(archive, static_cast<zip_uint64_t>(i), 0, &stat) != 0) continue;
    const uint64_t member = (stat.valid & ZIP_STAT_COMP_SIZE) ? stat.comp_size : 0;
    compressed = saturating_add(compressed, member);
    needed = saturating_add(needed, saturating_add(member, kLocalHeaderBytes + kCentralEntryBytes));
  }
  if (needed <= file_bytes) return;
  throw ZipError(path.string() + ": not read: its " + std::to_string(count) + " members claim " +
                 std::to_string(compressed) +
                 " compressed bytes, which with their headers cannot lie side by side in its " +
                 std::to_string(file_bytes) +
                 " bytes; the members overlap (a zip bomb) or the central directory is corrupt");
}

// Closes a member on every path out of read().
struct MemberFile {
  zip_file_t* file;
  ~MemberFile() {
    if (file) zip_fclose(file);
  }
};

}  // namespace

ZipArchive::ZipArchive(const fs::path& path) : path_(path) {
  std::error_code size_error;
  file_bytes_ = fs::file_size(path, size_error);
  if (size_error) file_bytes_ = 0;
  int code = 0;
  // libzip takes UTF-8 on Windows too, and converts it to UTF-16 itself.
  archive_ = zip_open(sys::utf8_of(path).c_str(), ZIP_RDONLY, &code);
  if (!archive_) {
    throw ZipError(path.string() + ": not a readable zip archive (" + open_error_text(code) + ")");
  }
  try {
    require_disjoint_members(archive_, file_bytes_, path);
  } catch (...) {
    zip_discard(archive_);  // the destructor does not run for a constructor that throws
    throw;
  }
}

ZipArchive::~ZipArchive() {
  if (archive_) zip_discard(archive_);  // read-only: nothing to write back
}

std::vector<ZipMember> ZipArchive::members() const {
  std::vector<ZipMember> out;
  const zip_int64_t count = zip_get_num_entries(archive_, 0);
  for (zip_int64_t i = 0; i < count; ++i) {
    zip_stat_t stat;
    zip_stat_init(&stat);
    if (zip_stat_index(archive_, static_cast<zip_uint64_t>(i), 0, &stat) != 0 || !stat.name)
      continue;
    std::string name = stat.name;
    if (name.empty() || name.back() == '/') continue;
    out.push_back(
        {static_cast<uint64_t>(i), std::move(name), (stat.valid & ZIP_STAT_SIZE) ? stat.size : 0,
         (stat.valid & ZIP_STAT_COMP_SIZE) ? stat.comp_size : 0,
         (stat.valid & ZIP_STAT_COMP_METHOD) ? static_cast<int32_t>(stat.comp_method) : -1});
  }
  return out;
}

std::optional<ZipMember> ZipArchive::find(const std::string& name) const {
  const zip_int64_t index = zip_name_locate(archive_, name.c_str(), 0);
  if (index < 0) return std::nullopt;
  zip_stat_t stat;
  zip_stat_init(&stat);
  if (zip_stat_index(archive_, static_cast<zip_uint64_t>(index), 0, &stat) != 0)
    return std::nullopt;
  return ZipMember{
      static_cast<uint64_t>(index), name, stat.size, stat.comp_size,
      (stat.valid & ZIP_STAT_COMP_METHOD) ? static_cast<int32_t>(stat.comp_method) : -1};
}

MemberBytes ZipArchive::read(const ZipMember& member, uint64_t max_bytes,
                             const std::function<void(uint64_t)>& on_bytes,
                             DecompressionBudget* budget) const {
  const std::string where = member_path(path_, member.name);
  if (member.size > max_bytes) {
    throw ZipError(where + ": " + std::to_string(member.size) +
                   " bytes uncompressed, over the limit of " + std::to_string(max_bytes) +
                   "; not read");
  }
  // Every size read from the archive is checked before it sizes an
  // allocation (issue 8; both found by fuzz_wheel): compressed bytes cannot
  // exceed the archive, and a member cannot claim more than its compressed
  // bytes can hold.
  if (member.compressed_size > file_bytes_) {
    throw ZipError(where + ": claims " + std::to_string(member.compressed_size) +
                   " compressed bytes in an archive of " + std::to_string(file_bytes_) +
                   "; the archive is corrupt");
  }
  const std::optional<uint64_t> backed = backed_size(member);
  if (backed && member.size > *backed) {
    throw ZipError(where + ": claims " + std::to_string(member.size) + " bytes uncompressed from " +
                   std::to_string(member.compressed_size) +
                   " compressed, more than they can hold; the archive is corrupt");
  }
  // The whole size is taken from the archive's budget before a byte is
  // allocated or decompressed; the loop below never reads past it.
  if (budget && !budget->take(member.size)) {
    throw ZipError(where + ": not read: its " + std::to_string(member.size) +
                   " bytes uncompressed would take the archive past its decompression budget of " +
                   budget->terms() + ", of which " + std::to_string(budget->left()) + " are left");
  }
  MemberFile file{zip_fopen_index(archive_, member.index, 0)};
  if (!file.file) {
    throw ZipError(where + ": cannot open member (" + zip_strerror(archive_) + ")");
  }
  MemberBytes out;
  out.size = static_cast<size_t>(member.size);
  // A size that is backed is allocated at once (a 1 GB library in one
  // piece); one that is not (bzip2, xz, zstd) grows with what arrives.
  constexpr size_t kChunk = 32u << 20;
  size_t capacity = backed ? out.size : std::min(out.size, kChunk);
  out.data = std::make_unique_for_overwrite<std::byte[]>(capacity);
  size_t done = 0;
  while (done < out.size) {
    if (done == capacity) {
      const size_t grown = std::min(out.size, capacity * 2);
      auto bigger = std::make_unique_for_overwrite<std::byte[]>(grown);
      std::copy(out.data.get(), out.data.get() + done, bigger.get());
      out.data = std::move(bigger);
      capacity = grown;
    }
    const zip_int64_t got =
        zip_fread(file.file, out.data.get() + done, std::min(kChunk, capacity - done));
    if (got < 0) {
      throw ZipError(where + ": cannot decompress (" + zip_file_strerror(file.file) + ")");
    }
    if (got == 0) break;
    done += static_cast<size_t>(got);
    if (on_bytes) on_bytes(static_cast<uint64_t>(got));
  }
  if (done != out.size) {
    throw ZipError(where + ": ended after " + std::to_string(done) + " of " +
                   std::to_string(out.size) + " bytes");
  }
  // libzip verifies the CRC only once the end of the data has been read;
  // a stream that goes on past the promised size is as corrupt.
  std::byte probe;
  const zip_int64_t beyond = zip_fread(file.file, &probe, 1);
  if (beyond < 0) {
    throw ZipError(where + ": " + zip_file_strerror(file.file));
  }
  if (beyond > 0) {
    throw ZipError(where + ": decompresses to more than the " + std::to_string(out.size) +
                   " bytes its directory entry promises; the archive is corrupt");
  }
  return out;
}

std::string ZipArchive::read_text(const ZipMember& member, uint64_t max_bytes) const {
  const MemberBytes bytes = read(member, max_bytes);
  return std::string(reinterpret_cast<const char*>(bytes.data.get()), bytes.size);
}

std::string member_path(const fs::path& archive, const std::string& member) {
  return archive.string() + std::string(kMemberSeparator) + member;
}

}  // namespace archfit::binary
