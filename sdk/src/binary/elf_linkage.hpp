#pragma once
// What the dynamic loader reads from a host library before any of its code
// runs: the CPU it was built for, its SONAME, the libraries it names in
// DT_NEEDED and the folders it asks the loader to search (DT_RPATH,
// DT_RUNPATH). check/ follows these to learn which libraries a Python
// extension really pulls in.
#include <cstdint>
#include <optional>
#include <string>

#include "byte_reader.hpp"
#include "elf.hpp"

namespace archfit::binary {

namespace elf {
inline constexpr uint32_t kSectionDynamic = 6;  // SHT_DYNAMIC
inline constexpr uint16_t kMachineX86_64 = 62;
inline constexpr uint16_t kMachineAarch64 = 183;
}  // namespace elf

// The linkage of a host ELF from its .dynamic section and that section's
// string table (sh_link, normally .dynstr); nullopt for a file without one
// (a static executable, an object file). Throws ScanError when the section
// or a string offset in it points outside the file.
std::optional<Linkage> read_linkage(const ByteReader& bytes, const ElfFile& file);

// "x86_64", "aarch64", or "e_machine 40" for anything else.
std::string machine_name(uint16_t machine);

}  // namespace archfit::binary
