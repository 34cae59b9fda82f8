#pragma once
// What the scanner reports: device images and the files that hold them.
#include <compare>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace archfit::binary {

// "0x1a40": how offsets and sizes appear in messages.
std::string hex(uint64_t value);

enum class ImageKind { sass, ptx, lto, unknown };
// plain sm_XY; `a` runs only on exactly XY; `f` runs within XY's family.
enum class Variant { plain, arch_specific, family_specific };
enum class Compression { none, lz4, zstd };

std::string_view to_string(ImageKind kind);
std::string_view to_string(Variant variant);
std::string_view to_string(Compression compression);
std::string_view variant_suffix(Variant variant);  // "", "a" or "f"

struct Version {
  uint16_t major = 0;
  uint16_t minor = 0;
  std::string to_string() const;  // "9.0"
  friend auto operator<=>(const Version&, const Version&) = default;
};

// What --deep finds inside a payload, and where it disagrees with the entry header.
struct PayloadInfo {
  // PTX: the .version and .target lines.
  std::optional<Version> ptx_version;
  std::string ptx_target;  // "sm_90a"
  // SASS: the cubin's own ELF header and notes.
  std::optional<uint16_t> cubin_elf_type;    // 1 = REL, 2 = EXEC
  std::optional<uint8_t> cubin_abi_version;  // EI_ABIVERSION: 7 (V1) or 8 (V2)
  std::optional<uint32_t> cubin_sm;          // from e_flags
  std::optional<uint32_t> cubin_e_flags;
  std::optional<Variant> cubin_variant;    // from .nv.compat and the toolkit note
  std::string toolkit;                     // "Cuda compilation tools, release 13.0, V13.0.88"
  std::string producer_options;            // "-arch sm_100f -m 64"
  std::vector<std::string> disagreements;  // payload vs entry header, in words
  std::string error;                       // the payload could not be read
};

struct Image {
  ImageKind kind = ImageKind::unknown;
  uint16_t kind_code = 0;  // the raw entry kind: 1 PTX, 2 ELF, 8 LTO-IR
  uint32_t sm = 0;         // 90 for sm_90 / compute_90 / lto_90
  Variant variant = Variant::plain;
  Version ptx_isa;        // PTX entries only
  uint8_t elf_abi = 0;    // SASS entries only: 1 (EI_ABIVERSION 7) or 2 (8); 0 unknown
  Version entry_version;  // the raw version field of the entry header
  Compression compression = Compression::none;
  uint64_t size = 0;               // payload bytes as stored (padded)
  uint64_t compressed_size = 0;    // exact compressed bytes; 0 when not compressed
  uint64_t uncompressed_size = 0;  // 0 when not compressed
  uint64_t flags = 0;
  bool debug = false;
  bool relocatable = false;       // an input to device linking, not a launchable image
  std::string identifier;         // source name, present with -G or -lineinfo
  std::string section;            // ".nv_fatbin", ".cask_resource", "(file)" …
  uint64_t offset = 0;            // file offset of the entry header
  uint64_t container_offset = 0;  // file offset of its container
  uint64_t payload_offset = 0;    // file offset of the payload
  // Filled by --deep (and for standalone cubins and PTX files). Behind a
  // pointer because it is rarely present and would triple the size of the
  // tens of thousands of images a library holds; copies share it.
  std::shared_ptr<PayloadInfo> payload;

  std::string arch_name() const;  // sm_90a, compute_100f, lto_90
};

// Appended only: the scan index stores the number.
enum class FileFormat { elf, cubin, fatbin, ptx, other, pe };
std::string_view to_string(FileFormat format);

struct ScanProblem {
  uint64_t offset = 0;
  std::string message;  // already names the offset and what was wrong
};

// What the loader reads of a host binary before any of its code runs, in
// either format (host_binary.hpp): the name other binaries need it by, the
// libraries it needs, and the folders it asks the loader to search.
struct Linkage {
  // ELF: DT_SONAME. PE: the export directory's DLL name. Empty when it has none.
  std::string name;
  // In order. ELF: DT_NEEDED. PE: the import and delay-import tables' DLLs.
  std::vector<std::string> needed;
  // Folders as written ("$ORIGIN/../lib"). ELF: DT_RPATH and DT_RUNPATH. PE
  // has neither: Windows searches the DLL's own folder, the folders the
  // process added (os.add_dll_directory) and PATH, none of them written in
  // the file.
  std::vector<std::string> rpath;
  std::vector<std::string> runpath;
};

struct FileScan {
  std::string path;
  FileFormat format = FileFormat::other;
  // A host binary's CPU in ELF's e_machine numbers (62: x86_64), whatever
  // its format; 0 for a cubin, fatbin or PTX file.
  uint16_t machine = 0;
  std::optional<Linkage> linkage;  // nullopt when it names none (host_binary.hpp)
  uint64_t file_size = 0;
  uint64_t containers = 0;
  std::vector<Image> images;
  std::vector<ScanProblem> problems;
  bool unreadable = false;  // the file could not be opened, stat-ed or mapped

  bool ok() const { return problems.empty(); }
  bool has_device_code() const { return !images.empty(); }
};

}  // namespace archfit::binary
