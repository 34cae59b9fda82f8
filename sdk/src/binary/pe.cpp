#include "pe.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>

namespace archfit::binary {

namespace {

constexpr uint64_t kDosHeaderSize = 64;
constexpr uint64_t kNewHeaderPointer = 0x3C;  // e_lfanew
constexpr uint64_t kCoffHeaderSize = 20;      // after the 4-byte "PE\0\0"
constexpr uint64_t kPeSectionHeaderSize = 40;
constexpr uint64_t kSymbolSize = 18;                    // a COFF symbol table entry
constexpr uint64_t kOptionalHeaderFixedPe32Plus = 112;  // up to the data directories
constexpr uint32_t kMaxDirectories = 16;

bool has_signature(const ByteReader& bytes, uint64_t at) {
  return bytes.contains(at, 4) && std::memcmp(bytes.data() + at, "PE\0\0", 4) == 0;
}

// "/123": the name is at offset 123 of the COFF string table, which follows
// the symbol table. GNU ld writes such names for sections longer than eight
// bytes (.debug_info); MSVC cuts them to eight (.nv_fatb).
std::string section_name(const ByteReader& bytes, uint64_t header, uint64_t index,
                         uint64_t string_table) {
  const std::string_view raw = bytes.c_string(header, 8);
  if (raw.size() > 1 && raw[0] == '/' &&
      std::all_of(raw.begin() + 1, raw.end(), [](char c) { return std::isdigit(c); }) &&
      string_table != 0) {
    const uint64_t offset = std::stoull(std::string(raw.substr(1)));
    if (bytes.contains(string_table, 4) && offset >= 4 &&
        offset < bytes.u32(string_table, "COFF string table size") &&
        bytes.contains(string_table + offset, 1))
      return std::string(bytes.c_string(string_table + offset, 256));
    // Appended piece by piece: "[" + std::to_string(i) trips GCC 12's
    // -Wrestrict false positive (GCC PR 105651).
    std::string unnamed = "[";
    unnamed += std::to_string(index);
    unnamed += "]";
    return unnamed;
  }
  return std::string(raw);
}

}  // namespace

PeClass classify_pe(const ByteReader& bytes) {
  if (bytes.size() < 2 || std::memcmp(bytes.data(), "MZ", 2) != 0) return PeClass::not_pe;
  // A truncated header is read as PE so that read_pe names what is missing.
  if (!bytes.contains(kNewHeaderPointer, 4)) return PeClass::pe32_plus;
  const uint64_t header = bytes.u32(kNewHeaderPointer, "e_lfanew");
  if (!bytes.contains(header, 4)) return PeClass::pe32_plus;
  if (!has_signature(bytes, header)) return PeClass::dos_only;
  const uint64_t optional = header + 4 + kCoffHeaderSize;
  if (bytes.contains(optional, 2) &&
      bytes.u16(optional, "optional header magic") == pe::kOptionalMagicPe32)
    return PeClass::pe32;
  return PeClass::pe32_plus;
}

PeFile read_pe(const ByteReader& bytes) {
  bytes.require(0, kDosHeaderSize, "DOS header");
  const uint64_t header = bytes.u32(kNewHeaderPointer, "e_lfanew");
  bytes.require(header, 4 + kCoffHeaderSize, "PE signature and COFF header");
  if (!has_signature(bytes, header))
    throw ScanError(header, "no PE signature where e_lfanew points");
  const uint64_t coff = header + 4;
  PeFile file;
  file.machine = bytes.u16(coff, "Machine");
  const uint64_t section_count = bytes.u16(coff + 2, "NumberOfSections");
  const uint64_t symbol_table = bytes.u32(coff + 8, "PointerToSymbolTable");
  const uint64_t symbol_count = bytes.u32(coff + 12, "NumberOfSymbols");
  const uint64_t optional_size = bytes.u16(coff + 16, "SizeOfOptionalHeader");
  const uint64_t optional = coff + kCoffHeaderSize;

  bytes.require(optional, std::max<uint64_t>(optional_size, 2), "optional header");
  const uint16_t magic = bytes.u16(optional, "optional header magic");
  if (magic != pe::kOptionalMagicPe32Plus) {
    throw ScanError(optional, "optional header magic " + hex(magic) +
                                  " is not PE32+ (0x20b); only 64-bit images are read");
  }
  if (optional_size < kOptionalHeaderFixedPe32Plus) {
    throw ScanError(coff + 16, "SizeOfOptionalHeader " + std::to_string(optional_size) +
                                   " is smaller than a PE32+ optional header (112 bytes)");
  }
  file.image_base = bytes.u64(optional + 24, "ImageBase");
  file.headers_size = bytes.u32(optional + 60, "SizeOfHeaders");
  const uint64_t directory_count =
      std::min<uint64_t>({bytes.u32(optional + 108, "NumberOfRvaAndSizes"), kMaxDirectories,
                          (optional_size - kOptionalHeaderFixedPe32Plus) / 8});
  for (uint64_t d = 0; d < directory_count; ++d) {
    const uint64_t at = optional + kOptionalHeaderFixedPe32Plus + d * 8;
    file.directories.push_back(
        {bytes.u32(at, "data directory RVA"), bytes.u32(at + 4, "data directory size"), at});
  }

  const uint64_t table = optional + optional_size;
  if (!bytes.contains(table, section_count * kPeSectionHeaderSize)) {
    throw ScanError(table, "PE section table (" + std::to_string(section_count) +
                               " headers of 40 bytes) extends past the end of the file (" +
                               std::to_string(bytes.size()) + " bytes)");
  }
  // The COFF string table, for "/N" names: only where the symbol table that
  // precedes it lies in the file.
  uint64_t string_table = 0;
  if (symbol_table != 0 && bytes.contains(symbol_table, symbol_count * kSymbolSize))
    string_table = symbol_table + symbol_count * kSymbolSize;

  file.sections.reserve(section_count);
  for (uint64_t i = 0; i < section_count; ++i) {
    const uint64_t at = table + i * kPeSectionHeaderSize;
    PeSection section;
    section.name = section_name(bytes, at, i, string_table);
    section.virtual_size = bytes.u32(at + 8, "VirtualSize");
    section.virtual_address = bytes.u32(at + 12, "VirtualAddress");
    const uint64_t raw_size = bytes.u32(at + 16, "SizeOfRawData");
    section.offset = bytes.u32(at + 20, "PointerToRawData");
    section.characteristics = bytes.u32(at + 36, "Characteristics");
    // The raw bytes are padded to FileAlignment; what lies past VirtualSize is padding.
    section.size =
        section.virtual_size != 0 ? std::min<uint64_t>(raw_size, section.virtual_size) : raw_size;
    if (section.size == 0) section.offset = 0;
    if (section.size != 0 && !bytes.contains(section.offset, section.size)) {
      file.problems.push_back({at, "at offset " + hex(at) + ": section " + section.name +
                                       " (offset " + hex(section.offset) + ", size " +
                                       hex(section.size) + ") extends past the end of the file (" +
                                       hex(bytes.size()) +
                                       " bytes); its contents were not scanned"});
      continue;
    }
    file.sections.push_back(std::move(section));
  }

  // Two sections sharing bytes would have their containers counted twice:
  // the later one in the table is reported and left out.
  std::vector<size_t> by_offset;
  for (size_t s = 0; s < file.sections.size(); ++s)
    if (file.sections[s].size != 0) by_offset.push_back(s);
  std::stable_sort(by_offset.begin(), by_offset.end(), [&](size_t a, size_t b) {
    return file.sections[a].offset < file.sections[b].offset;
  });
  std::vector<bool> overlapping(file.sections.size(), false);
  size_t last = SIZE_MAX;
  for (size_t s : by_offset) {
    const PeSection& section = file.sections[s];
    if (last != SIZE_MAX) {
      const PeSection& previous = file.sections[last];
      if (section.offset < previous.offset + previous.size) {
        // The one of the two later in the table is left out.
        const size_t dropped = std::max(s, last);
        const PeSection& kept = file.sections[std::min(s, last)];
        const PeSection& gone = file.sections[dropped];
        overlapping[dropped] = true;
        file.problems.push_back(
            {gone.offset, "at offset " + hex(gone.offset) + ": section " + gone.name +
                              " overlaps section " + kept.name + " (offset " + hex(kept.offset) +
                              ", size " + hex(kept.size) + "); its contents were not scanned"});
        if (dropped == last) last = s;
        continue;
      }
    }
    last = s;
  }
  size_t kept = 0;
  for (size_t s = 0; s < file.sections.size(); ++s) {
    if (overlapping[s]) continue;
    if (kept != s) file.sections[kept] = std::move(file.sections[s]);  // never onto itself
    ++kept;
  }
  file.sections.resize(kept);
  return file;
}

std::optional<uint64_t> pe_offset_of_rva(const PeFile& file, uint64_t rva, uint64_t length) {
  if (rva + length < rva) return std::nullopt;
  if (rva + length <= file.headers_size) return rva;
  for (const PeSection& section : file.sections) {
    if (section.size == 0 || rva < section.virtual_address) continue;
    const uint64_t within = rva - section.virtual_address;
    if (within < section.size && length <= section.size - within) return section.offset + within;
  }
  return std::nullopt;
}

uint16_t elf_machine_of_pe(uint16_t pe_machine) {
  switch (pe_machine) {
    case pe::kMachineAmd64:
      return 62;
    case pe::kMachineArm64:
      return 183;
    case pe::kMachineI386:
      return 3;
    case pe::kMachineArmNt:
      return 40;
    default:
      return 0;
  }
}

}  // namespace archfit::binary
