#include "cubin.hpp"

#include <string_view>

#include "elf.hpp"

namespace archfit::binary {

namespace {

constexpr uint32_t kNoteToolkitInfo = 2000;    // .note.nv.tkinfo
constexpr uint64_t kToolkitStringsStart = 24;  // six u32 fields precede the string table

// Calls visit(type, descriptor_offset, descriptor_size) for each note in the section.
template <typename Visit>
void for_each_note(const ByteReader& bytes, const ElfSection& section, Visit visit) {
  uint64_t at = section.offset;
  const uint64_t end = section.offset + section.size;
  while (at + 12 <= end) {
    const uint64_t name_size = bytes.u32(at, "note name size");
    const uint64_t desc_size = bytes.u32(at + 4, "note descriptor size");
    const uint32_t type = bytes.u32(at + 8, "note type");
    const uint64_t desc = at + 12 + ((name_size + 3) & ~uint64_t{3});
    if (desc > end || desc_size > end - desc) return;
    visit(type, desc, desc_size);
    at = desc + ((desc_size + 3) & ~uint64_t{3});
  }
}

std::optional<Variant> variant_from_arch_option(std::string_view options) {
  // The arch is the word after -arch. With -G the line also names the input
  // and output files ("... -g -o sm_90a_debug.cubin -arch sm_90 -m 64"), and
  // a file name may contain "sm_" too.
  const auto option = options.find("-arch ");
  if (option == std::string_view::npos) return std::nullopt;
  const auto at = options.find_first_not_of(' ', option + 6);
  if (at == std::string_view::npos || options.substr(at, 3) != "sm_") return std::nullopt;
  size_t end = at + 3;
  while (end < options.size() && options[end] >= '0' && options[end] <= '9') ++end;
  if (end < options.size() && options[end] == 'a') return Variant::arch_specific;
  if (end < options.size() && options[end] == 'f') return Variant::family_specific;
  return Variant::plain;
}

}  // namespace

uint8_t elf_abi_from_abi_version(uint8_t abi_version) {
  return abi_version == 7 ? 1 : abi_version == 8 ? 2 : 0;
}

CubinInfo read_cubin(const ByteReader& bytes) {
  if (classify_elf(bytes) != ElfClass::elf64_le)
    throw ScanError(0, "payload is not a 64-bit ELF cubin");
  const ElfFile file = read_elf(bytes);
  if (file.machine != elf::kMachineCuda) {
    throw ScanError(18, "ELF e_machine is " + std::to_string(file.machine) + ", not 190 (EM_CUDA)");
  }
  CubinInfo info;
  info.elf_type = file.type;
  info.abi_version = file.abi_version;
  info.e_flags = file.flags;
  // V1 keeps the SM in bits 0-7, V2 (CUDA 13 and later) in bits 8-15.
  info.sm = file.abi_version >= 8 ? (file.flags >> 8) & 0xff : file.flags & 0xff;
  info.debug = find_section(file, ".debug_info") != nullptr;

  if (const ElfSection* compat = find_section_bytes(file, ".nv.compat")) {
    info.variant = Variant::plain;
    for (uint64_t at = compat->offset; at + 4 <= compat->offset + compat->size; at += 4) {
      // Record 02 09 vv 00: vv = 1 marks an arch-specific (`a`) cubin.
      if (bytes.u8(at, "compat") == 2 && bytes.u8(at + 1, "compat") == 9 &&
          bytes.u8(at + 2, "compat") == 1) {
        info.variant = Variant::arch_specific;
      }
    }
  }
  if (const ElfSection* note = find_section_bytes(file, ".note.nv.tkinfo")) {
    for_each_note(bytes, *note, [&](uint32_t type, uint64_t desc, uint64_t size) {
      if (type != kNoteToolkitInfo || size <= kToolkitStringsStart) return;
      for (uint64_t at = desc + kToolkitStringsStart; at < desc + size;) {
        const std::string_view text = bytes.c_string(at, desc + size - at);
        if (text.starts_with("Cuda compilation tools")) info.toolkit = std::string(text);
        if (text.find("-arch ") != std::string_view::npos)
          info.producer_options = std::string(text);
        at += text.size() + 1;
      }
    });
  }
  // `f` shows only in the ptxas command line; `a` shows in both places.
  if (auto from_options = variant_from_arch_option(info.producer_options)) {
    if (!info.variant || *info.variant == Variant::plain) info.variant = from_options;
  }
  return info;
}

}  // namespace archfit::binary
