#pragma once
// Reads the header and section table of a 64-bit little-endian ELF file:
// a host library, executable or object, or a cubin (e_machine EM_CUDA).
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "byte_reader.hpp"
#include "image.hpp"

namespace archfit::binary {

namespace elf {
inline constexpr uint16_t kTypeRelocatable = 1;
inline constexpr uint16_t kTypeExecutable = 2;
inline constexpr uint16_t kMachineCuda = 190;
inline constexpr uint32_t kSectionProgbits = 1;
inline constexpr uint32_t kSectionNote = 7;
inline constexpr uint32_t kSectionNobits = 8;
inline constexpr uint32_t kSectionNvCompat = 0x70000086;  // the cubin's .nv.compat
inline constexpr uint64_t kFlagWrite = 0x1;
inline constexpr uint64_t kFlagAlloc = 0x2;
inline constexpr uint64_t kFlagExec = 0x4;
}  // namespace elf

struct ElfSection {
  std::string name;
  uint32_t index = 0;  // its place in the section table, which sh_link values name
  uint32_t type = 0;
  uint32_t link = 0;  // sh_link: for .dynamic, the index of its string table
  uint64_t flags = 0;
  uint64_t offset = 0;
  uint64_t size = 0;
  // False for SHT_NOBITS (.bss, .nv.shared.*): its offset and size describe
  // memory at run time, not bytes in the file, and were not bounds-checked.
  bool in_file = true;
};

struct ElfFile {
  uint16_t type = 0;
  uint16_t machine = 0;
  uint8_t osabi = 0;
  uint8_t abi_version = 0;
  uint32_t flags = 0;
  std::vector<ElfSection> sections;   // those whose bytes lie inside the file, and NOBITS ones
  std::vector<ScanProblem> problems;  // sections that did not, and why
};

enum class ElfClass { not_elf, elf64_le, other_elf };
ElfClass classify_elf(const ByteReader& bytes);

// Throws ScanError when the header or the section table itself is unreadable.
ElfFile read_elf(const ByteReader& bytes);

// The section named `name`, or nullptr.
const ElfSection* find_section(const ElfFile& file, std::string_view name);

// The section named `name` whose bytes are in the file, or nullptr (none,
// or a NOBITS one: a hostile cubin's NOBITS note of 2^40 bytes once drove a
// byte-by-byte walk past the end of the file, found in review).
const ElfSection* find_section_bytes(const ElfFile& file, std::string_view name);

}  // namespace archfit::binary
