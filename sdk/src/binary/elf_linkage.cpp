#include "elf_linkage.hpp"

#include <string_view>

namespace archfit::binary {

namespace {

constexpr int64_t kTagNull = 0;
constexpr int64_t kTagNeeded = 1;
constexpr int64_t kTagSoname = 14;
constexpr int64_t kTagRpath = 15;
constexpr int64_t kTagRunpath = 29;
constexpr uint64_t kEntrySize = 16;  // Elf64_Dyn: d_tag, d_val
// No loader path or library name comes near this; a longer one is damage.
constexpr uint64_t kMaxName = 4096;

std::vector<std::string> split_path_list(std::string_view list) {
  std::vector<std::string> folders;
  size_t start = 0;
  while (start <= list.size()) {
    const size_t end = std::min(list.find(':', start), list.size());
    if (end > start) folders.emplace_back(list.substr(start, end - start));
    start = end + 1;
  }
  return folders;
}

}  // namespace

std::optional<Linkage> read_linkage(const ByteReader& bytes, const ElfFile& file) {
  const ElfSection* dynamic = nullptr;
  for (const auto& section : file.sections) {
    if (section.type == elf::kSectionDynamic && section.in_file) dynamic = &section;
  }
  if (!dynamic) return std::nullopt;
  // The string table is the section the .dynamic header links to; read_elf
  // keeps the index as written, so find that section by its own index.
  const ElfSection* strings = nullptr;
  for (const auto& section : file.sections) {
    if (section.index == dynamic->link && section.in_file) strings = &section;
  }
  if (!strings) {
    throw ScanError(dynamic->offset, "the .dynamic section links to string table section " +
                                         std::to_string(dynamic->link) +
                                         ", which is not in the file");
  }
  const auto string_at = [&](uint64_t value, uint64_t entry) -> std::string {
    if (value >= strings->size) {
      throw ScanError(entry, "a .dynamic entry names string " + std::to_string(value) +
                                 ", past the end of its string table (" +
                                 std::to_string(strings->size) + " bytes)");
    }
    return std::string(
        bytes.c_string(strings->offset + value, std::min(kMaxName, strings->size - value)));
  };

  Linkage linkage;
  const uint64_t entries = dynamic->size / kEntrySize;
  for (uint64_t i = 0; i < entries; ++i) {
    const uint64_t at = dynamic->offset + i * kEntrySize;
    const auto tag = static_cast<int64_t>(bytes.u64(at, "d_tag"));
    const uint64_t value = bytes.u64(at + 8, "d_val");
    if (tag == kTagNull) break;
    switch (tag) {
      case kTagNeeded:
        linkage.needed.push_back(string_at(value, at));
        break;
      case kTagSoname:
        linkage.name = string_at(value, at);
        break;
      case kTagRpath:
        linkage.rpath = split_path_list(string_at(value, at));
        break;
      case kTagRunpath:
        linkage.runpath = split_path_list(string_at(value, at));
        break;
      default:
        break;
    }
  }
  return linkage;
}

std::string machine_name(uint16_t machine) {
  switch (machine) {
    case elf::kMachineX86_64:
      return "x86_64";
    case elf::kMachineAarch64:
      return "aarch64";
    default:
      return "e_machine " + std::to_string(machine);
  }
}

}  // namespace archfit::binary
