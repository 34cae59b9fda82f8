#include "summary.hpp"

namespace archfit::binary {

ScanSummary summarize(const FileScan& scan) {
  ScanSummary summary;
  for (const Image& image : scan.images) {
    const ArchKey key{image.sm, image.variant};
    ++summary.kind_images[image.kind];
    switch (image.kind) {
      case ImageKind::sass:
        ++summary.sass[key];
        ++summary.elf_abi[image.elf_abi];
        break;
      case ImageKind::ptx:
        summary.ptx[key].insert(image.ptx_isa.to_string());
        break;
      case ImageKind::lto:
        ++summary.lto[key];
        break;
      case ImageKind::unknown:
        break;  // counted in kind_images
    }
    summary.relocatable += image.relocatable;
    summary.debug += image.debug;
    ++summary.compression[image.compression];
    ++summary.section_images[image.section];
    ++summary.images;
  }
  return summary;
}

void merge_into(ScanSummary& total, const ScanSummary& part) {
  for (const auto& [key, n] : part.sass) total.sass[key] += n;
  for (const auto& [key, isas] : part.ptx) total.ptx[key].insert(isas.begin(), isas.end());
  for (const auto& [key, n] : part.lto) total.lto[key] += n;
  for (const auto& [kind, n] : part.kind_images) total.kind_images[kind] += n;
  total.relocatable += part.relocatable;
  total.debug += part.debug;
  for (const auto& [abi, n] : part.elf_abi) total.elf_abi[abi] += n;
  for (const auto& [compression, n] : part.compression) total.compression[compression] += n;
  for (const auto& [section, n] : part.section_images) total.section_images[section] += n;
  total.images += part.images;
}

std::string arch_label(const char* prefix, const ArchKey& key) {
  return prefix + std::to_string(key.sm) + std::string(variant_suffix(key.variant));
}

}  // namespace archfit::binary
