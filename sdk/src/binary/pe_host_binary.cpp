#include "pe_host_binary.hpp"

#include <algorithm>
#include <iterator>
#include <string_view>

#include "pe.hpp"

namespace archfit::binary {

namespace {

constexpr uint64_t kImportDescriptorSize = 20;       // IMAGE_IMPORT_DESCRIPTOR
constexpr uint64_t kDelayImportDescriptorSize = 32;  // IMAGE_DELAYLOAD_DESCRIPTOR
constexpr uint64_t kMaxDllName = 260;                // MAX_PATH

// Sections whose layout the toolchain defines (tables of relocations,
// unwind data, imports, exports, resources, thread-local templates) and
// the CUDA runtime's own registration data beside .nv_fatb (.nvFatBi, the
// module ids in __nv_mod, the host runtime's .nvHR*): no container is ever
// placed in them.
bool pe_toolchain_section(std::string_view name) {
  static constexpr std::string_view kNames[] = {".reloc", ".pdata", ".xdata",   ".idata",
                                                ".edata", ".didat", ".tls",     ".CRT",
                                                ".rsrc",  ".00cfg", ".nvFatBi", "__nv_mod"};
  if (name.substr(0, 5) == ".nvHR" || name.substr(0, 6) == ".debug") return true;
  return std::find(std::begin(kNames), std::end(kNames), name) != std::end(kNames);
}

DeviceCodeRole role_of(const PeSection& section) {
  if (section.name == ".nv_fatb") return DeviceCodeRole::fatbins;
  // __nv_relfatbin cut to eight bytes by MSVC; GNU ld may keep it whole.
  if (section.name.substr(0, 8) == "__nv_rel") return DeviceCodeRole::relocatable_fatbins;
  if ((section.characteristics & (pe::kSectionCode | pe::kSectionExecute)) != 0)
    return DeviceCodeRole::none;
  if ((section.characteristics & pe::kSectionInitializedData) &&
      !pe_toolchain_section(section.name))
    return DeviceCodeRole::data;
  return DeviceCodeRole::none;
}

// A DLL name at `rva`: ASCII, NUL-terminated, inside a section in the file.
std::string dll_name_at(const ByteReader& bytes, const PeFile& file, uint64_t rva,
                        uint64_t descriptor_offset, std::string_view table) {
  const auto offset = file.sections.empty() ? std::nullopt : pe_offset_of_rva(file, rva, 1);
  if (!offset || !bytes.contains(*offset, 1)) {
    throw ScanError(descriptor_offset, std::string(table) + " entry names a DLL at RVA " +
                                           hex(rva) + ", which is not in the file");
  }
  const std::string_view name = bytes.c_string(*offset, kMaxDllName);
  if (name.empty()) throw ScanError(*offset, std::string(table) + " entry names an empty DLL name");
  return std::string(name);
}

// The descriptors of one import directory, up to the all-zero one that ends
// it (or the directory's size, or the file's end).
template <typename NameOf>
void read_import_directory(const ByteReader& bytes, const PeFile& file, uint32_t directory,
                           uint64_t descriptor_size, std::string_view table, NameOf name_rva_of,
                           std::vector<std::string>& needed) {
  if (directory >= file.directories.size()) return;
  const PeDirectory& entry = file.directories[directory];
  if (entry.rva == 0 || entry.size == 0) return;
  const auto start = pe_offset_of_rva(file, entry.rva, descriptor_size);
  if (!start) {
    throw ScanError(entry.entry_offset, std::string(table) + " at RVA " + hex(entry.rva) +
                                            " is not inside any section in the file");
  }
  // Linkers do not always count the terminating descriptor in the size.
  const uint64_t limit = std::min<uint64_t>(entry.size / descriptor_size + 1,
                                            (bytes.size() - *start) / descriptor_size);
  for (uint64_t i = 0; i < limit; ++i) {
    const uint64_t at = *start + i * descriptor_size;
    const uint64_t rva = name_rva_of(at);
    if (rva == 0) return;  // the terminating descriptor
    std::string name = dll_name_at(bytes, file, rva, at, table);
    if (std::find(needed.begin(), needed.end(), name) == needed.end())
      needed.push_back(std::move(name));
  }
}

Linkage read_pe_linkage(const ByteReader& bytes, const PeFile& file) {
  Linkage linkage;
  read_import_directory(
      bytes, file, pe::kDirectoryImport, kImportDescriptorSize, "import table",
      [&](uint64_t at) { return bytes.u32(at + 12, "import Name"); }, linkage.needed);
  // Delay-loaded DLLs are loaded at the first call into them: still needed.
  read_import_directory(
      bytes, file, pe::kDirectoryDelayImport, kDelayImportDescriptorSize, "delay-load import table",
      [&](uint64_t at) -> uint64_t {
        const uint32_t attributes = bytes.u32(at, "delay-load Attributes");
        const uint64_t name = bytes.u32(at + 4, "delay-load DllNameRVA");
        // Attribute bit 0 clear: an old descriptor holding addresses.
        if ((attributes & 1) || name == 0) return name;
        return name >= file.image_base ? name - file.image_base : 0;
      },
      linkage.needed);
  if (pe::kDirectoryExport < file.directories.size()) {
    const PeDirectory& exports = file.directories[pe::kDirectoryExport];
    if (exports.rva != 0 && exports.size != 0) {
      if (const auto at = pe_offset_of_rva(file, exports.rva, 16)) {
        const uint64_t name = bytes.u32(*at + 12, "export Name");
        if (name != 0) linkage.name = dll_name_at(bytes, file, name, *at, "export directory");
      }
    }
  }
  return linkage;
}

}  // namespace

HostBinary read_pe_host_binary(const ByteReader& bytes) {
  const PeFile file = read_pe(bytes);
  HostBinary binary;
  binary.format = HostFormat::pe;
  binary.machine = elf_machine_of_pe(file.machine);
  binary.problems = file.problems;
  binary.has_sections = true;  // a PE image cannot be loaded without its section table
  try {
    binary.linkage = read_pe_linkage(bytes, file);
  } catch (const ScanError& error) {
    binary.problems.push_back({error.offset(), error.what()});
  }
  for (const PeSection& section : file.sections) {
    if (section.size == 0) continue;
    binary.sections.push_back({section.name, section.offset, section.size, role_of(section)});
  }
  return binary;
}

}  // namespace archfit::binary
