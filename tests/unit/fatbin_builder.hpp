#pragma once
// Builds fatbin containers, cubins and minimal 64-bit host ELF files in
// memory, with every header field under the test's control, so that the
// malformed-input tests can make exactly the corruption they mean to test.
// Layouts follow docs/cuda-binaries.md and the ELF-64 spec.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace archfit::test {

using Bytes = std::vector<std::byte>;

inline Bytes to_bytes(std::string_view text) {
  Bytes out(text.size());
  if (!text.empty()) std::memcpy(out.data(), text.data(), text.size());
  return out;
}

template <typename T>
void put(Bytes& out, uint64_t offset, T value) {
  if (out.size() < offset + sizeof(T)) out.resize(offset + sizeof(T));
  std::memcpy(out.data() + offset, &value, sizeof(T));
}

template <typename T>
T get(std::span<const std::byte> bytes, uint64_t offset) {
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof(T));
  return value;
}

inline void append(Bytes& out, std::span<const std::byte> more) {
  out.insert(out.end(), more.begin(), more.end());
}

inline void pad_to(Bytes& out, uint64_t alignment) {
  while (out.size() % alignment) out.push_back(std::byte{0});
}

// One fatbin entry. The defaults describe an uncompressed sm_80 V2 cubin.
struct EntrySpec {
  uint16_t kind = 2;
  uint16_t marker = 0x0101;
  std::optional<uint32_t> header_size;  // default: 64, or 64 + identifier rounded to 8
  Bytes payload;                        // stored bytes; padded to 8 unless payload_size is set
  std::optional<uint64_t> payload_size;
  uint32_t compressed_size = 0;
  uint16_t version_major = 1;
  uint16_t version_minor = 8;
  uint32_t arch = 80;
  std::string identifier;  // stored right after the 64 fixed bytes of the header
  std::optional<uint32_t> identifier_offset;
  std::optional<uint32_t> identifier_length;
  uint64_t flags = 0x11;  // 64-bit, Linux host
  uint64_t uncompressed_size = 0;
};

// The bytes of one entry (header + payload).
inline Bytes entry_bytes(const EntrySpec& spec) {
  Bytes header(64);
  Bytes name = to_bytes(spec.identifier);
  if (!name.empty()) name.push_back(std::byte{0});
  pad_to(name, 8);
  const uint32_t header_size = spec.header_size.value_or(static_cast<uint32_t>(64 + name.size()));
  Bytes payload = spec.payload;
  if (!spec.payload_size) pad_to(payload, 8);
  put<uint16_t>(header, 0x00, spec.kind);
  put<uint16_t>(header, 0x02, spec.marker);
  put<uint32_t>(header, 0x04, header_size);
  put<uint64_t>(header, 0x08, spec.payload_size.value_or(payload.size()));
  put<uint32_t>(header, 0x10, spec.compressed_size);
  put<uint16_t>(header, 0x18, spec.version_minor);
  put<uint16_t>(header, 0x1a, spec.version_major);
  put<uint32_t>(header, 0x1c, spec.arch);
  put<uint32_t>(header, 0x20, spec.identifier_offset.value_or(spec.identifier.empty() ? 0 : 64));
  put<uint32_t>(header, 0x24,
                spec.identifier_length.value_or(static_cast<uint32_t>(
                    spec.identifier.empty() ? 0 : spec.identifier.size() + 1)));
  put<uint64_t>(header, 0x28, spec.flags);
  put<uint64_t>(header, 0x38, spec.uncompressed_size);
  append(header, name);
  // A header_size smaller than what was written keeps the extra bytes (a
  // deliberately inconsistent header); a larger one is zero padded.
  if (header.size() < header_size && header_size <= 4096) header.resize(header_size);
  append(header, payload);
  return header;
}

struct ContainerSpec {
  std::vector<EntrySpec> entries;
  uint32_t magic = 0xBA55ED50;
  uint16_t version = 1;
  uint16_t header_size = 16;
  std::optional<uint64_t> size;  // default: the entries' total size
  Bytes trailing;                // bytes inside the container after the entries (counted in size)
};

inline Bytes container_bytes(const ContainerSpec& spec) {
  Bytes body;
  for (const auto& entry : spec.entries) append(body, entry_bytes(entry));
  append(body, spec.trailing);
  Bytes out;
  put<uint32_t>(out, 0, spec.magic);
  put<uint16_t>(out, 4, spec.version);
  put<uint16_t>(out, 6, spec.header_size);
  put<uint64_t>(out, 8, spec.size.value_or(body.size()));
  append(out, body);
  return out;
}

// Containers back to back, each padded to 8 bytes, as in .nv_fatbin.
inline Bytes packed(const std::vector<Bytes>& containers,
                    std::vector<uint64_t>* offsets = nullptr) {
  Bytes out;
  for (const auto& container : containers) {
    if (offsets) offsets->push_back(out.size());
    append(out, container);
    pad_to(out, 8);
  }
  return out;
}

// A minimal cubin: an ELF header with e_machine EM_CUDA and no sections.
// V2 (EI_ABIVERSION 8) keeps the SM in e_flags bits 8-15, V1 (7) in bits 0-7.
inline Bytes cubin_bytes(uint32_t sm, uint8_t abi_version = 8, uint16_t elf_type = 2) {
  Bytes out(64);
  const char ident[] = {0x7f, 'E', 'L', 'F', 2, 1, 1};
  std::memcpy(out.data(), ident, sizeof ident);
  put<uint8_t>(out, 7, abi_version == 8 ? 0x41 : 0x33);
  put<uint8_t>(out, 8, abi_version);
  put<uint16_t>(out, 16, elf_type);
  put<uint16_t>(out, 18, 190);
  put<uint32_t>(out, 20, 1);
  put<uint32_t>(out, 48, abi_version == 8 ? (0x06000004u | (sm << 8)) : (sm | (sm << 16) | 0x500u));
  put<uint16_t>(out, 52, 64);
  return out;
}

inline Bytes ptx_text(uint32_t sm, std::string_view version = "9.0") {
  return to_bytes(".version " + std::string(version) + "\n.target sm_" + std::to_string(sm) +
                  "\n.address_size 64\n\n.visible .entry k()\n{\n\tret;\n}\n");
}

// --- 64-bit little-endian host ELF -------------------------------------------

struct SectionSpec {
  std::string name;
  uint32_t type = 1;   // SHT_PROGBITS
  uint64_t flags = 2;  // SHF_ALLOC
  Bytes data;
  uint64_t alignment = 8;
  std::optional<uint64_t> offset;  // override sh_offset
  std::optional<uint64_t> size;    // override sh_size
};

struct ElfSpec {
  std::vector<SectionSpec> sections;
  // true: section headers straight after the ELF header, then the data (so a
  // cut inside the data leaves the table intact); false: data first and the
  // table last, as GNU ld writes it.
  bool table_first = false;
  uint8_t elf_class = 2;      // ELFCLASS64
  uint8_t data_encoding = 1;  // ELFDATA2LSB
  uint16_t type = 3;          // ET_DYN
  uint16_t machine = 62;      // EM_X86_64
  std::optional<uint64_t> shoff;
  std::optional<uint16_t> shentsize;
  std::optional<uint16_t> shnum;
  std::optional<uint16_t> shstrndx;
};

struct BuiltElf {
  Bytes bytes;
  uint64_t shoff = 0;
  std::vector<uint64_t> data_offsets;  // file offset of each spec section's data, in spec order
  // File offset of the section header of spec section i (index i + 1 in the table).
  uint64_t header_offset(size_t i) const { return shoff + (i + 1) * 64; }
};

inline BuiltElf build_elf(const ElfSpec& spec) {
  // Section 0 is the null section; spec sections are 1..n; .shstrtab is last.
  Bytes names(1);
  std::vector<uint32_t> name_offsets;
  for (const auto& s : spec.sections) {
    name_offsets.push_back(static_cast<uint32_t>(names.size()));
    append(names, to_bytes(s.name));
    names.push_back(std::byte{0});
  }
  const uint32_t shstrtab_name = static_cast<uint32_t>(names.size());
  append(names, to_bytes(".shstrtab"));
  names.push_back(std::byte{0});

  const uint64_t count = spec.sections.size() + 2;
  BuiltElf built;
  Bytes& out = built.bytes;
  out.resize(64);
  auto place_table = [&] {
    pad_to(out, 8);
    built.shoff = out.size();
    out.resize(out.size() + count * 64);
  };
  if (spec.table_first) place_table();
  for (const auto& s : spec.sections) {
    pad_to(out, std::max<uint64_t>(1, s.alignment));
    built.data_offsets.push_back(out.size());
    append(out, s.data);
  }
  const uint64_t names_offset = out.size();
  append(out, names);
  if (!spec.table_first) place_table();

  auto section_header = [&](uint64_t index, uint32_t name, uint32_t type, uint64_t flags,
                            uint64_t offset, uint64_t size, uint64_t alignment) {
    const uint64_t at = built.shoff + index * 64;
    put<uint32_t>(out, at + 0, name);
    put<uint32_t>(out, at + 4, type);
    put<uint64_t>(out, at + 8, flags);
    put<uint64_t>(out, at + 16, offset);  // sh_addr: the file offset will do
    put<uint64_t>(out, at + 24, offset);
    put<uint64_t>(out, at + 32, size);
    put<uint64_t>(out, at + 48, alignment);
  };
  for (size_t i = 0; i < spec.sections.size(); ++i) {
    const auto& s = spec.sections[i];
    section_header(i + 1, name_offsets[i], s.type, s.flags,
                   s.offset.value_or(built.data_offsets[i]), s.size.value_or(s.data.size()),
                   s.alignment);
  }
  section_header(count - 1, shstrtab_name, 3 /*SHT_STRTAB*/, 0, names_offset, names.size(), 1);

  const char ident[] = {0x7f, 'E', 'L', 'F'};
  std::memcpy(out.data(), ident, sizeof ident);
  put<uint8_t>(out, 4, spec.elf_class);
  put<uint8_t>(out, 5, spec.data_encoding);
  put<uint8_t>(out, 6, 1);  // EV_CURRENT
  put<uint16_t>(out, 16, spec.type);
  put<uint16_t>(out, 18, spec.machine);
  put<uint32_t>(out, 20, 1);
  put<uint64_t>(out, 40, spec.shoff.value_or(built.shoff));
  put<uint16_t>(out, 52, 64);  // e_ehsize
  put<uint16_t>(out, 58, spec.shentsize.value_or(64));
  put<uint16_t>(out, 60, spec.shnum.value_or(static_cast<uint16_t>(count)));
  put<uint16_t>(out, 62, spec.shstrndx.value_or(static_cast<uint16_t>(count - 1)));
  return built;
}

// A host library with one .nv_fatbin section holding `fatbin`.
inline BuiltElf elf_with_section(Bytes data, std::string name = ".nv_fatbin",
                                 bool table_first = false) {
  ElfSpec spec;
  spec.table_first = table_first;
  spec.sections.push_back({".text", 1, 6, to_bytes(std::string(32, '\x90')), 16});
  spec.sections.push_back({std::move(name), 1, 2, std::move(data), 8});
  return build_elf(spec);
}

}  // namespace archfit::test
