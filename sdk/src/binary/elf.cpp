#include "elf.hpp"

#include <cstring>

namespace archfit::binary {

namespace {
constexpr uint64_t kHeaderSize = 64;
constexpr uint64_t kElfSectionHeaderSize = 64;
constexpr uint16_t kSectionIndexExtended = 0xffff;  // SHN_XINDEX
}  // namespace

ElfClass classify_elf(const ByteReader& bytes) {
  if (bytes.size() < 4 || std::memcmp(bytes.data(),
                                      "\x7f"
                                      "ELF",
                                      4) != 0)
    return ElfClass::not_elf;
  if (bytes.size() < 6) return ElfClass::other_elf;
  const auto elf_class = bytes.u8(4, "ELF class");
  const auto data_encoding = bytes.u8(5, "ELF data encoding");
  return elf_class == 2 && data_encoding == 1 ? ElfClass::elf64_le : ElfClass::other_elf;
}

ElfFile read_elf(const ByteReader& bytes) {
  bytes.require(0, kHeaderSize, "ELF header");
  ElfFile file;
  file.osabi = bytes.u8(7, "EI_OSABI");
  file.abi_version = bytes.u8(8, "EI_ABIVERSION");
  file.type = bytes.u16(16, "e_type");
  file.machine = bytes.u16(18, "e_machine");
  file.flags = bytes.u32(48, "e_flags");
  const uint64_t section_table = bytes.u64(40, "e_shoff");
  const uint16_t entry_size = bytes.u16(58, "e_shentsize");
  uint64_t count = bytes.u16(60, "e_shnum");
  uint32_t names_index = bytes.u16(62, "e_shstrndx");
  if (section_table == 0) return file;  // no section table: the caller decides what to do
  if (entry_size < kElfSectionHeaderSize) {
    throw ScanError(
        58, "ELF section header size " + std::to_string(entry_size) + " is smaller than 64");
  }
  // Extended numbering: the real counts live in section header 0.
  if (count == 0) count = bytes.u64(section_table + 32, "section header 0 sh_size");
  if (names_index == kSectionIndexExtended)
    names_index = bytes.u32(section_table + 40, "section header 0 sh_link");
  if (count > (bytes.size() / entry_size) + 1 ||
      !bytes.contains(section_table, count * entry_size)) {
    throw ScanError(section_table, "ELF section table (" + std::to_string(count) + " headers of " +
                                       std::to_string(entry_size) +
                                       " bytes) extends past the end of the file (" +
                                       std::to_string(bytes.size()) + " bytes)");
  }

  struct Raw {
    uint32_t name;
    uint32_t type;
    uint64_t flags, offset, size;
    uint32_t link;
  };
  std::vector<Raw> raw(count);
  for (uint64_t i = 0; i < count; ++i) {
    const uint64_t at = section_table + i * entry_size;
    raw[i] = {bytes.u32(at, "sh_name"),      bytes.u32(at + 4, "sh_type"),
              bytes.u64(at + 8, "sh_flags"), bytes.u64(at + 24, "sh_offset"),
              bytes.u64(at + 32, "sh_size"), bytes.u32(at + 40, "sh_link")};
  }
  const Raw* names = names_index < count ? &raw[names_index] : nullptr;
  if (names && !bytes.contains(names->offset, names->size)) names = nullptr;

  file.sections.reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    const Raw& r = raw[i];
    ElfSection section;
    section.index = static_cast<uint32_t>(i);
    section.type = r.type;
    section.link = r.link;
    section.flags = r.flags;
    section.offset = r.offset;
    section.size = r.size;
    section.in_file = r.type != elf::kSectionNobits;
    if (names && r.name < names->size) {
      section.name = std::string(bytes.c_string(names->offset + r.name, names->size - r.name));
    } else {
      // Appended piece by piece: "[" + std::to_string(i) trips GCC 12's
      // -Wrestrict false positive (GCC PR 105651).
      section.name = "[";
      section.name += std::to_string(i);
      section.name += "]";
    }
    if (section.in_file && r.size != 0 && !bytes.contains(r.offset, r.size)) {
      file.problems.push_back({section_table + i * entry_size,
                               "at offset " + hex(section_table + i * entry_size) + ": section " +
                                   section.name + " (offset " + hex(r.offset) + ", size " +
                                   hex(r.size) + ") extends past the end of the file (" +
                                   hex(bytes.size()) + " bytes); its contents were not scanned"});
      continue;
    }
    file.sections.push_back(std::move(section));
  }
  return file;
}

const ElfSection* find_section(const ElfFile& file, std::string_view name) {
  for (const auto& section : file.sections) {
    if (section.name == name) return &section;
  }
  return nullptr;
}

const ElfSection* find_section_bytes(const ElfFile& file, std::string_view name) {
  const ElfSection* section = find_section(file, name);
  return section && section->in_file ? section : nullptr;
}

}  // namespace archfit::binary
