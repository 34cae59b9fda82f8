// Scans every file tests/fixtures builds with nvcc and asserts the exact list
// of images in it. The expectations were worked out from the files themselves
// (readelf, and an independent Python walk of the fatbin entry headers with the
// payloads decompressed), not from what the scanner prints, so that a scanner
// bug shows here as a diff. Measured with nvcc 13.0 (V13.0.88).
//
// What nvcc 13.0 emits, in brief (docs/cuda-binaries.md):
// - Every entry flag word has 0x11 (64-bit, Linux); `a` adds 0x100000, `f`
//   0x200000, ZSTD 0x8000, LZ4 0x2000, -G 0x2; SASS for sm_100 and later adds
//   0x1000000. The entry version is 1.8 for every cubin (EI_ABIVERSION 8, so
//   ELF ABI V2 even for sm_75), 9.0 for PTX and 1.65 for LTO-IR.
// - `nvcc -shared` always runs nvlink. Without -rdc the library gets a second
//   container, first in .nv_fatbin: the device-link output, with one SASS entry
//   per real arch of the build, flagged like the translation unit's own entry
//   (same sm, variant, compression and -G bit), holding an nvlink cubin with no
//   kernels (e_flags high byte 0x05; ptxas output has 0x06, 0x09 with
//   -lineinfo, 0x0e with -G). With PTX only, that container is empty (size 0).
// - With -rdc there is no separate device-link container: .nv_fatbin holds the
//   device-linked cubin (ET_EXEC, the kernels in it) and __nv_relfatbin one
//   container per translation unit with its ET_REL cubin (ZSTD by default).
// - SASS is stored uncompressed unless -Xfatbin -compress-all; PTX, -G SASS,
//   relocatable cubins and LTO-IR are ZSTD; --compress-mode=speed makes LZ4.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "binary/file_scan.hpp"

namespace {

using namespace archfit::binary;
using enum ImageKind;
using enum Variant;
using enum Compression;

namespace fs = std::filesystem;

constexpr std::string_view kNvFatbin = ".nv_fatbin";
constexpr std::string_view kRelFatbin = "__nv_relfatbin";
constexpr std::string_view kFatbinFile = "(fatbin)";  // a standalone .fatbin
constexpr std::string_view kWholeFile = "(file)";     // a standalone .cubin or .ptx

// An ET_REL cubin inside a compressed entry is relocatable, but the entry
// header does not say so: only a scan that reads the payload (deep) knows.
enum class Reloc { no, yes, deep_only };

struct Expected {
  ImageKind kind;
  uint32_t sm;
  Variant variant;
  Compression compression;
  uint8_t elf_abi;           // SASS: 2 (EI_ABIVERSION 8); 0 otherwise
  std::string_view ptx_isa;  // PTX: "9.0"; empty otherwise
  std::string_view section;
  Reloc relocatable;
  bool debug;
  std::string_view identifier;
  uint32_t e_flags;  // SASS: the cubin's own e_flags, checked by the deep scan; 0 otherwise
};

struct Fixture {
  std::string_view file;
  FileFormat format;
  uint64_t containers;
  std::vector<Expected> images;
};

// The columns of every row below: kind, sm, variant, compression, elf_abi,
// ptx_isa, section, relocatable, debug, identifier, e_flags.
const std::vector<Fixture>& fixtures() {
  // clang-format off: one image a row reads as a table
  static const std::vector<Fixture> table = {
      // --- SASS, one arch per build -------------------------------------------------
      // nvcc 13.0: V2 cubins throughout; low e_flags byte 0x04 for sm_75..sm_90,
      // 0x02 from sm_100 on; the SM in bits 8-15.
      // A shared library: the device-link (nvlink) container, then the one of kernels.cu.
      {"sm_75.so",
       FileFormat::elf,
       2,
       {{sass, 75, plain, none, 2, "", kNvFatbin, Reloc::no, false, "", 0x05004b04},
        {sass, 75, plain, none, 2, "", kNvFatbin, Reloc::no, false, "", 0x06004b04}}},
      {"sm_75.o",
       FileFormat::elf,
       1,
       {{sass, 75, plain, none, 2, "", kNvFatbin, Reloc::no, false, "", 0x06004b04}}},
      {"sm_75.cubin",
       FileFormat::cubin,
       0,
       {{sass, 75, plain, none, 2, "", kWholeFile, Reloc::no, false, "", 0x06004b04}}},
      {"sm_75.fatbin",
       FileFormat::fatbin,
       1,
       {{sass, 75, plain, none, 2, "", kFatbinFile, Reloc::no, false, "", 0x06004b04}}},

      {"sm_80.so",
       FileFormat::elf,
       2,
       {{sass, 80, plain, none, 2, "", kNvFatbin, Reloc::no, false, "", 0x05005004},
        {sass, 80, plain, none, 2, "", kNvFatbin, Reloc::no, false, "", 0x06005004}}},
      {"sm_80.o",
       FileFormat::elf,
       1,
       {{sass, 80, plain, none, 2, "", kNvFatbin, Reloc::no, false, "", 0x06005004}}},
      {"sm_80.cubin",
       FileFormat::cubin,
       0,
       {{sass, 80, plain, none, 2, "", kWholeFile, Reloc::no, false, "", 0x06005004}}},
      {"sm_80.fatbin",
       FileFormat::fatbin,
       1,
       {{sass, 80, plain, none, 2, "", kFatbinFile, Reloc::no, false, "", 0x06005004}}},

      // Two real archs: each container holds one entry per arch, in -gencode order.
      {"sm_86_sm_89.so",
       FileFormat::elf,
       2,
       {{sass, 86, plain, none, 2, "", kNvFatbin, Reloc::no, false, "", 0x05005604},
        {sass, 89, plain, none, 2, "", kNvFatbin, Reloc::no, false, "", 0x05005904},
        {sass, 86, plain, none, 2, "", kNvFatbin, Reloc::no, false, "", 0x06005604},
        {sass, 89, plain, none, 2, "", kNvFatbin, Reloc::no, false, "", 0x06005904}}},
      {"sm_86_sm_89.o",
       FileFormat::elf,
       1,
       {{sass, 86, plain, none, 2, "", kNvFatbin, Reloc::no, false, "", 0x06005604},
        {sass, 89, plain, none, 2, "", kNvFatbin, Reloc::no, false, "", 0x06005904}}},
      {"sm_86_sm_89.fatbin",
       FileFormat::fatbin,
       1,
       {{sass, 86, plain, none, 2, "", kFatbinFile, Reloc::no, false, "", 0x06005604},
        {sass, 89, plain, none, 2, "", kFatbinFile, Reloc::no, false, "", 0x06005904}}},

      // nvcc 13.0: sm_90a entries carry flag 0x100000; e_flags is the same as
      // plain sm_90. A standalone cubin says `a` in .nv.compat (record 02 09 01 00)
      // and in its ptxas command line (-arch sm_90a).
      {"sm_90a.so",
       FileFormat::elf,
       2,
       {{sass, 90, arch_specific, none, 2, "", kNvFatbin, Reloc::no, false, "", 0x05005a04},
        {sass, 90, arch_specific, none, 2, "", kNvFatbin, Reloc::no, false, "", 0x06005a04}}},
      {"sm_90a.o",
       FileFormat::elf,
       1,
       {{sass, 90, arch_specific, none, 2, "", kNvFatbin, Reloc::no, false, "", 0x06005a04}}},
      {"sm_90a.cubin",
       FileFormat::cubin,
       0,
       {{sass, 90, arch_specific, none, 2, "", kWholeFile, Reloc::no, false, "", 0x06005a04}}},
      {"sm_90a.fatbin",
       FileFormat::fatbin,
       1,
       {{sass, 90, arch_specific, none, 2, "", kFatbinFile, Reloc::no, false, "", 0x06005a04}}},

      // nvcc 13.0: sm_100a entries carry flags 0x1100011 (header 112 bytes; the
      // device-link entry's is 96).
      {"sm_100a.so",
       FileFormat::elf,
       2,
       {{sass, 100, arch_specific, none, 2, "", kNvFatbin, Reloc::no, false, "", 0x05006402},
        {sass, 100, arch_specific, none, 2, "", kNvFatbin, Reloc::no, false, "", 0x06006402}}},
      {"sm_100a.cubin",
       FileFormat::cubin,
       0,
       {{sass, 100, arch_specific, none, 2, "", kWholeFile, Reloc::no, false, "", 0x06006402}}},
      {"sm_100a.fatbin",
       FileFormat::fatbin,
       1,
       {{sass, 100, arch_specific, none, 2, "", kFatbinFile, Reloc::no, false, "", 0x06006402}}},

      // nvcc 13.0: sm_100f entries carry flag 0x200000 (flags 0x1200011). The
      // cubin's .nv.compat is the same as plain sm_100's (02 09 00 00): only the
      // ptxas command line in .note.nv.tkinfo (-arch sm_100f) says `f`.
      {"sm_100f.so",
       FileFormat::elf,
       2,
       {{sass, 100, family_specific, none, 2, "", kNvFatbin, Reloc::no, false, "", 0x05006402},
        {sass, 100, family_specific, none, 2, "", kNvFatbin, Reloc::no, false, "", 0x06006402}}},
      {"sm_100f.o",
       FileFormat::elf,
       1,
       {{sass, 100, family_specific, none, 2, "", kNvFatbin, Reloc::no, false, "", 0x06006402}}},
      {"sm_100f.cubin",
       FileFormat::cubin,
       0,
       {{sass, 100, family_specific, none, 2, "", kWholeFile, Reloc::no, false, "", 0x06006402}}},
      {"sm_100f.fatbin",
       FileFormat::fatbin,
       1,
       {{sass, 100, family_specific, none, 2, "", kFatbinFile, Reloc::no, false, "", 0x06006402}}},

      {"sm_103f.so",
       FileFormat::elf,
       2,
       {{sass, 103, family_specific, none, 2, "", kNvFatbin, Reloc::no, false, "", 0x05006702},
        {sass, 103, family_specific, none, 2, "", kNvFatbin, Reloc::no, false, "", 0x06006702}}},
      {"sm_103f.cubin",
       FileFormat::cubin,
       0,
       {{sass, 103, family_specific, none, 2, "", kWholeFile, Reloc::no, false, "", 0x06006702}}},

      // Thor: sm_110 (sm_101 before CUDA 13).
      {"sm_110.so",
       FileFormat::elf,
       2,
       {{sass, 110, plain, none, 2, "", kNvFatbin, Reloc::no, false, "", 0x05006e02},
        {sass, 110, plain, none, 2, "", kNvFatbin, Reloc::no, false, "", 0x06006e02}}},
      {"sm_110.cubin",
       FileFormat::cubin,
       0,
       {{sass, 110, plain, none, 2, "", kWholeFile, Reloc::no, false, "", 0x06006e02}}},

      // nvcc 13.0: sm_120, sm_120a and sm_120f cubins share e_flags 0x06007802;
      // the entries differ in flags only (0x1000011, 0x1100011, 0x1200011).
      {"sm_120.so",
       FileFormat::elf,
       2,
       {{sass, 120, plain, none, 2, "", kNvFatbin, Reloc::no, false, "", 0x05007802},
        {sass, 120, plain, none, 2, "", kNvFatbin, Reloc::no, false, "", 0x06007802}}},
      {"sm_120.fatbin",
       FileFormat::fatbin,
       1,
       {{sass, 120, plain, none, 2, "", kFatbinFile, Reloc::no, false, "", 0x06007802}}},
      {"sm_120a.so",
       FileFormat::elf,
       2,
       {{sass, 120, arch_specific, none, 2, "", kNvFatbin, Reloc::no, false, "", 0x05007802},
        {sass, 120, arch_specific, none, 2, "", kNvFatbin, Reloc::no, false, "", 0x06007802}}},
      {"sm_120a.cubin",
       FileFormat::cubin,
       0,
       {{sass, 120, arch_specific, none, 2, "", kWholeFile, Reloc::no, false, "", 0x06007802}}},
      {"sm_120_sm_120a.so",
       FileFormat::elf,
       2,
       {{sass, 120, plain, none, 2, "", kNvFatbin, Reloc::no, false, "", 0x05007802},
        {sass, 120, arch_specific, none, 2, "", kNvFatbin, Reloc::no, false, "", 0x05007802},
        {sass, 120, plain, none, 2, "", kNvFatbin, Reloc::no, false, "", 0x06007802},
        {sass, 120, arch_specific, none, 2, "", kNvFatbin, Reloc::no, false, "", 0x06007802}}},
      {"sm_120f.so",
       FileFormat::elf,
       2,
       {{sass, 120, family_specific, none, 2, "", kNvFatbin, Reloc::no, false, "", 0x05007802},
        {sass, 120, family_specific, none, 2, "", kNvFatbin, Reloc::no, false, "", 0x06007802}}},
      {"sm_120f.cubin",
       FileFormat::cubin,
       0,
       {{sass, 120, family_specific, none, 2, "", kWholeFile, Reloc::no, false, "", 0x06007802}}},
      {"sm_120f.fatbin",
       FileFormat::fatbin,
       1,
       {{sass, 120, family_specific, none, 2, "", kFatbinFile, Reloc::no, false, "", 0x06007802}}},

      {"sm_121.so",
       FileFormat::elf,
       2,
       {{sass, 121, plain, none, 2, "", kNvFatbin, Reloc::no, false, "", 0x05007902},
        {sass, 121, plain, none, 2, "", kNvFatbin, Reloc::no, false, "", 0x06007902}}},
      {"sm_121.cubin",
       FileFormat::cubin,
       0,
       {{sass, 121, plain, none, 2, "", kWholeFile, Reloc::no, false, "", 0x06007902}}},

      // --- PTX only -----------------------------------------------------------------
      // nvcc 13.0: PTX entries are ZSTD (flags 0x8011) with version 9.0; the
      // library's device-link container is there but empty, so 2 containers.
      {"compute_90.so",
       FileFormat::elf,
       2,
       {{ptx, 90, plain, zstd, 0, "9.0", kNvFatbin, Reloc::no, false, "", 0}}},
      {"compute_90.o",
       FileFormat::elf,
       1,
       {{ptx, 90, plain, zstd, 0, "9.0", kNvFatbin, Reloc::no, false, "", 0}}},
      {"compute_90.fatbin",
       FileFormat::fatbin,
       1,
       {{ptx, 90, plain, zstd, 0, "9.0", kFatbinFile, Reloc::no, false, "", 0}}},
      {"compute_90.ptx",
       FileFormat::ptx,
       0,
       {{ptx, 90, plain, none, 0, "9.0", kWholeFile, Reloc::no, false, "", 0}}},
      // nvcc 13.0: compute_100f entries carry flags 0x208011; the text says .target sm_100f.
      {"compute_100f.so",
       FileFormat::elf,
       2,
       {{ptx, 100, family_specific, zstd, 0, "9.0", kNvFatbin, Reloc::no, false, "", 0}}},
      {"compute_100f.fatbin",
       FileFormat::fatbin,
       1,
       {{ptx, 100, family_specific, zstd, 0, "9.0", kFatbinFile, Reloc::no, false, "", 0}}},
      {"compute_100f.ptx",
       FileFormat::ptx,
       0,
       {{ptx, 100, family_specific, none, 0, "9.0", kWholeFile, Reloc::no, false, "", 0}}},

      // --- compression (sm_80 SASS + compute_80 PTX) ---------------------------------
      // -Xfatbin -compress-all: SASS too is ZSTD (flags 0x8011), the device-link entry as well.
      {"compress_all.so",
       FileFormat::elf,
       2,
       {{sass, 80, plain, zstd, 2, "", kNvFatbin, Reloc::no, false, "", 0x05005004},
        {sass, 80, plain, zstd, 2, "", kNvFatbin, Reloc::no, false, "", 0x06005004},
        {ptx, 80, plain, zstd, 0, "9.0", kNvFatbin, Reloc::no, false, "", 0}}},
      {"compress_all.fatbin",
       FileFormat::fatbin,
       1,
       {{sass, 80, plain, zstd, 2, "", kFatbinFile, Reloc::no, false, "", 0x06005004},
        {ptx, 80, plain, zstd, 0, "9.0", kFatbinFile, Reloc::no, false, "", 0}}},
      // --compress-mode=speed alone: PTX becomes LZ4 (flags 0x2011), SASS stays uncompressed.
      {"compress_speed.so",
       FileFormat::elf,
       2,
       {{sass, 80, plain, none, 2, "", kNvFatbin, Reloc::no, false, "", 0x05005004},
        {sass, 80, plain, none, 2, "", kNvFatbin, Reloc::no, false, "", 0x06005004},
        {ptx, 80, plain, lz4, 0, "9.0", kNvFatbin, Reloc::no, false, "", 0}}},
      {"compress_speed.fatbin",
       FileFormat::fatbin,
       1,
       {{sass, 80, plain, none, 2, "", kFatbinFile, Reloc::no, false, "", 0x06005004},
        {ptx, 80, plain, lz4, 0, "9.0", kFatbinFile, Reloc::no, false, "", 0}}},
      // -Xfatbin -compress-all --compress-mode=speed: everything LZ4.
      {"compress_all_speed.so",
       FileFormat::elf,
       2,
       {{sass, 80, plain, lz4, 2, "", kNvFatbin, Reloc::no, false, "", 0x05005004},
        {sass, 80, plain, lz4, 2, "", kNvFatbin, Reloc::no, false, "", 0x06005004},
        {ptx, 80, plain, lz4, 0, "9.0", kNvFatbin, Reloc::no, false, "", 0}}},
      // --no-compress: PTX too is stored as text (flags 0x11).
      {"no_compress.so",
       FileFormat::elf,
       2,
       {{sass, 80, plain, none, 2, "", kNvFatbin, Reloc::no, false, "", 0x05005004},
        {sass, 80, plain, none, 2, "", kNvFatbin, Reloc::no, false, "", 0x06005004},
        {ptx, 80, plain, none, 0, "9.0", kNvFatbin, Reloc::no, false, "", 0}}},
      {"no_compress.fatbin",
       FileFormat::fatbin,
       1,
       {{sass, 80, plain, none, 2, "", kFatbinFile, Reloc::no, false, "", 0x06005004},
        {ptx, 80, plain, none, 0, "9.0", kFatbinFile, Reloc::no, false, "", 0}}},

      // --- debug information (sm_80) --------------------------------------------------
      // nvcc 13.0 -G: flags 0x8013 (debug, ZSTD), the source name as given to
      // nvcc in the entry (header 80 bytes), e_flags high byte 0x0e. nvlink
      // writes its inputs' names, each followed by a space: "kernels.cu ".
      // A standalone -G cubin has no entry header; its .debug_info says debug.
      {"debug.so",
       FileFormat::elf,
       2,
       {{sass, 80, plain, zstd, 2, "", kNvFatbin, Reloc::no, true, "kernels.cu ", 0x05005004},
        {sass, 80, plain, zstd, 2, "", kNvFatbin, Reloc::no, true, "kernels.cu", 0x0e005004}}},
      {"debug.o",
       FileFormat::elf,
       1,
       {{sass, 80, plain, zstd, 2, "", kNvFatbin, Reloc::no, true, "kernels.cu", 0x0e005004}}},
      {"debug.cubin",
       FileFormat::cubin,
       0,
       {{sass, 80, plain, none, 2, "", kWholeFile, Reloc::no, true, "", 0x0e005004}}},
      {"debug.fatbin",
       FileFormat::fatbin,
       1,
       {{sass, 80, plain, zstd, 2, "", kFatbinFile, Reloc::no, true, "kernels.cu", 0x0e005004}}},
      // nvcc 13.0 -lineinfo: the source name but no debug bit (flags 0x11), SASS
      // uncompressed, e_flags high byte 0x09; the cubin has no .debug_info.
      {"lineinfo.so",
       FileFormat::elf,
       2,
       {{sass, 80, plain, none, 2, "", kNvFatbin, Reloc::no, false, "kernels.cu ", 0x05005004},
        {sass, 80, plain, none, 2, "", kNvFatbin, Reloc::no, false, "kernels.cu", 0x09005004}}},
      {"lineinfo.cubin",
       FileFormat::cubin,
       0,
       {{sass, 80, plain, none, 2, "", kWholeFile, Reloc::no, false, "", 0x09005004}}},
      {"lineinfo.fatbin",
       FileFormat::fatbin,
       1,
       {{sass, 80, plain, none, 2, "", kFatbinFile, Reloc::no, false, "kernels.cu", 0x09005004}}},

      // nvcc 13.0 -G: the tkinfo note holds "... -g -o debug_named_sm_90a.cubin
      // -arch sm_90 -m 64": the variant is the one after -arch, not the file name's.
      {"debug_named_sm_90a.cubin",
       FileFormat::cubin,
       0,
       {{sass, 90, plain, none, 2, "", kWholeFile, Reloc::no, true, "", 0x0e005a04}}},

      // --- relocatable device code (sm_80) -------------------------------------------
      // rdc.o/.cubin/.fatbin: rdc_kernel.cu alone, an ET_REL cubin, ZSTD in a
      // container. rdc.so: rdc_kernel.cu + rdc_device.cu, device-linked by nvlink
      // into one ET_EXEC cubin in .nv_fatbin (no separate device-link container),
      // and one __nv_relfatbin container per translation unit.
      {"rdc.o",
       FileFormat::elf,
       1,
       {{sass, 80, plain, zstd, 2, "", kRelFatbin, Reloc::yes, false, "", 0x06005004}}},
      {"rdc.cubin",
       FileFormat::cubin,
       0,
       {{sass, 80, plain, none, 2, "", kWholeFile, Reloc::yes, false, "", 0x06005004}}},
      {"rdc.fatbin",
       FileFormat::fatbin,
       1,
       {{sass, 80, plain, zstd, 2, "", kFatbinFile, Reloc::deep_only, false, "", 0x06005004}}},
      {"rdc.so",
       FileFormat::elf,
       3,
       {{sass, 80, plain, none, 2, "", kNvFatbin, Reloc::no, false, "", 0x06005004},
        {sass, 80, plain, zstd, 2, "", kRelFatbin, Reloc::yes, false, "", 0x06005004},
        {sass, 80, plain, zstd, 2, "", kRelFatbin, Reloc::yes, false, "", 0x06005004}}},

      // --- LTO-IR ---------------------------------------------------------------------
      // nvcc 13.0 code=lto_90: kind 8, version 1.65, flags 0x18011 (the 0x8000
      // bit is set, but the payload is no zstd frame; archfit does not open it).
      // LTO-IR is always an input to device linking.
      {"lto_90.o",
       FileFormat::elf,
       1,
       {{lto, 90, plain, zstd, 0, "", kRelFatbin, Reloc::yes, false, "", 0}}},
      {"lto_90.fatbin",
       FileFormat::fatbin,
       1,
       {{lto, 90, plain, zstd, 0, "", kFatbinFile, Reloc::yes, false, "", 0}}},
      // code=[sm_90,lto_90] -shared: nvlink links the sm_90 ET_REL cubin.
      {"lto_90_sm_90.so",
       FileFormat::elf,
       2,
       {{sass, 90, plain, none, 2, "", kNvFatbin, Reloc::no, false, "", 0x06005a04},
        {sass, 90, plain, zstd, 2, "", kRelFatbin, Reloc::yes, false, "", 0x06005a04},
        {lto, 90, plain, zstd, 0, "", kRelFatbin, Reloc::yes, false, "", 0}}},
  };
  // clang-format on
  return table;
}

const Fixture* find_fixture(std::string_view file) {
  for (const Fixture& fixture : fixtures()) {
    if (fixture.file == file) return &fixture;
  }
  return nullptr;
}

// The expectations were measured with this nvcc; another release may differ
// legitimately (PTX ISA version, entry header sizes, compression defaults).
constexpr std::string_view kMeasuredToolkit = "Cuda compilation tools, release 13.0, V13.0.88";

const fs::path kFixtureDir = ARCHFIT_FIXTURE_DIR;
const fs::path kManifest = kFixtureDir / "fixtures.txt";

// tests/fixtures writes the manifest only when it found nvcc.
bool fixtures_built() { return fs::exists(kManifest); }

// Every test skips, saying why, where the build had no nvcc to make fixtures.
class FixtureScan : public testing::Test {
 protected:
  void SetUp() override {
    if (!fixtures_built()) {
      GTEST_SKIP() << "no nvcc-built fixtures in " << kFixtureDir.string()
                   << " (nvcc was not found at configure time; set ARCHFIT_NVCC or CUDA_HOME)";
    }
  }
};

std::string version_text(const Version& version) {
  return version == Version{} ? std::string("-") : version.to_string();
}

// sm_90a, compute_100f, lto_90: as Image::arch_name() spells them.
std::string arch_name(ImageKind kind, uint32_t sm, Variant variant) {
  Image image;
  image.kind = kind;
  image.sm = sm;
  image.variant = variant;
  return image.arch_name();
}

std::string describe(const Expected& e, bool deep) {
  const bool relocatable =
      e.relocatable == Reloc::yes || (deep && e.relocatable == Reloc::deep_only);
  std::ostringstream out;
  out << arch_name(e.kind, e.sm, e.variant) << ' ' << to_string(e.compression)
      << " abi=" << int(e.elf_abi) << " isa=" << (e.ptx_isa.empty() ? "-" : e.ptx_isa) << ' '
      << e.section << (relocatable ? " relocatable" : "") << (e.debug ? " debug" : "") << " id='"
      << e.identifier << "'";
  if (deep && e.kind == sass) out << " e_flags=" << hex(e.e_flags);
  return out.str();
}

std::string describe(const Image& image, bool deep) {
  std::ostringstream out;
  out << arch_name(image.kind, image.sm, image.variant) << ' ' << to_string(image.compression)
      << " abi=" << int(image.elf_abi) << " isa=" << version_text(image.ptx_isa) << ' '
      << image.section << (image.relocatable ? " relocatable" : "") << (image.debug ? " debug" : "")
      << " id='" << image.identifier << "'";
  if (deep && image.kind == sass) {
    out << " e_flags="
        << (image.payload && image.payload->cubin_e_flags ? hex(*image.payload->cubin_e_flags)
                                                          : std::string("?"));
  }
  return out.str();
}

// Everything wrong with one image, in words; empty when it is as expected.
std::vector<std::string> mismatches(const Expected& e, const Image& image, bool deep) {
  std::vector<std::string> out;
  auto check = [&](bool ok, std::string what) {
    if (!ok) out.push_back(std::move(what));
  };
  const bool relocatable =
      e.relocatable == Reloc::yes || (deep && e.relocatable == Reloc::deep_only);
  check(image.kind == e.kind, "kind");
  check(image.sm == e.sm, "sm");
  check(image.variant == e.variant, "variant");
  check(image.compression == e.compression, "compression");
  check(image.elf_abi == e.elf_abi, "elf_abi");
  check(version_text(image.ptx_isa) == (e.ptx_isa.empty() ? "-" : e.ptx_isa), "ptx_isa");
  check(image.section == e.section, "section");
  check(image.relocatable == relocatable, "relocatable");
  check(image.debug == e.debug, "debug");
  check(image.identifier == e.identifier, "identifier");
  if (!deep) return out;
  // The deep scan read the payload: it must have found what the entry header
  // describes, and it must have been read at all (else "no disagreements" is empty praise).
  if (!image.payload) {
    out.push_back("no payload information");
    return out;
  }
  const PayloadInfo& payload = *image.payload;
  check(payload.error.empty(), "payload error: " + payload.error);
  for (const std::string& disagreement : payload.disagreements)
    out.push_back("disagreement: " + disagreement);
  if (e.kind == sass) {
    check(payload.cubin_e_flags == e.e_flags, "e_flags");
    check(payload.cubin_abi_version == uint8_t{8}, "EI_ABIVERSION");
    check(payload.cubin_sm == e.sm, "cubin sm");
    check(payload.cubin_variant == e.variant, "cubin variant");
    check(payload.cubin_elf_type == (relocatable ? 1 : 2), "cubin e_type");
    check(payload.toolkit == kMeasuredToolkit, "toolkit: '" + payload.toolkit + "'");
  }
  if (e.kind == ptx) {
    check(payload.ptx_version && version_text(*payload.ptx_version) == e.ptx_isa, ".version");
    const std::string target =
        "sm_" + std::to_string(e.sm) + std::string(variant_suffix(e.variant));
    check(payload.ptx_target == target, ".target '" + payload.ptx_target + "'");
  }
  return out;
}

// Scans one fixture and compares everything with its expectation; on a
// mismatch the message shows both lists side by side.
testing::AssertionResult scans_as_expected(std::string_view file, bool deep) {
  const Fixture* fixture = find_fixture(file);
  if (!fixture)
    return testing::AssertionFailure() << file << " has no expected image list in this test";
  const FileScan scan = scan_file(kFixtureDir / fixture->file, ScanOptions{.deep = deep});

  std::ostringstream problems;
  if (scan.unreadable) problems << "  unreadable\n";
  for (const ScanProblem& problem : scan.problems)
    problems << "  problem: " << problem.message << '\n';
  if (scan.format != fixture->format) {
    problems << "  format: expected " << to_string(fixture->format) << ", got "
             << to_string(scan.format) << '\n';
  }
  if (scan.containers != fixture->containers) {
    problems << "  containers: expected " << fixture->containers << ", got " << scan.containers
             << '\n';
  }
  bool images_differ = scan.images.size() != fixture->images.size();
  std::ostringstream table;
  const size_t rows = std::max(scan.images.size(), fixture->images.size());
  for (size_t i = 0; i < rows; ++i) {
    const Expected* expected = i < fixture->images.size() ? &fixture->images[i] : nullptr;
    const Image* actual = i < scan.images.size() ? &scan.images[i] : nullptr;
    std::vector<std::string> wrong;
    if (expected && actual) wrong = mismatches(*expected, *actual, deep);
    const bool row_differs = !expected || !actual || !wrong.empty();
    images_differ = images_differ || row_differs;
    table << (row_differs ? "  * " : "    ") << '[' << i
          << "] expected: " << (expected ? describe(*expected, deep) : "(none)") << '\n'
          << "        actual:   " << (actual ? describe(*actual, deep) : "(none)") << '\n';
    for (const std::string& what : wrong) table << "        differs in " << what << '\n';
  }
  if (problems.str().empty() && !images_differ) return testing::AssertionSuccess();
  return testing::AssertionFailure() << file << (deep ? " (deep scan)" : "") << ":\n"
                                     << problems.str() << table.str();
}

void expect_fixtures(std::initializer_list<std::string_view> files) {
  for (std::string_view file : files) EXPECT_TRUE(scans_as_expected(file, /*deep=*/false));
}

std::vector<std::string> manifest() {
  std::vector<std::string> names;
  std::ifstream in(kManifest);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) names.push_back(line);
  }
  return names;
}

TEST_F(FixtureScan, EveryFixtureTheBuildMakesHasAnExpectedImageList) {
  const std::vector<std::string> built = manifest();
  ASSERT_FALSE(built.empty());
  std::set<std::string_view> expected;
  for (const Fixture& fixture : fixtures()) {
    EXPECT_TRUE(expected.insert(fixture.file).second) << fixture.file << " is listed twice";
  }
  for (const std::string& name : built) {
    EXPECT_TRUE(expected.contains(name)) << name << " is built but has no expected image list";
    EXPECT_TRUE(fs::is_regular_file(kFixtureDir / name))
        << name << " is in the manifest but was not built";
  }
  for (std::string_view name : expected) {
    EXPECT_NE(std::find(built.begin(), built.end(), name), built.end())
        << name << " is expected but not built";
  }
}

TEST_F(FixtureScan, Sm75IsPlainSassWithElfAbiV2InEveryFormat) {
  expect_fixtures({"sm_75.so", "sm_75.o", "sm_75.cubin", "sm_75.fatbin"});
}

TEST_F(FixtureScan, Sm80IsPlainSassInEveryFormat) {
  expect_fixtures({"sm_80.so", "sm_80.o", "sm_80.cubin", "sm_80.fatbin"});
}

TEST_F(FixtureScan, SharedLibraryHasDeviceLinkContainerBeforeItsOwnWithOneSassImagePerArch) {
  expect_fixtures({"sm_86_sm_89.so", "sm_86_sm_89.o", "sm_86_sm_89.fatbin"});
}

TEST_F(FixtureScan, Sm90aIsArchSpecificSassInEveryFormat) {
  expect_fixtures({"sm_90a.so", "sm_90a.o", "sm_90a.cubin", "sm_90a.fatbin"});
}

TEST_F(FixtureScan, Sm100aIsArchSpecificSass) {
  expect_fixtures({"sm_100a.so", "sm_100a.cubin", "sm_100a.fatbin"});
}

TEST_F(FixtureScan, Sm100fIsFamilySpecificSassEvenInACubinWhoseCompatSectionLooksPlain) {
  expect_fixtures({"sm_100f.so", "sm_100f.o", "sm_100f.cubin", "sm_100f.fatbin"});
}

TEST_F(FixtureScan, Sm103fIsFamilySpecificSass) {
  expect_fixtures({"sm_103f.so", "sm_103f.cubin"});
}

TEST_F(FixtureScan, Sm110IsPlainSass) { expect_fixtures({"sm_110.so", "sm_110.cubin"}); }

TEST_F(FixtureScan, Sm120PlainArchAndFamilyImagesDifferOnlyInVariant) {
  expect_fixtures({"sm_120.so", "sm_120.fatbin", "sm_120a.so", "sm_120a.cubin", "sm_120f.so",
                   "sm_120f.cubin", "sm_120f.fatbin"});
}

TEST_F(FixtureScan, Sm120AndSm120aInOneLibraryAreTwoImagesOfOneSm) {
  expect_fixtures({"sm_120_sm_120a.so"});
}

TEST_F(FixtureScan, Sm121IsPlainSass) { expect_fixtures({"sm_121.so", "sm_121.cubin"}); }

TEST_F(FixtureScan, Compute90OnlyIsOneZstdPtxImageAndAnEmptyDeviceLinkContainer) {
  expect_fixtures({"compute_90.so", "compute_90.o", "compute_90.fatbin", "compute_90.ptx"});
}

TEST_F(FixtureScan, Compute100fIsFamilySpecificPtx) {
  expect_fixtures({"compute_100f.so", "compute_100f.fatbin", "compute_100f.ptx"});
}

TEST_F(FixtureScan, CompressAllStoresSassAsZstd) {
  expect_fixtures({"compress_all.so", "compress_all.fatbin"});
}

TEST_F(FixtureScan, CompressModeSpeedStoresPtxAsLz4AndLeavesSassUncompressed) {
  expect_fixtures({"compress_speed.so", "compress_speed.fatbin"});
}

TEST_F(FixtureScan, CompressAllWithModeSpeedStoresSassAsLz4) {
  expect_fixtures({"compress_all_speed.so"});
}

TEST_F(FixtureScan, NoCompressStoresPtxUncompressed) {
  expect_fixtures({"no_compress.so", "no_compress.fatbin"});
}

TEST_F(FixtureScan, DebugBuildIsMarkedDebugAndNamesItsSource) {
  expect_fixtures({"debug.so", "debug.o", "debug.cubin", "debug.fatbin"});
}

TEST_F(FixtureScan, DebugCubinVariantComesFromTheArchOptionNotFromTheFileName) {
  expect_fixtures({"debug_named_sm_90a.cubin"});
}

TEST_F(FixtureScan, LineinfoBuildNamesItsSourceButIsNotDebug) {
  expect_fixtures({"lineinfo.so", "lineinfo.cubin", "lineinfo.fatbin"});
}

TEST_F(FixtureScan, RelocatableDeviceCodeIsInNvRelfatbinAndDeviceLinkedIntoNvFatbin) {
  expect_fixtures({"rdc.so", "rdc.o", "rdc.cubin"});
}

TEST_F(FixtureScan, RelocatableFatbinIsKnownRelocatableOnlyOnceItsPayloadIsRead) {
  EXPECT_TRUE(scans_as_expected("rdc.fatbin", /*deep=*/false));
  EXPECT_TRUE(scans_as_expected("rdc.fatbin", /*deep=*/true));
}

TEST_F(FixtureScan, LtoIrIsARelocatableLtoImage) {
  expect_fixtures({"lto_90.o", "lto_90.fatbin", "lto_90_sm_90.so"});
}

// Deep: every payload decompresses, and the cubin's e_flags, EI_ABIVERSION,
// .nv.compat and toolkit note, and the PTX .version and .target, agree with
// the entry header: no disagreement and no payload error anywhere.
TEST_F(FixtureScan, DeepScanOfEveryFixtureFindsPayloadsThatAgreeWithTheirEntryHeaders) {
  for (const Fixture& fixture : fixtures())
    EXPECT_TRUE(scans_as_expected(fixture.file, /*deep=*/true));
}

}  // namespace
