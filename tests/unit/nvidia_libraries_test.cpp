// What any correct scanner must see in NVIDIA's own libraries (the CUDA
// toolkit's lib64, ARCHFIT_CUDA_LIB_DIR). A library that is absent skips its
// test and says so.
//
// The exact figures were measured on the CUDA 13.0 toolkit of the build
// machines (CUDA 13.0.88 with cuDNN 9 and NCCL 2; file sizes below) with
// `archfit scan --json` and checked against an independent walker (Python:
// section table read with struct, containers found by magic + header
// validation at any alignment, entries walked by their size fields) and
// `readelf -SW`; both agree on every count. They are asserted only on files of
// exactly the measured size; another build of a library is checked for the
// facts that hold for every build.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "binary/file_scan.hpp"
#include "binary/image.hpp"
#include "binary/tree_scan.hpp"

namespace archfit::binary {
namespace {

namespace fs = std::filesystem;

const fs::path kLibDir = ARCHFIT_CUDA_LIB_DIR;

// Every file under the library directory, scanned once (about a second for the
// 2.4 GB there with a warm page cache), by file name.
const std::map<std::string, FileScan>& directory_scan() {
  static const std::map<std::string, FileScan> scans = [] {
    std::map<std::string, FileScan> out;
    std::error_code error;
    if (!fs::is_directory(kLibDir, error)) return out;
    for (auto& file : scan_tree({kLibDir}).files) {
      std::string name = fs::path(file.path).filename().string();
      out.emplace(std::move(name), std::move(file));
    }
    return out;
  }();
  return scans;
}

// The scan of `name`, or nullptr when it is not there.
const FileScan* library(const std::string& name) {
  const auto& scans = directory_scan();
  const auto it = scans.find(name);
  return it == scans.end() ? nullptr : &it->second;
}

#define REQUIRE_LIBRARY(variable, name)     \
  const FileScan* variable = library(name); \
  if (!variable) GTEST_SKIP() << name << " is not in " << kLibDir << "; nothing to check it against"

// True when the file is the build the exact figures were measured on.
bool measured_build(const FileScan& scan, uint64_t size) {
  if (scan.file_size == size) return true;
  std::cout << "[ NOTE     ] " << scan.path << " is " << scan.file_size
            << " bytes, not the measured " << size
            << ": checking only what holds for every build\n";
  return false;
}

size_t count(const FileScan& scan, const std::function<bool(const Image&)>& predicate) {
  return std::count_if(scan.images.begin(), scan.images.end(), predicate);
}

size_t containers_in(const FileScan& scan, std::string_view section) {
  std::set<uint64_t> offsets;
  for (const auto& image : scan.images) {
    if (image.section == section) offsets.insert(image.container_offset);
  }
  return offsets.size();
}

std::string problems(const FileScan& scan) {
  std::string text;
  for (const auto& problem : scan.problems) text += "\n  " + problem.message;
  return text;
}

// An ELF section table read without the scanner's code: name -> [begin, end).
std::map<std::string, std::pair<uint64_t, uint64_t>> section_extents(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  auto read = [&](uint64_t offset, void* out, size_t size) {
    file.seekg(static_cast<std::streamoff>(offset));
    file.read(static_cast<char*>(out), static_cast<std::streamsize>(size));
    if (!file) throw std::runtime_error("cannot read " + path);
  };
  unsigned char header[64];
  read(0, header, sizeof header);
  uint64_t shoff;
  uint16_t shentsize, shnum, shstrndx;
  std::memcpy(&shoff, header + 0x28, 8);
  std::memcpy(&shentsize, header + 0x3a, 2);
  std::memcpy(&shnum, header + 0x3c, 2);
  std::memcpy(&shstrndx, header + 0x3e, 2);
  struct Raw {
    uint32_t name;
    uint64_t offset, size;
  };
  std::vector<Raw> raw(shnum);
  for (uint16_t i = 0; i < shnum; ++i) {
    unsigned char entry[64];
    read(shoff + uint64_t{i} * shentsize, entry, sizeof entry);
    std::memcpy(&raw[i].name, entry, 4);
    std::memcpy(&raw[i].offset, entry + 24, 8);
    std::memcpy(&raw[i].size, entry + 32, 8);
  }
  std::string names(raw.at(shstrndx).size, '\0');
  read(raw[shstrndx].offset, names.data(), names.size());
  std::map<std::string, std::pair<uint64_t, uint64_t>> out;
  for (const auto& r : raw) out[names.c_str() + r.name] = {r.offset, r.offset + r.size};
  return out;
}

// Every image lies inside the section it is said to come from.
void expect_images_inside_their_sections(const FileScan& scan) {
  const auto sections = section_extents(scan.path);
  for (const auto& image : scan.images) {
    const auto it = sections.find(image.section);
    ASSERT_NE(it, sections.end()) << image.section;
    ASSERT_GE(image.container_offset, it->second.first) << image.section;
    ASSERT_LE(image.payload_offset + image.size, it->second.second) << image.section;
  }
}

// =================================================================================

// libcufft.so.12 (286,542,352 bytes): .ldata (offset 0x81d874, 0x10926674
// bytes, flags WA) holds 23,983 containers of one entry each; .nv_fatbin
// (0x2a0 bytes) holds one.
TEST(NvidiaLibraries, CufftKeepsItsContainersInLdata) {
  REQUIRE_LIBRARY(cufft, "libcufft.so.12");
  EXPECT_TRUE(cufft->ok()) << problems(*cufft);
  const size_t ldata = count(*cufft, [](const Image& i) { return i.section == ".ldata"; });
  EXPECT_GT(ldata, 1000u);
  EXPECT_GT(ldata, count(*cufft, [](const Image& i) { return i.section == ".nv_fatbin"; }));
  expect_images_inside_their_sections(*cufft);
  if (!measured_build(*cufft, 286542352)) return;
  EXPECT_EQ(cufft->containers, 23984u);
  EXPECT_EQ(cufft->images.size(), 23984u);
  EXPECT_EQ(ldata, 23983u);
  EXPECT_EQ(containers_in(*cufft, ".ldata"), 23983u);
  EXPECT_EQ(containers_in(*cufft, ".nv_fatbin"), 1u);
}

// libcufft.so.12: 22,789 LZ4 entries (12,728 LTO-IR, 8,131 PTX, 1,930 SASS)
// and 1,195 ZSTD ones; its PTX is old (ISA 7.0 ×7,772, 7.5 ×291, 7.8 ×68) and
// 1,930 of its 3,125 cubins are V1 (entry version 1.7).
TEST(NvidiaLibraries, CufftHasLz4EntriesAndOldPtx) {
  REQUIRE_LIBRARY(cufft, "libcufft.so.12");
  const auto lz4 = [](const Image& i) { return i.compression == Compression::lz4; };
  EXPECT_GT(count(*cufft, lz4), 0u);
  for (const auto& image : cufft->images) {
    if (image.compression == Compression::none) continue;
    ASSERT_GT(image.compressed_size, 0u);
    ASSERT_LE(image.compressed_size, image.size);
    ASSERT_GT(image.uncompressed_size, 0u);
  }
  if (!measured_build(*cufft, 286542352)) return;
  EXPECT_EQ(count(*cufft, lz4), 22789u);
  EXPECT_EQ(count(*cufft, [](const Image& i) { return i.compression == Compression::zstd; }),
            1195u);
  EXPECT_EQ(count(*cufft, [&](const Image& i) { return lz4(i) && i.kind == ImageKind::lto; }),
            12728u);
  EXPECT_EQ(count(*cufft, [&](const Image& i) { return lz4(i) && i.kind == ImageKind::ptx; }),
            8131u);
  EXPECT_EQ(count(*cufft, [&](const Image& i) { return lz4(i) && i.kind == ImageKind::sass; }),
            1930u);
  EXPECT_EQ(count(*cufft,
                  [](const Image& i) {
                    return i.kind == ImageKind::ptx && i.ptx_isa.to_string() == "7.0";
                  }),
            7772u);
  EXPECT_EQ(count(*cufft,
                  [](const Image& i) {
                    return i.kind == ImageKind::ptx && i.ptx_isa.to_string() == "7.5";
                  }),
            291u);
  EXPECT_EQ(count(*cufft,
                  [](const Image& i) {
                    return i.kind == ImageKind::ptx && i.ptx_isa.to_string() == "7.8";
                  }),
            68u);
  EXPECT_EQ(
      count(*cufft, [](const Image& i) { return i.kind == ImageKind::sass && i.elf_abi == 1; }),
      1930u);
}

// libcublasLt.so.13 (541,595,600 bytes): 383 containers (one entry each) in
// .cask_resource; 2,782 containers with 5,737 entries in .nv_fatbin, which is
// also the number of __fatBinC_Wrapper_t records in .nvFatBinSegment (all
// version 1, all pointing into .nv_fatbin).
TEST(NvidiaLibraries, CublasLtKeepsContainersInCaskResource) {
  REQUIRE_LIBRARY(lt, "libcublasLt.so.13");
  EXPECT_TRUE(lt->ok()) << problems(*lt);
  EXPECT_GT(containers_in(*lt, ".cask_resource"), 0u);
  expect_images_inside_their_sections(*lt);
  if (!measured_build(*lt, 541595600)) return;
  EXPECT_EQ(count(*lt, [](const Image& i) { return i.section == ".cask_resource"; }), 383u);
  EXPECT_EQ(containers_in(*lt, ".cask_resource"), 383u);
  EXPECT_EQ(count(*lt, [](const Image& i) { return i.section == ".nv_fatbin"; }), 5737u);
  EXPECT_EQ(containers_in(*lt, ".nv_fatbin"), 2782u);
  EXPECT_EQ(lt->containers, 3165u);
}

// libnccl.so.2 (217,995,896 bytes): __nv_relfatbin holds 127 containers with
// 889 entries, all device-link inputs; the 16 containers (87 entries) in
// .nv_fatbin are the launchable, device-linked code.
TEST(NvidiaLibraries, NcclRelfatbinImagesAreRelocatable) {
  REQUIRE_LIBRARY(nccl, "libnccl.so.2");
  EXPECT_TRUE(nccl->ok()) << problems(*nccl);
  const auto rel = [](const Image& i) { return i.section == "__nv_relfatbin"; };
  EXPECT_GT(count(*nccl, rel), 0u);
  for (const auto& image : nccl->images) EXPECT_EQ(image.relocatable, rel(image)) << image.section;
  expect_images_inside_their_sections(*nccl);
  if (!measured_build(*nccl, 217995896)) return;
  EXPECT_EQ(count(*nccl, rel), 889u);
  EXPECT_EQ(containers_in(*nccl, "__nv_relfatbin"), 127u);
  EXPECT_EQ(count(*nccl, [](const Image& i) { return i.section == ".nv_fatbin"; }), 87u);
  EXPECT_EQ(containers_in(*nccl, ".nv_fatbin"), 16u);
}

// libcublas.so.13 (54,177,976 bytes): 4 of its 1,069 cubins are V1 (entry
// version 1.7, EI_ABIVERSION 7, e_flags 0x4b054b, 0x500550, 0x560556,
// 0x5a055a): sm_75, 80, 86 and 90.
TEST(NvidiaLibraries, CublasHasV1Cubins) {
  REQUIRE_LIBRARY(cublas, "libcublas.so.13");
  std::vector<std::string> v1;
  for (const auto& image : cublas->images) {
    if (image.kind != ImageKind::sass || image.elf_abi != 1) continue;
    EXPECT_EQ(image.entry_version.to_string(), "1.7");
    v1.push_back(image.arch_name());
  }
  EXPECT_FALSE(v1.empty());
  if (!measured_build(*cublas, 54177976)) return;
  EXPECT_EQ(v1, (std::vector<std::string>{"sm_75", "sm_80", "sm_86", "sm_90"}));
  EXPECT_EQ(
      count(*cublas, [](const Image& i) { return i.kind == ImageKind::sass && i.elf_abi == 2; }),
      1065u);
  EXPECT_EQ(count(*cublas, [](const Image& i) { return i.kind == ImageKind::ptx; }), 188u);
}

// cuDNN here was built with CUDA 13.1: all its PTX is ISA 9.1 (adv 10, cnn 10,
// engines_precompiled 93, engines_runtime_compiled 41, ops 22: 176 in all),
// while the CUDA 13.0 libraries carry ISA 9.0 at most.
TEST(NvidiaLibraries, CudnnShipsPtxIsa91) {
  const std::map<std::string, size_t> measured = {{"libcudnn_adv.so.9", 10},
                                                  {"libcudnn_cnn.so.9", 10},
                                                  {"libcudnn_engines_precompiled.so.9", 93},
                                                  {"libcudnn_engines_runtime_compiled.so.9", 41},
                                                  {"libcudnn_ops.so.9", 22}};
  const std::map<std::string, uint64_t> sizes = {
      {"libcudnn_adv.so.9", 109169104},
      {"libcudnn_cnn.so.9", 4203904},
      {"libcudnn_engines_precompiled.so.9", 245391920},
      {"libcudnn_engines_runtime_compiled.so.9", 29386400},
      {"libcudnn_ops.so.9", 39855888}};
  size_t found = 0;
  for (const auto& [name, ptx_count] : measured) {
    const FileScan* cudnn = library(name);
    if (!cudnn) continue;
    ++found;
    const size_t isa_91 = count(*cudnn, [](const Image& i) {
      return i.kind == ImageKind::ptx && i.ptx_isa == Version{9, 1};
    });
    if (measured_build(*cudnn, sizes.at(name))) {
      EXPECT_EQ(isa_91, ptx_count) << name;
      EXPECT_EQ(count(*cudnn, [](const Image& i) { return i.kind == ImageKind::ptx; }), ptx_count)
          << name;
    }
  }
  if (!found) GTEST_SKIP() << "no cuDNN library in " << kLibDir << ": no PTX ISA 9.1 to look for";
  for (const std::string name :
       {"libcublas.so.13", "libcublasLt.so.13", "libcusolver.so.12", "libnccl.so.2"}) {
    if (const FileScan* scan = library(name)) {
      EXPECT_EQ(
          count(*scan,
                [](const Image& i) {
                  return i.kind == ImageKind::ptx &&
                         (i.ptx_isa.major > 9 || (i.ptx_isa.major == 9 && i.ptx_isa.minor > 0));
                }),
          0u)
          << name;
    }
  }
}

// All 48 files under lib64 (including stubs/libcuda.so, the static archives
// and CMake files) scan without a single problem; 16 of them hold device code,
// 42,287 images in all.
TEST(NvidiaLibraries, NoProblemsInAnyLibraryOfTheDirectory) {
  const auto& scans = directory_scan();
  if (scans.empty()) GTEST_SKIP() << kLibDir << " does not exist or is empty";
  size_t with_code = 0, images = 0;
  for (const auto& [name, scan] : scans) {
    EXPECT_TRUE(scan.ok()) << name << problems(scan);
    EXPECT_FALSE(scan.unreadable) << name;
    with_code += scan.has_device_code();
    images += scan.images.size();
  }
  EXPECT_GT(with_code, 0u);
  std::cout << "[ MEASURED ] " << scans.size() << " files, " << with_code << " with device code, "
            << images << " images\n";
  const FileScan* lt = library("libcublasLt.so.13");
  const FileScan* cufft = library("libcufft.so.12");
  if (lt && cufft && lt->file_size == 541595600 && cufft->file_size == 286542352 &&
      scans.size() == 48) {
    EXPECT_EQ(with_code, 16u);
    EXPECT_EQ(images, 42287u);
  }
}

// --deep over every payload: decompressed (ZSTD, LZ4) or copied, then read as
// PTX or a cubin and compared with its entry header. No payload may fail and
// no header may disagree with its payload.
void expect_deep_scan_clean(const FileScan& scan) {
  ASSERT_TRUE(scan.ok()) << problems(scan);
  for (const auto& image : scan.images) {
    ASSERT_TRUE(image.payload) << hex(image.offset);
    const PayloadInfo& payload = *image.payload;
    ASSERT_EQ(payload.error, "") << hex(image.offset);
    ASSERT_TRUE(payload.disagreements.empty())
        << hex(image.offset) << ": " << payload.disagreements[0];
    if (image.kind == ImageKind::ptx) {
      ASSERT_EQ(payload.ptx_version, image.ptx_isa) << hex(image.offset);
    } else if (image.kind == ImageKind::sass) {
      ASSERT_EQ(payload.cubin_sm, image.sm) << hex(image.offset);
      ASSERT_EQ(payload.cubin_abi_version, image.elf_abi == 1 ? 7 : 8) << hex(image.offset);
    }
  }
}

// libcupti.so.13 (4,152,208 bytes): 3 containers in .rodata, 33 uncompressed
// V2 cubins (sm_75 … sm_121, three each), all ET_EXEC.
TEST(NvidiaLibraries, DeepScanOfCuptiReadsEveryCubin) {
  REQUIRE_LIBRARY(listed, "libcupti.so.13");
  ScanOptions options;
  options.deep = true;
  options.threads = 2;
  const FileScan cupti = scan_file(listed->path, options);
  expect_deep_scan_clean(cupti);
  EXPECT_EQ(
      count(cupti, [](const Image& i) { return i.payload && i.payload->cubin_elf_type == 2; }),
      count(cupti, [](const Image& i) { return i.kind == ImageKind::sass; }));
  if (!measured_build(cupti, 4152208)) return;
  EXPECT_EQ(cupti.images.size(), 33u);
  EXPECT_EQ(containers_in(cupti, ".rodata"), 3u);
}

// libcublas.so.13: all 1,257 payloads are ZSTD (1,069 cubins, 188 PTX
// compute_120 ISA 9.0); every one decompresses to its stated size, and the 4
// V1 cubins have EI_ABIVERSION 7.
TEST(NvidiaLibraries, DeepScanOfCublasDecompressesEveryPayload) {
  REQUIRE_LIBRARY(listed, "libcublas.so.13");
  ScanOptions options;
  options.deep = true;
  options.threads = 2;
  const FileScan cublas = scan_file(listed->path, options);
  expect_deep_scan_clean(cublas);
  EXPECT_EQ(
      count(cublas, [](const Image& i) { return i.payload && i.payload->cubin_abi_version == 7; }),
      count(cublas, [](const Image& i) { return i.kind == ImageKind::sass && i.elf_abi == 1; }));
  if (!measured_build(cublas, 54177976)) return;
  EXPECT_EQ(cublas.images.size(), 1257u);
  EXPECT_EQ(count(cublas, [](const Image& i) { return i.compression == Compression::zstd; }),
            1257u);
  EXPECT_EQ(
      count(cublas, [](const Image& i) { return i.payload && i.payload->cubin_abi_version == 7; }),
      4u);
}

}  // namespace
}  // namespace archfit::binary
