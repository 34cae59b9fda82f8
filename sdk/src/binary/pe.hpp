#pragma once
// Reads the headers and section table of a PE/COFF image: a Windows .dll,
// .pyd or .exe. Only PE32+ (64-bit: x64, ARM64) is read; no CUDA toolkit
// targets 32-bit Windows. The layout is Microsoft's "PE Format"
// specification; what nvcc and MSVC put where is measured in docs/design.md
// ("Windows binaries").
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "byte_reader.hpp"
#include "image.hpp"

namespace archfit::binary {

namespace pe {
inline constexpr uint16_t kMachineAmd64 = 0x8664;
inline constexpr uint16_t kMachineArm64 = 0xAA64;
inline constexpr uint16_t kMachineI386 = 0x14C;
inline constexpr uint16_t kMachineArmNt = 0x1C4;
inline constexpr uint16_t kOptionalMagicPe32 = 0x10B;
inline constexpr uint16_t kOptionalMagicPe32Plus = 0x20B;
// Section characteristics.
inline constexpr uint32_t kSectionCode = 0x00000020;
inline constexpr uint32_t kSectionInitializedData = 0x00000040;
inline constexpr uint32_t kSectionExecute = 0x20000000;
// Data directories this reader follows.
inline constexpr uint32_t kDirectoryExport = 0;
inline constexpr uint32_t kDirectoryImport = 1;
inline constexpr uint32_t kDirectoryDelayImport = 13;
}  // namespace pe

struct PeSection {
  std::string name;  // as written, or from the COFF string table for "/N" names
  uint32_t virtual_address = 0;
  uint32_t virtual_size = 0;
  uint32_t characteristics = 0;
  // Its bytes in the file: SizeOfRawData, less the FileAlignment padding
  // past VirtualSize. 0 for uninitialised data (.bss).
  uint64_t offset = 0;
  uint64_t size = 0;
};

struct PeDirectory {
  uint32_t rva = 0;
  uint32_t size = 0;
  uint64_t entry_offset = 0;  // where the optional header names it, for errors
};

struct PeFile {
  uint16_t machine = 0;  // IMAGE_FILE_HEADER.Machine (0x8664, 0xAA64, …)
  uint64_t image_base = 0;
  uint64_t headers_size = 0;  // SizeOfHeaders: RVAs below it are file offsets
  std::vector<PeDirectory> directories;
  std::vector<PeSection> sections;    // those whose bytes lie inside the file
  std::vector<ScanProblem> problems;  // sections that did not, overlapping ones, and why
};

enum class PeClass {
  not_pe,    // no "MZ" at the start
  dos_only,  // "MZ", but e_lfanew does not lead to a "PE\0\0" signature inside the file
  pe32,      // 32-bit: no CUDA toolkit builds for it
  pe32_plus,
};
PeClass classify_pe(const ByteReader& bytes);

// Throws ScanError when the headers or the section table itself are
// unreadable (truncated, a section table past the end, an absurd count).
// A section whose bytes are not in the file, or that overlaps an earlier
// one, is a problem of the result and is left out of `sections`.
PeFile read_pe(const ByteReader& bytes);

// The file offset of `length` bytes at `rva`, or nullopt when they are not
// all inside one section's bytes (or the headers) in the file.
std::optional<uint64_t> pe_offset_of_rva(const PeFile& file, uint64_t rva, uint64_t length);

// The DLL's CPU in ELF's e_machine numbers (host_binary.hpp): x64 → 62,
// ARM64 → 183, i386 → 3, ARMv7 → 40; 0 for any other.
uint16_t elf_machine_of_pe(uint16_t pe_machine);

}  // namespace archfit::binary
