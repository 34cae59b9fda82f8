// Windows binaries (issue 33): real PE32+ DLLs that mingw-w64 linked with
// nvcc's fatbins (tests/fixtures/pe.cmake) scan to exactly the images of the
// fatbins they carry, and to those of their ELF twins; the PE reader's
// sections, roles, machine and import table; and what a damaged PE gets.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "binary/byte_reader.hpp"
#include "binary/pe.hpp"
#include "binary/pe_host_binary.hpp"
#include "binary/scan_error.hpp"
#include "binary/scan_json.hpp"
#include "binary/scanner.hpp"

namespace {

namespace fs = std::filesystem;
using archfit::binary::ByteReader;
using archfit::binary::DeviceCodeRole;
using archfit::binary::FileFormat;
using archfit::binary::FileScan;
using archfit::binary::HostBinary;
using archfit::binary::Image;

const fs::path kFixtureDir = ARCHFIT_FIXTURE_DIR;

std::vector<std::byte> read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), {});
  std::vector<std::byte> bytes(text.size());
  std::memcpy(bytes.data(), text.data(), text.size());
  return bytes;
}

FileScan scan(const std::vector<std::byte>& bytes, const std::string& name) {
  return archfit::binary::scan_bytes(bytes, name);
}

FileScan scan(const fs::path& path) { return scan(read_bytes(path), path.filename().string()); }

// What an image is, whatever file holds it: its target, compression, the
// PTX ISA, whether it is a device-link input, and its size. Not the section
// or the offset, which differ by format.
std::string identity(const Image& image, bool with_size) {
  std::ostringstream out;
  out << image.arch_name() << ' ' << to_string(image.compression) << " isa=" << image.ptx_isa.major
      << '.' << image.ptx_isa.minor << (image.relocatable ? " relocatable" : "")
      << (image.debug ? " debug" : "");
  if (with_size) out << " size=" << image.size;
  return out.str();
}

std::vector<std::string> identities(const FileScan& file, bool with_size) {
  std::vector<std::string> out;
  for (const Image& image : file.images) out.push_back(identity(image, with_size));
  return out;
}

// As a set: nvcc -shared also links a device-link container whose image
// repeats the target (the .so twins hold each arch twice), which the DLLs,
// linked from one fatbin, do not.
std::set<std::string> identity_set(const FileScan& file, bool relocatable) {
  std::set<std::string> out;
  for (const Image& image : file.images)
    if (image.relocatable == relocatable) out.insert(identity(image, false));
  return out;
}

std::string problems_of(const FileScan& file) {
  std::string text;
  for (const auto& problem : file.problems) text += problem.message + "\n";
  return text;
}

class PeFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kFixtureDir / "pe_fixtures.txt")) {
      GTEST_SKIP() << "no mingw-w64 DLL fixtures in " << kFixtureDir.string()
                   << " (x86_64-w64-mingw32-gcc or nvcc was not found at configure time; "
                      "install g++-mingw-w64-x86-64)";
    }
  }
};

// Each DLL and the nvcc outputs it was linked from (tests/fixtures/pe.cmake),
// and its ELF twin: the shared library nvcc built with the same flags.
struct Twin {
  std::string dll;
  std::vector<std::string> fatbins;
  std::string elf;  // "" where nvcc made no shared library of those flags
  std::string section;
  bool relocatable = false;
};

const std::vector<Twin>& twins() {
  static const std::vector<Twin> all = {
      {"pe_sm_80.dll", {"sm_80.fatbin"}, "sm_80.so", ".nv_fatb"},
      {"pe_sm_86_sm_89.dll", {"sm_86_sm_89.fatbin"}, "sm_86_sm_89.so", ".nv_fatb"},
      {"pe_sm_90a.dll", {"sm_90a.fatbin"}, "sm_90a.so", ".nv_fatb"},
      {"pe_sm_100f.dll", {"sm_100f.fatbin"}, "sm_100f.so", ".nv_fatb"},
      {"pe_sm_120.dll", {"sm_120.fatbin"}, "sm_120.so", ".nv_fatb"},
      {"pe_compute_90.dll", {"compute_90.fatbin"}, "compute_90.so", ".nv_fatb"},
      {"pe_compress_all.dll", {"compress_all.fatbin"}, "compress_all.so", ".nv_fatb"},
      {"pe_no_compress.dll", {"no_compress.fatbin"}, "no_compress.so", ".nv_fatb"},
      {"pe_several.dll", {"sm_80.fatbin", "compute_90.fatbin", "sm_120f.fatbin"}, "", ".nv_fatb"},
      {"pe_rdc.dll", {"rdc.fatbin"}, "rdc.so", "__nv_rel", /*relocatable=*/true},
      {"pe_rdata.dll", {"sm_90a.fatbin"}, "sm_90a.so", ".rdata"},
  };
  return all;
}

TEST_F(PeFixture, EveryDllIsInTheTableAndEveryEntryWasBuilt) {
  std::ifstream manifest(kFixtureDir / "pe_fixtures.txt");
  std::set<std::string> built;
  for (std::string line; std::getline(manifest, line);)
    if (!line.empty()) built.insert(line);
  std::set<std::string> expected;
  for (const Twin& twin : twins()) expected.insert(twin.dll);
  EXPECT_EQ(built, expected);
}

TEST_F(PeFixture, EachDllScansToTheImagesOfTheFatbinsItCarries) {
  for (const Twin& twin : twins()) {
    SCOPED_TRACE(twin.dll);
    const FileScan dll = scan(kFixtureDir / twin.dll);
    EXPECT_EQ(dll.format, FileFormat::pe);
    EXPECT_EQ(dll.machine, 62);  // x64, in ELF's numbers as for an .so
    EXPECT_TRUE(dll.ok()) << problems_of(dll);
    std::vector<std::string> expected;
    uint64_t containers = 0;
    for (const std::string& fatbin : twin.fatbins) {
      FileScan alone = scan(kFixtureDir / fatbin);
      ASSERT_TRUE(alone.ok()) << problems_of(alone);
      ASSERT_FALSE(alone.images.empty()) << fatbin;
      containers += alone.containers;
      // The section says which are device-link inputs, as on ELF.
      for (Image& image : alone.images) image.relocatable = twin.relocatable;
      for (const std::string& text : identities(alone, true)) expected.push_back(text);
    }
    EXPECT_EQ(identities(dll, true), expected);
    EXPECT_EQ(dll.containers, containers);
    for (const Image& image : dll.images) EXPECT_EQ(image.section, twin.section);
  }
}

TEST_F(PeFixture, EachDllScansToTheSameImagesAsItsElfTwin) {
  for (const Twin& twin : twins()) {
    if (twin.elf.empty()) continue;
    SCOPED_TRACE(twin.dll + " and " + twin.elf);
    const FileScan dll = scan(kFixtureDir / twin.dll);
    const FileScan so = scan(kFixtureDir / twin.elf);
    ASSERT_TRUE(so.ok()) << problems_of(so);
    // An -rdc shared library also holds the device-linked, runnable images
    // nvlink made; the DLL carries only the inputs.
    EXPECT_EQ(identity_set(dll, twin.relocatable), identity_set(so, twin.relocatable));
    EXPECT_FALSE(identity_set(dll, twin.relocatable).empty());
    if (!twin.relocatable) EXPECT_TRUE(identity_set(dll, true).empty());
  }
}

const archfit::binary::HostSection* section(const HostBinary& binary, const std::string& name) {
  for (const auto& s : binary.sections)
    if (s.name == name) return &s;
  return nullptr;
}

TEST_F(PeFixture, TheReaderGivesSectionsTheirRolesAndReadsTheImportTable) {
  const auto bytes = read_bytes(kFixtureDir / "pe_sm_80.dll");
  const HostBinary binary = archfit::binary::read_pe_host_binary(ByteReader(bytes));
  EXPECT_EQ(binary.format, archfit::binary::HostFormat::pe);
  EXPECT_EQ(binary.machine, 62);
  EXPECT_TRUE(binary.problems.empty());
  ASSERT_NE(section(binary, ".nv_fatb"), nullptr);
  EXPECT_EQ(section(binary, ".nv_fatb")->role, DeviceCodeRole::fatbins);
  ASSERT_NE(section(binary, ".text"), nullptr);
  EXPECT_EQ(section(binary, ".text")->role, DeviceCodeRole::none);
  ASSERT_NE(section(binary, ".rdata"), nullptr);
  EXPECT_EQ(section(binary, ".rdata")->role, DeviceCodeRole::data);
  for (const char* table : {".pdata", ".xdata", ".idata", ".edata", ".reloc"}) {
    if (const auto* s = section(binary, table)) EXPECT_EQ(s->role, DeviceCodeRole::none) << table;
  }
  for (const auto& s : binary.sections) {
    EXPECT_LE(s.offset + s.size, bytes.size()) << s.name;
    // GNU ld's long names ("/4") are read from the COFF string table.
    EXPECT_NE(s.name.front(), '/') << s.name;
  }
  ASSERT_TRUE(binary.linkage.has_value());
  EXPECT_EQ(binary.linkage->name, "pe_sm_80.dll");  // the export directory's name
  const auto& needed = binary.linkage->needed;
  EXPECT_NE(std::find(needed.begin(), needed.end(), "cudart64_12.dll"), needed.end());
  EXPECT_NE(std::find(needed.begin(), needed.end(), "KERNEL32.dll"), needed.end());
  EXPECT_TRUE(binary.linkage->rpath.empty());
  EXPECT_TRUE(binary.linkage->runpath.empty());

  // `scan --json` shows the same: the DLL's CPU and what it loads.
  const auto json = archfit::binary::to_json(scan(kFixtureDir / "pe_sm_80.dll"));
  EXPECT_EQ(json["format"], "pe");
  EXPECT_EQ(json["machine"], "x86_64");
  EXPECT_EQ(json["linkage"]["name"], "pe_sm_80.dll");
  EXPECT_EQ(json["linkage"]["needed"].size(), needed.size());
}

// The offset of the COFF header ("PE\0\0" + 4) and of the section table.
uint32_t coff_header(const std::vector<std::byte>& bytes) {
  uint32_t pe = 0;
  std::memcpy(&pe, bytes.data() + 0x3C, 4);
  return pe + 4;
}
uint32_t section_table(const std::vector<std::byte>& bytes) {
  uint16_t optional_size = 0;
  std::memcpy(&optional_size, bytes.data() + coff_header(bytes) + 16, 2);
  return coff_header(bytes) + 20 + optional_size;
}
// The section header of `name` (eight bytes or fewer).
uint32_t section_header(const std::vector<std::byte>& bytes, const std::string& name) {
  uint16_t count = 0;
  std::memcpy(&count, bytes.data() + coff_header(bytes) + 2, 2);
  for (uint32_t i = 0; i < count; ++i) {
    const uint32_t at = section_table(bytes) + i * 40;
    if (std::strncmp(reinterpret_cast<const char*>(bytes.data() + at), name.c_str(), 8) == 0)
      return at;
  }
  ADD_FAILURE() << "no section " << name;
  return 0;
}
template <typename T>
void put(std::vector<std::byte>& bytes, uint64_t at, T value) {
  std::memcpy(bytes.data() + at, &value, sizeof value);
}

TEST_F(PeFixture, AnArm64DllIsReadWithItsMachine) {
  auto bytes = read_bytes(kFixtureDir / "pe_sm_80.dll");
  put<uint16_t>(bytes, coff_header(bytes), archfit::binary::pe::kMachineArm64);
  const FileScan arm = scan(bytes, "arm64.dll");
  EXPECT_EQ(arm.format, FileFormat::pe);
  EXPECT_EQ(arm.machine, 183);  // aarch64, as a Linux ARM .so says
  EXPECT_EQ(identities(arm, true), identities(scan(kFixtureDir / "pe_sm_80.dll"), true));
}

TEST_F(PeFixture, A32BitImageIsNotADeviceCodeFile) {
  auto bytes = read_bytes(kFixtureDir / "pe_sm_80.dll");
  put<uint16_t>(bytes, coff_header(bytes) + 20, archfit::binary::pe::kOptionalMagicPe32);
  const FileScan pe32 = scan(bytes, "x86.dll");
  EXPECT_EQ(pe32.format, FileFormat::other);
  EXPECT_TRUE(pe32.ok());
}

TEST_F(PeFixture, ADllCutAtEveryLengthIsAProblemWithAnOffsetAndNeverACrash) {
  const auto whole = read_bytes(kFixtureDir / "pe_sm_80.dll");
  const uint32_t fatbin = section_header(whole, ".nv_fatb");
  uint32_t fatbin_offset = 0;
  std::memcpy(&fatbin_offset, whole.data() + fatbin + 20, 4);
  // Every cut inside the headers and the section table, then every 97th byte.
  for (uint64_t length = 2; length < whole.size(); length += length < 1024 ? 1 : 97) {
    const std::vector<std::byte> cut(whole.begin(), whole.begin() + length);
    const FileScan file = scan(cut, "cut.dll");
    EXPECT_EQ(file.format, FileFormat::pe) << length;
    if (length <= fatbin_offset) {
      // The sections past the cut are lost, and that is said.
      EXPECT_FALSE(file.ok()) << "cut at " << length;
      EXPECT_TRUE(file.images.empty()) << length;
    }
    for (const auto& problem : file.problems)
      EXPECT_NE(problem.message.find("offset 0x"), std::string::npos) << problem.message;
  }
}

TEST_F(PeFixture, AbsurdSectionCountIsAnErrorNamingTheTable) {
  auto bytes = read_bytes(kFixtureDir / "pe_sm_80.dll");
  put<uint16_t>(bytes, coff_header(bytes) + 2, 0xFFFF);
  const FileScan file = scan(bytes, "count.dll");
  ASSERT_FALSE(file.ok());
  EXPECT_NE(problems_of(file).find("PE section table (65535 headers of 40 bytes) extends past"),
            std::string::npos)
      << problems_of(file);
  EXPECT_THROW(archfit::binary::read_pe(ByteReader(bytes)), archfit::binary::ScanError);
}

TEST_F(PeFixture, ASectionPastTheFileIsReportedAndTheOthersStillScanned) {
  auto bytes = read_bytes(kFixtureDir / "pe_several.dll");
  const uint32_t rdata = section_header(bytes, ".rdata");
  put<uint32_t>(bytes, rdata + 20, 0x7FFFFFF0);  // PointerToRawData
  const FileScan file = scan(bytes, "past.dll");
  EXPECT_NE(problems_of(file).find("section .rdata (offset 0x7ffffff0"), std::string::npos)
      << problems_of(file);
  EXPECT_EQ(identities(file, true), identities(scan(kFixtureDir / "pe_several.dll"), true));
}

TEST_F(PeFixture, OverlappingSectionsAreReportedAndTheirImagesCountedOnce) {
  auto bytes = read_bytes(kFixtureDir / "pe_sm_80.dll");
  const uint32_t fatbin = section_header(bytes, ".nv_fatb");
  const uint32_t rdata = section_header(bytes, ".rdata");
  // .rdata now points at .nv_fatb's bytes.
  uint32_t fatbin_offset = 0, fatbin_size = 0;
  std::memcpy(&fatbin_offset, bytes.data() + fatbin + 20, 4);
  std::memcpy(&fatbin_size, bytes.data() + fatbin + 16, 4);
  put<uint32_t>(bytes, rdata + 20, fatbin_offset);
  put<uint32_t>(bytes, rdata + 16, fatbin_size);
  put<uint32_t>(bytes, rdata + 8, fatbin_size);
  const FileScan file = scan(bytes, "overlap.dll");
  EXPECT_NE(problems_of(file).find("overlaps section"), std::string::npos) << problems_of(file);
  EXPECT_EQ(file.images.size(), scan(kFixtureDir / "sm_80.fatbin").images.size());
}

TEST_F(PeFixture, ADamagedImportTableIsAProblemAndTheImagesAreStillRead) {
  auto bytes = read_bytes(kFixtureDir / "pe_sm_80.dll");
  // Data directory 1 (imports) at an RVA no section holds.
  const uint32_t directories = coff_header(bytes) + 20 + 112;
  put<uint32_t>(bytes, directories + 8, 0x7FFF0000);
  const FileScan file = scan(bytes, "imports.dll");
  EXPECT_NE(problems_of(file).find("import table at RVA 0x7fff0000"), std::string::npos)
      << problems_of(file);
  EXPECT_EQ(identities(file, true), identities(scan(kFixtureDir / "pe_sm_80.dll"), true));
}

TEST(PeReader, MzWithoutAPeHeaderIsNotAWindowsBinary) {
  std::vector<std::byte> dos(256, std::byte{0});
  dos[0] = std::byte{'M'};
  dos[1] = std::byte{'Z'};
  put<uint32_t>(dos, 0x3C, 0x80);  // points inside the file, at no "PE\0\0"
  const FileScan file = scan(dos, "dos.exe");
  EXPECT_EQ(file.format, FileFormat::other);
  EXPECT_TRUE(file.ok());
}

TEST(PeReader, AHeaderPointerPastTheEndIsAnErrorAtItsOffset) {
  std::vector<std::byte> bytes(128, std::byte{0});
  bytes[0] = std::byte{'M'};
  bytes[1] = std::byte{'Z'};
  put<uint32_t>(bytes, 0x3C, 0x10000);
  const FileScan file = scan(bytes, "short.dll");
  EXPECT_EQ(file.format, FileFormat::pe);
  ASSERT_FALSE(file.ok());
  EXPECT_NE(problems_of(file).find("at offset 0x10000: PE signature and COFF header needs"),
            std::string::npos)
      << problems_of(file);
}

}  // namespace
