#pragma once
// A per-file digest of a scan: which archs, which PTX ISAs, how compressed,
// where. What `archfit scan` prints without --images.
#include <cstdint>
#include <map>
#include <set>
#include <string>

#include "image.hpp"

namespace archfit::binary {

struct ArchKey {
  uint32_t sm = 0;
  Variant variant = Variant::plain;
  auto operator<=>(const ArchKey&) const = default;
};

struct ScanSummary {
  std::map<ArchKey, uint64_t> sass;              // arch → images
  std::map<ArchKey, std::set<std::string>> ptx;  // arch → PTX ISA versions
  std::map<ArchKey, uint64_t> lto;
  std::map<ImageKind, uint64_t> kind_images;  // sass/ptx/lto/unknown → images
  uint64_t relocatable = 0;
  uint64_t debug = 0;
  std::map<uint8_t, uint64_t> elf_abi;             // 1/2 → SASS images
  std::map<Compression, uint64_t> compression;     // → images
  std::map<std::string, uint64_t> section_images;  // section → images
  uint64_t images = 0;
};

ScanSummary summarize(const FileScan& scan);
void merge_into(ScanSummary& total, const ScanSummary& part);

// "sm_90a", "compute_120", "lto_100f"
std::string arch_label(const char* prefix, const ArchKey& key);

}  // namespace archfit::binary
