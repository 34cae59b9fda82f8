#include "scan_index.hpp"

#include <lz4.h>

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <type_traits>

#include "archfit/archfit.h"
#include "binary/byte_reader.hpp"
#include "store/disk_store.hpp"
#include "store/store_key.hpp"
#include "store/store_location.hpp"
#include "sys/file_status.hpp"
#include "sys/module_location.hpp"
#include "sys/utf8_path.hpp"

namespace archfit::check {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Bumped whenever what is stored changes.
// 3: Windows .dll/.pyd read (a file stored as "other" before may hold images);
// 4: each file's real path, and the stamp of the file opened.
constexpr int kIndexFormat = 4;
// An index bigger than this once decompressed is not one archfit wrote.
constexpr uint64_t kMaxIndexBytes = 1ull << 30;  // below LZ4_MAX_INPUT_SIZE too

// One image, fixed width, so a library's tens of thousands of images are
// one binary blob in the document rather than as many objects: reading
// them back is a copy. The index never leaves this machine and its key
// names this build, so the layout is this build's.
struct PackedImage {
  uint64_t size;
  uint64_t compressed_size;
  uint64_t uncompressed_size;
  uint64_t flags;
  uint64_t offset;
  uint64_t container_offset;
  uint64_t payload_offset;
  uint32_t sm;
  uint32_t section;     // index into the file's strings
  uint32_t identifier;  // index into the file's strings
  uint16_t kind_code;
  uint16_t ptx_isa_major;
  uint16_t ptx_isa_minor;
  uint16_t entry_major;
  uint16_t entry_minor;
  uint8_t kind;
  uint8_t variant;
  uint8_t elf_abi;
  uint8_t compression;
  uint8_t debug;
  uint8_t relocatable;
};
static_assert(std::is_trivially_copyable_v<PackedImage>);

// The library or program this code is in, by path and stamp: a rebuilt or
// upgraded archfit scans afresh.
std::string scanner_build() {
  const std::filesystem::path module = sys::running_module_file();
  const std::string file = sys::utf8_of(module);
  const auto status = sys::file_status(module, sys::Links::follow);
  if (!status) return file;
  return file + " " + std::to_string(status->stamp.size) + " " +
         std::to_string(status->stamp.mtime_ns) + " " + std::to_string(status->stamp.inode);
}

std::string index_key(const std::vector<fs::path>& roots) {
  std::string depends_on = std::string("archfit ") + ARCHFIT_VERSION_STRING + "\nformat " +
                           std::to_string(kIndexFormat) + "\nbuild " + scanner_build() + "\nroots";
  for (const auto& root : roots) {
    std::error_code error;
    depends_on += '\n' + fs::absolute(root, error).lexically_normal().string();
  }
  return store::record_key("scan index", depends_on);
}

json stamp_json(const binary::FileStamp& stamp) {
  return {stamp.size, stamp.mtime_ns, stamp.ctime_ns, stamp.device, stamp.inode};
}

binary::FileStamp stamp_from(const json& in) {
  return {in.at(0).get<uint64_t>(), in.at(1).get<int64_t>(), in.at(2).get<int64_t>(),
          in.at(3).get<uint64_t>(), in.at(4).get<uint64_t>()};
}

json payload_json(const binary::PayloadInfo& payload) {
  json out = json::object();
  if (payload.ptx_version)
    out["ptx_version"] = {payload.ptx_version->major, payload.ptx_version->minor};
  out["ptx_target"] = payload.ptx_target;
  if (payload.cubin_elf_type) out["cubin_elf_type"] = *payload.cubin_elf_type;
  if (payload.cubin_abi_version) out["cubin_abi_version"] = *payload.cubin_abi_version;
  if (payload.cubin_sm) out["cubin_sm"] = *payload.cubin_sm;
  if (payload.cubin_e_flags) out["cubin_e_flags"] = *payload.cubin_e_flags;
  if (payload.cubin_variant) out["cubin_variant"] = static_cast<int>(*payload.cubin_variant);
  out["toolkit"] = payload.toolkit;
  out["producer_options"] = payload.producer_options;
  out["disagreements"] = payload.disagreements;
  out["error"] = payload.error;
  return out;
}

template <typename Enum>
Enum enum_at_most(int value, Enum last, const char* what) {
  if (value < 0 || value > static_cast<int>(last))
    throw std::runtime_error(std::string("bad ") + what + " " + std::to_string(value));
  return static_cast<Enum>(value);
}

binary::PayloadInfo payload_from(const json& in) {
  binary::PayloadInfo payload;
  if (in.contains("ptx_version"))
    payload.ptx_version = binary::Version{in["ptx_version"].at(0).get<uint16_t>(),
                                          in["ptx_version"].at(1).get<uint16_t>()};
  payload.ptx_target = in.at("ptx_target").get<std::string>();
  if (in.contains("cubin_elf_type")) payload.cubin_elf_type = in["cubin_elf_type"].get<uint16_t>();
  if (in.contains("cubin_abi_version"))
    payload.cubin_abi_version = in["cubin_abi_version"].get<uint8_t>();
  if (in.contains("cubin_sm")) payload.cubin_sm = in["cubin_sm"].get<uint32_t>();
  if (in.contains("cubin_e_flags")) payload.cubin_e_flags = in["cubin_e_flags"].get<uint32_t>();
  if (in.contains("cubin_variant"))
    payload.cubin_variant =
        enum_at_most(in["cubin_variant"].get<int>(), binary::Variant::family_specific, "variant");
  payload.toolkit = in.at("toolkit").get<std::string>();
  payload.producer_options = in.at("producer_options").get<std::string>();
  payload.disagreements = in.at("disagreements").get<std::vector<std::string>>();
  payload.error = in.at("error").get<std::string>();
  return payload;
}

// `images` gets the file's packed images; the document holds where they are.
json file_json(const binary::FileScan& scan, const binary::FileStamp& stamp,
               const std::string& real_path, std::vector<PackedImage>& images) {
  std::vector<std::string> strings;
  std::unordered_map<std::string, uint32_t> string_ids;
  const auto id = [&](const std::string& text) {
    const auto [at, added] = string_ids.emplace(text, static_cast<uint32_t>(strings.size()));
    if (added) strings.push_back(text);
    return at->second;
  };
  const size_t first_image = images.size();
  images.resize(first_image + scan.images.size());
  json payloads = json::array();
  for (size_t i = 0; i < scan.images.size(); ++i) {
    const binary::Image& image = scan.images[i];
    PackedImage& out = images[first_image + i];
    std::memset(&out, 0, sizeof out);
    out.size = image.size;
    out.compressed_size = image.compressed_size;
    out.uncompressed_size = image.uncompressed_size;
    out.flags = image.flags;
    out.offset = image.offset;
    out.container_offset = image.container_offset;
    out.payload_offset = image.payload_offset;
    out.sm = image.sm;
    out.section = id(image.section);
    out.identifier = id(image.identifier);
    out.kind_code = image.kind_code;
    out.ptx_isa_major = image.ptx_isa.major;
    out.ptx_isa_minor = image.ptx_isa.minor;
    out.entry_major = image.entry_version.major;
    out.entry_minor = image.entry_version.minor;
    out.kind = static_cast<uint8_t>(image.kind);
    out.variant = static_cast<uint8_t>(image.variant);
    out.elf_abi = image.elf_abi;
    out.compression = static_cast<uint8_t>(image.compression);
    out.debug = image.debug;
    out.relocatable = image.relocatable;
    if (image.payload) payloads.push_back({i, payload_json(*image.payload)});
  }
  json problems = json::array();
  for (const auto& problem : scan.problems) problems.push_back({problem.offset, problem.message});
  json linkage = nullptr;
  if (scan.linkage) {
    linkage = {{"soname", scan.linkage->name},
               {"needed", scan.linkage->needed},
               {"rpath", scan.linkage->rpath},
               {"runpath", scan.linkage->runpath}};
  }
  return {{"path", scan.path},
          {"real_path", real_path},
          {"stamp", stamp_json(stamp)},
          {"format", static_cast<int>(scan.format)},
          {"elf_machine", scan.machine},
          {"linkage", std::move(linkage)},
          {"file_size", scan.file_size},
          {"containers", scan.containers},
          {"problems", std::move(problems)},
          {"strings", std::move(strings)},
          {"images", {first_image, scan.images.size()}},
          {"payloads", std::move(payloads)}};
}

// `images`: every file's packed images, as stored (not aligned, so each is
// copied out rather than pointed at).
binary::FileScan scan_from(const json& in, std::span<const std::byte> images) {
  binary::FileScan scan;
  scan.path = in.at("path").get<std::string>();
  scan.format = enum_at_most(in.at("format").get<int>(), binary::FileFormat::pe, "format");
  scan.machine = in.at("elf_machine").get<uint16_t>();
  if (const json& linkage = in.at("linkage"); !linkage.is_null()) {
    scan.linkage = binary::Linkage{linkage.at("soname").get<std::string>(),
                                   linkage.at("needed").get<std::vector<std::string>>(),
                                   linkage.at("rpath").get<std::vector<std::string>>(),
                                   linkage.at("runpath").get<std::vector<std::string>>()};
  }
  scan.file_size = in.at("file_size").get<uint64_t>();
  scan.containers = in.at("containers").get<uint64_t>();
  for (const json& problem : in.at("problems"))
    scan.problems.push_back({problem.at(0).get<uint64_t>(), problem.at(1).get<std::string>()});
  const auto strings = in.at("strings").get<std::vector<std::string>>();
  const auto string_at = [&](uint32_t index) -> const std::string& {
    if (index >= strings.size()) throw std::runtime_error("a string index out of range");
    return strings[index];
  };
  const auto first = in.at("images").at(0).get<uint64_t>();
  const auto count = in.at("images").at(1).get<uint64_t>();
  const uint64_t stored = images.size() / sizeof(PackedImage);
  if (first > stored || count > stored - first)
    throw std::runtime_error("the images of " + scan.path + " lie outside the index");
  scan.images.resize(count);
  for (size_t i = 0; i < scan.images.size(); ++i) {
    PackedImage packed;
    std::memcpy(&packed, images.data() + (first + i) * sizeof packed, sizeof packed);
    binary::Image& image = scan.images[i];
    image.kind = enum_at_most(packed.kind, binary::ImageKind::unknown, "image kind");
    image.kind_code = packed.kind_code;
    image.sm = packed.sm;
    image.variant = enum_at_most(packed.variant, binary::Variant::family_specific, "variant");
    image.ptx_isa = {packed.ptx_isa_major, packed.ptx_isa_minor};
    image.elf_abi = packed.elf_abi;
    image.entry_version = {packed.entry_major, packed.entry_minor};
    image.compression = enum_at_most(packed.compression, binary::Compression::zstd, "compression");
    image.size = packed.size;
    image.compressed_size = packed.compressed_size;
    image.uncompressed_size = packed.uncompressed_size;
    image.flags = packed.flags;
    image.debug = packed.debug != 0;
    image.relocatable = packed.relocatable != 0;
    image.identifier = string_at(packed.identifier);
    image.section = string_at(packed.section);
    image.offset = packed.offset;
    image.container_offset = packed.container_offset;
    image.payload_offset = packed.payload_offset;
  }
  for (const json& entry : in.at("payloads")) {
    const auto index = entry.at(0).get<size_t>();
    if (index >= scan.images.size()) throw std::runtime_error("a payload of no image");
    scan.images[index].payload = std::make_shared<binary::PayloadInfo>(payload_from(entry.at(1)));
  }
  return scan;
}

// Whether what was found with this stamp may be trusted next time: it was
// there, and it had stopped changing before the walk began.
bool keepable(const binary::FileStamp& stamp, const binary::TreeScan& scan) {
  return !(stamp == binary::FileStamp{}) && stamp.ctime_ns < scan.started_ns - kRecentChangeNs;
}

bool keepable_file(size_t i, const binary::TreeScan& scan) {
  // What could not be read may be readable next time with the same stamp
  // (permissions, a mount), and wheel members have no stamp of their own;
  // nor has a hard link, whose file is kept under its first name.
  return !scan.files[i].unreadable && !scan.real_paths.at(i).empty() &&
         keepable(scan.stamps.at(i), scan);
}

// Directory listings as plain bytes, each: the path (u32 length, bytes), the
// stamp (5 × u64), the number of names (u32), each name (u32 length, bytes).
// A torch venv's 1,300 directories are two thirds of its index document;
// parsed as MessagePack they took longer than everything else in it.
void append(std::vector<std::byte>& out, const void* data, size_t size) {
  const auto* bytes = static_cast<const std::byte*>(data);
  out.insert(out.end(), bytes, bytes + size);
}

void append_string(std::vector<std::byte>& out, const std::string& text) {
  const auto size = static_cast<uint32_t>(text.size());
  append(out, &size, sizeof size);
  append(out, text.data(), text.size());
}

std::vector<std::byte> listings_bytes(const binary::TreeScan& scan) {
  std::vector<std::byte> out;
  for (const auto& listing : scan.directories) {
    if (!keepable(listing.stamp, scan)) continue;
    append_string(out, listing.path);
    const binary::FileStamp& stamp = listing.stamp;
    for (const uint64_t field : {stamp.size, static_cast<uint64_t>(stamp.mtime_ns),
                                 static_cast<uint64_t>(stamp.ctime_ns), stamp.device, stamp.inode})
      append(out, &field, sizeof field);
    const auto count = static_cast<uint32_t>(listing.names.size());
    append(out, &count, sizeof count);
    for (const auto& name : listing.names) append_string(out, name);
  }
  return out;
}

// Calls `found(path, stamp, names)` for each listing; throws ScanError on
// bytes that do not hold whole listings.
template <typename Found>
void read_listings(std::span<const std::byte> bytes, Found found) {
  const binary::ByteReader reader(bytes);
  uint64_t at = 0;
  const auto string_at = [&](const char* what) {
    const uint32_t size = reader.u32(at, what);
    const auto text = reader.slice(at + 4, size, what);
    at += 4 + size;
    return std::string(reinterpret_cast<const char*>(text.data()), text.size());
  };
  while (at < reader.size()) {
    std::string path = string_at("a directory's path");
    binary::FileStamp stamp;
    stamp.size = reader.u64(at, "a directory's stamp");
    stamp.mtime_ns = static_cast<int64_t>(reader.u64(at + 8, "a directory's stamp"));
    stamp.ctime_ns = static_cast<int64_t>(reader.u64(at + 16, "a directory's stamp"));
    stamp.device = reader.u64(at + 24, "a directory's stamp");
    stamp.inode = reader.u64(at + 32, "a directory's stamp");
    at += 40;
    const uint32_t count = reader.u32(at, "a directory's number of names");
    at += 4;
    // Each name takes at least its 4-byte length: a count the rest cannot hold is refused
    // before anything is reserved for it.
    reader.require(at, uint64_t{count} * 4, "a directory's names");
    std::vector<std::string> names;
    names.reserve(count);
    for (uint32_t n = 0; n < count; ++n) names.push_back(string_at("a name in a directory"));
    found(std::move(path), stamp, std::move(names));
  }
}

// One u64 size, then that many bytes; `at` moves past them.
std::span<const std::byte> sized_part(std::span<const std::byte> plain, size_t& at) {
  uint64_t size = 0;
  if (plain.size() - at < sizeof size) throw std::runtime_error("too short");
  std::memcpy(&size, plain.data() + at, sizeof size);
  at += sizeof size;
  if (size > plain.size() - at) throw std::runtime_error("its parts do not add up to its size");
  const auto part = plain.subspan(at, size);
  at += size;
  return part;
}

}  // namespace

// The index's bytes, before compression: the MessagePack document's size
// (8 bytes) and the document, the directory listings' size and the
// listings, then every file's packed images, which the document points
// into. Images stay out of the document because a torch venv has 50,000 of
// them: a copy, not a parse.
std::vector<std::byte> ScanIndex::to_bytes(const binary::TreeScan& scan) {
  json files = json::array();
  std::vector<PackedImage> images;
  for (size_t i = 0; i < scan.files.size(); ++i) {
    if (keepable_file(i, scan))
      files.push_back(file_json(scan.files[i], scan.stamps[i], scan.real_paths[i], images));
  }
  const std::vector<uint8_t> document =
      json::to_msgpack(json{{"format", kIndexFormat}, {"files", std::move(files)}});
  const std::vector<std::byte> listings = listings_bytes(scan);
  std::vector<std::byte> plain;
  plain.reserve(16 + document.size() + listings.size() + images.size() * sizeof(PackedImage));
  const uint64_t document_size = document.size(), listings_size = listings.size();
  append(plain, &document_size, sizeof document_size);
  append(plain, document.data(), document.size());
  append(plain, &listings_size, sizeof listings_size);
  append(plain, listings.data(), listings.size());
  append(plain, images.data(), images.size() * sizeof(PackedImage));
  // LZ4 rather than zstd: a torch venv's index is 4.5 MB before and 1.2 MB
  // after, and decompresses in a third of zstd's time, which a warm check
  // waits for. The plain size goes first, for the reader's buffer.
  const uint64_t plain_size = plain.size();
  if (plain.size() > static_cast<size_t>(LZ4_MAX_INPUT_SIZE))
    throw std::runtime_error("too big to compress");
  std::vector<std::byte> compressed(sizeof plain_size +
                                    LZ4_compressBound(static_cast<int>(plain.size())));
  std::memcpy(compressed.data(), &plain_size, sizeof plain_size);
  const int size = LZ4_compress_default(
      reinterpret_cast<const char*>(plain.data()),
      reinterpret_cast<char*>(compressed.data() + sizeof plain_size),
      static_cast<int>(plain.size()), static_cast<int>(compressed.size() - sizeof plain_size));
  if (size <= 0) throw std::runtime_error("LZ4 could not compress it");
  compressed.resize(sizeof plain_size + static_cast<size_t>(size));
  return compressed;
}

ScanIndex ScanIndex::from_bytes(std::span<const std::byte> bytes) {
  uint64_t content = 0;
  if (bytes.size() < sizeof content) throw std::runtime_error("too short");
  std::memcpy(&content, bytes.data(), sizeof content);
  if (content > kMaxIndexBytes)
    throw std::runtime_error("claims " + std::to_string(content) + " bytes");
  std::vector<std::byte> plain(content);
  const int size = LZ4_decompress_safe(reinterpret_cast<const char*>(bytes.data() + sizeof content),
                                       reinterpret_cast<char*>(plain.data()),
                                       static_cast<int>(bytes.size() - sizeof content),
                                       static_cast<int>(plain.size()));
  if (size < 0 || static_cast<uint64_t>(size) != content)
    throw std::runtime_error("cannot be decompressed");
  size_t at = 0;
  const std::span<const std::byte> whole(plain);
  const auto document = sized_part(whole, at);
  const auto listings = sized_part(whole, at);
  const auto images = whole.subspan(at);
  if (images.size() % sizeof(PackedImage) != 0)
    throw std::runtime_error("its parts do not add up to its size");
  ScanIndex index;
  try {
    const auto* begin = reinterpret_cast<const uint8_t*>(document.data());
    const json parsed = json::from_msgpack(begin, begin + document.size());
    if (parsed.at("format").get<int>() != kIndexFormat)
      throw std::runtime_error("format " + parsed.at("format").dump());
    for (const json& file : parsed.at("files")) {
      Entry entry{stamp_from(file.at("stamp")), file.at("real_path").get<std::string>(),
                  scan_from(file, images), false};
      std::string path = entry.scan.path;
      index.entries_.emplace(std::move(path), std::move(entry));
    }
    read_listings(listings, [&](std::string path, const binary::FileStamp& stamp,
                                std::vector<std::string> names) {
      index.listings_.emplace(std::move(path), Listing{stamp, std::move(names), false});
    });
  } catch (const json::exception& error) {
    throw std::runtime_error(error.what());
  } catch (const binary::ScanError& error) {
    throw std::runtime_error(std::string("directory listings: ") + error.what());
  }
  return index;
}

ScanIndex ScanIndex::open(const fs::path& cache_dir, const std::vector<fs::path>& roots) {
  ScanIndex index;
  const store::DirVerdict verdict = store::open_primary_dir(cache_dir);
  if (verdict.use == store::DirUse::refused) {
    index.problem_ = verdict.problem;
    return index;
  }
  index.writable_ = verdict.use == store::DirUse::read_write;
  index.store_root_ = cache_dir / "scan-index";
  index.key_ = index_key(roots);
  const store::DiskStore store(index.store_root_, index.writable_, "scan results");
  const auto read = store.read(index.key_);
  if (read.status == store::DiskStore::Read::Status::bad) {
    index.problem_ = store.entry_path(index.key_).string() + ": " + read.problem;
  } else if (read.status == store::DiskStore::Read::Status::ok) {
    try {
      ScanIndex loaded = from_bytes(read.payload);
      index.entries_ = std::move(loaded.entries_);
      index.listings_ = std::move(loaded.listings_);
    } catch (const std::exception& error) {
      index.problem_ = store.entry_path(index.key_).string() + ": " + error.what();
    }
  }
  return index;
}

std::optional<binary::FileScan> ScanIndex::take(const std::string& path,
                                                const binary::FileStamp& stamp,
                                                const std::string& real_path) {
  const auto found = entries_.find(path);
  if (found == entries_.end() || found->second.taken || !(found->second.stamp == stamp) ||
      real_path.empty() || found->second.real_path != real_path)
    return std::nullopt;
  found->second.taken = true;
  return std::move(found->second.scan);
}

const std::vector<std::string>* ScanIndex::listing(const std::string& dir,
                                                   const binary::FileStamp& stamp) {
  const auto found = listings_.find(dir);
  if (found == listings_.end() || !(found->second.stamp == stamp)) return nullptr;
  found->second.used = true;
  return &found->second.names;
}

bool ScanIndex::describes(const binary::TreeScan& scan) const {
  size_t kept_files = 0, kept_directories = 0;
  for (size_t i = 0; i < scan.files.size(); ++i) kept_files += keepable_file(i, scan);
  for (const auto& listing : scan.directories) kept_directories += keepable(listing.stamp, scan);
  const bool all_taken = std::all_of(entries_.begin(), entries_.end(),
                                     [](const auto& entry) { return entry.second.taken; });
  const bool all_used = std::all_of(listings_.begin(), listings_.end(),
                                    [](const auto& listing) { return listing.second.used; });
  return scan.reused == kept_files && entries_.size() == kept_files && all_taken &&
         scan.listings_reused == kept_directories && listings_.size() == kept_directories &&
         all_used;
}

std::string ScanIndex::save(const binary::TreeScan& scan) const {
  if (key_.empty()) return problem_.empty() ? "no cache directory" : problem_;
  if (!writable_) return store_root_.string() + " is not writable";
  try {
    const store::DiskStore store(store_root_, true, "scan results");
    std::string problem = store.write(key_, to_bytes(scan));
    store.evict(kScanIndexBudgetBytes);
    return problem;
  } catch (const std::exception& error) {
    return store_root_.string() + ": " + error.what();
  }
}

}  // namespace archfit::check
