#pragma once
// A host binary — a library, a Python extension module or an executable —
// as the scanner reads it, whatever its format (docs/design.md, decision 8):
// the CPU it was built for, its sections and what each may hold of device
// code, and the libraries it needs. One reader per format fills it in (ELF
// in elf_host_binary.hpp; PE/COFF for Windows' .dll, .pyd and .exe goes
// beside it); the fatbin walk over the sections is the scanner's, shared.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "image.hpp"

namespace archfit::binary {

enum class HostFormat { elf, pe };

// What a section may hold of device code, as the format's toolchain places it.
enum class DeviceCodeRole {
  none,                 // code, unwind tables, relocations: never a container
  fatbins,              // containers packed back to back: ELF .nv_fatbin, PE .nv_fatb
  relocatable_fatbins,  // device-link inputs, never launched: ELF __nv_relfatbin, PE __nv_rel*
  data,                 // read-only or initialised data that may embed containers
};

struct HostSection {
  std::string name;
  uint64_t offset = 0;  // in the file; only sections whose bytes lie in it are listed
  uint64_t size = 0;
  DeviceCodeRole role = DeviceCodeRole::none;
};

struct HostBinary {
  HostFormat format = HostFormat::elf;
  // The CPU, in ELF's e_machine numbers (62: x86_64, 183: aarch64), so that
  // both formats are compared with a device's machine the same way.
  uint16_t machine = 0;
  // False when the file has no section table (stripped with sstrip): the
  // scanner then searches all of it.
  bool has_sections = true;
  std::vector<HostSection> sections;
  // The libraries it needs and where the loader looks for them; nullopt
  // when it names none (a static executable, an object file).
  std::optional<Linkage> linkage;
  std::vector<ScanProblem> problems;  // sections past the file, a damaged .dynamic, …
};

}  // namespace archfit::binary
