// The host-binary seam (issue 32): an ELF library read as a HostBinary, its
// sections given the roles the scanner searches them by.
#include "binary/host_binary.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "binary/byte_reader.hpp"
#include "binary/elf_host_binary.hpp"
#include "binary/scan_error.hpp"

namespace {

namespace fs = std::filesystem;
using archfit::binary::DeviceCodeRole;
using archfit::binary::HostBinary;

std::vector<std::byte> read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), {});
  std::vector<std::byte> bytes(text.size());
  for (size_t i = 0; i < text.size(); ++i) bytes[i] = static_cast<std::byte>(text[i]);
  return bytes;
}

const archfit::binary::HostSection* section(const HostBinary& binary, const std::string& name) {
  for (const auto& s : binary.sections) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

TEST(HostBinary, AnElfLibrarysSectionsCarryTheRolesTheScannerSearchesThemBy) {
  const fs::path library = fs::path(ARCHFIT_FIXTURE_DIR) / "sm_80.so";
  if (!fs::exists(library)) GTEST_SKIP() << "nvcc fixture not built: " << library;
  const auto bytes = read_bytes(library);
  const HostBinary binary =
      archfit::binary::read_elf_host_binary(archfit::binary::ByteReader(bytes));
  EXPECT_EQ(binary.format, archfit::binary::HostFormat::elf);
  EXPECT_EQ(binary.machine, 62);  // x86_64
  EXPECT_TRUE(binary.has_sections);
  ASSERT_NE(section(binary, ".nv_fatbin"), nullptr);
  EXPECT_EQ(section(binary, ".nv_fatbin")->role, DeviceCodeRole::fatbins);
  ASSERT_NE(section(binary, ".rodata"), nullptr);
  EXPECT_EQ(section(binary, ".rodata")->role, DeviceCodeRole::data);
  ASSERT_NE(section(binary, ".text"), nullptr);
  EXPECT_EQ(section(binary, ".text")->role, DeviceCodeRole::none);
  ASSERT_NE(section(binary, ".eh_frame"), nullptr);
  EXPECT_EQ(section(binary, ".eh_frame")->role, DeviceCodeRole::none);
  ASSERT_TRUE(binary.linkage.has_value());
  for (const auto& s : binary.sections) EXPECT_LE(s.offset + s.size, bytes.size()) << s.name;
}

TEST(HostBinary, RelocatableDeviceCodeHasARoleOfItsOwn) {
  const fs::path library = fs::path(ARCHFIT_FIXTURE_DIR) / "rdc.so";
  if (!fs::exists(library)) GTEST_SKIP() << "nvcc fixture not built: " << library;
  const auto bytes = read_bytes(library);
  const HostBinary binary =
      archfit::binary::read_elf_host_binary(archfit::binary::ByteReader(bytes));
  const auto* relocatable = section(binary, "__nv_relfatbin");
  ASSERT_NE(relocatable, nullptr);  // nvcc -rdc=true puts device-link inputs there
  EXPECT_EQ(relocatable->role, DeviceCodeRole::relocatable_fatbins);
}

TEST(HostBinary, AFileWhoseHeaderIsCutShortIsAScanError) {
  const std::vector<std::byte> truncated = {std::byte{0x7f}, std::byte{'E'}, std::byte{'L'},
                                            std::byte{'F'},  std::byte{2},   std::byte{1}};
  EXPECT_THROW(archfit::binary::read_elf_host_binary(archfit::binary::ByteReader(truncated)),
               archfit::binary::ScanError);
}

}  // namespace
