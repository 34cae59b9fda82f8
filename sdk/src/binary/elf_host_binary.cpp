#include "elf_host_binary.hpp"

#include <algorithm>
#include <iterator>
#include <string_view>

#include "elf.hpp"
#include "elf_linkage.hpp"

namespace archfit::binary {

namespace {

// Allocated sections whose layout the toolchain itself defines (unwind
// tables, pointer arrays, the GOT): no data object, and so no fatbin
// container, is ever placed in them. Skipping them saves about 8% of the
// bytes searched in the CUDA 13 libraries (.eh_frame alone is 35 MB).
bool elf_toolchain_section(std::string_view name) {
  static constexpr std::string_view kNames[] = {".eh_frame",
                                                ".eh_frame_hdr",
                                                ".gcc_except_table",
                                                ".init_array",
                                                ".fini_array",
                                                ".preinit_array",
                                                ".got",
                                                ".got.plt",
                                                ".dynamic",
                                                ".tm_clone_table",
                                                ".nvFatBinSegment",
                                                ".interp",
                                                ".note.gnu.build-id",
                                                ".note.ABI-tag",
                                                ".note.gnu.property"};
  return std::find(std::begin(kNames), std::end(kNames), name) != std::end(kNames);
}

DeviceCodeRole role_of(const ElfSection& section) {
  if (section.name == ".nv_fatbin") return DeviceCodeRole::fatbins;
  if (section.name == "__nv_relfatbin") return DeviceCodeRole::relocatable_fatbins;
  // NVIDIA's libraries keep containers in .ldata, .cask_resource, .rodata, …
  if (section.type == elf::kSectionProgbits && (section.flags & elf::kFlagAlloc) &&
      !(section.flags & elf::kFlagExec) && !elf_toolchain_section(section.name))
    return DeviceCodeRole::data;
  return DeviceCodeRole::none;
}

}  // namespace

HostBinary read_elf_host_binary(const ByteReader& bytes) {
  const ElfFile file = read_elf(bytes);
  HostBinary binary;
  binary.format = HostFormat::elf;
  binary.machine = file.machine;
  binary.problems = file.problems;
  binary.has_sections = !file.sections.empty();
  // The linkage says which libraries this one pulls in (check/reach); a
  // damaged .dynamic is a problem of this file, and the images are still read.
  try {
    binary.linkage = read_linkage(bytes, file);
  } catch (const ScanError& error) {
    binary.problems.push_back({error.offset(), error.what()});
  }
  for (const ElfSection& section : file.sections) {
    if (!section.in_file || section.size == 0) continue;
    binary.sections.push_back({section.name, section.offset, section.size, role_of(section)});
  }
  return binary;
}

}  // namespace archfit::binary
