// The scanner against hostile and broken input: it must never crash, hang or
// read outside its buffer, and every problem it reports must say where
// ("at offset 0x…: …") and what was wrong. Inputs are built in memory by
// fatbin_builder.hpp and scanned from a buffer that ends at an inaccessible
// page, so a read one byte past the end kills the test instead of passing
// unnoticed.
#include <fcntl.h>
#include <lz4.h>
#ifdef _WIN32
#include <windows.h>
#else
#include <sys/mman.h>
#endif
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <iostream>
#include <map>
#include <new>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "binary/cubin.hpp"
#include "binary/elf.hpp"
#include "binary/file_scan.hpp"
#include "binary/image.hpp"
#include "binary/scanner.hpp"
#include "binary/tree_scan.hpp"
#include "fatbin_builder.hpp"

namespace archfit::test {
namespace {

namespace fs = std::filesystem;
using binary::Compression;
using binary::FileFormat;
using binary::FileScan;
using binary::hex;
using binary::Image;
using binary::ImageKind;
using binary::ScanOptions;
using binary::ScanProblem;

// --- scanning from a guarded buffer --------------------------------------------

// A copy of the input whose last byte is the last byte of a readable page; the
// next page is PROT_NONE.
class GuardedBuffer {
 public:
  explicit GuardedBuffer(std::span<const std::byte> data) : size_(data.size()) {
#ifdef _WIN32
    SYSTEM_INFO system{};
    ::GetSystemInfo(&system);
    const size_t page = system.dwPageSize;
#else
    const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
#endif
    const size_t data_pages = (size_ + page - 1) / page;
    length_ = (data_pages + 1) * page;
#ifdef _WIN32
    void* base = ::VirtualAlloc(nullptr, length_, MEM_RESERVE | MEM_COMMIT, PAGE_READWRITE);
    if (!base) throw std::bad_alloc();
    base_ = static_cast<std::byte*>(base);
    DWORD previous = 0;
    ::VirtualProtect(base_ + data_pages * page, page, PAGE_NOACCESS, &previous);
#else
    void* base =
        ::mmap(nullptr, length_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED) throw std::bad_alloc();
    base_ = static_cast<std::byte*>(base);
    ::mprotect(base_ + data_pages * page, page, PROT_NONE);
#endif
    begin_ = base_ + data_pages * page - size_;
    if (size_) std::memcpy(begin_, data.data(), size_);
  }
#ifdef _WIN32
  ~GuardedBuffer() { ::VirtualFree(base_, 0, MEM_RELEASE); }
#else
  ~GuardedBuffer() { ::munmap(base_, length_); }
#endif
  GuardedBuffer(const GuardedBuffer&) = delete;
  GuardedBuffer& operator=(const GuardedBuffer&) = delete;

  std::span<std::byte> bytes() { return {begin_, size_}; }

 private:
  size_t size_;
  size_t length_ = 0;
  std::byte* base_ = nullptr;
  std::byte* begin_ = nullptr;
};

FileScan scan(std::span<const std::byte> bytes, bool deep = false, unsigned threads = 1) {
  GuardedBuffer buffer(bytes);
  ScanOptions options;
  options.deep = deep;
  options.threads = threads;
  return binary::scan_bytes(buffer.bytes(), "test", options);
}

std::string describe(const FileScan& result) {
  std::string text = std::to_string(result.images.size()) + " images, " +
                     std::to_string(result.problems.size()) + " problems";
  for (const auto& problem : result.problems) text += "\n  " + problem.message;
  return text;
}

// "at offset 0x…: what" with the problem's own offset.
::testing::AssertionResult names_its_offset(const ScanProblem& problem) {
  const std::string prefix = "at offset " + hex(problem.offset) + ": ";
  if (problem.message.starts_with(prefix) && problem.message.size() > prefix.size() + 8) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure()
         << "problem recorded at " << hex(problem.offset) << " reads \"" << problem.message << "\"";
}

bool has_problem_at(const FileScan& result, uint64_t offset, std::string_view words = {}) {
  return std::any_of(result.problems.begin(), result.problems.end(), [&](const ScanProblem& p) {
    return p.offset == offset && names_its_offset(p) && p.message.find(words) != std::string::npos;
  });
}

// --- inputs ----------------------------------------------------------------------

Bytes zstd_compress(const Bytes& input) {
  Bytes out(ZSTD_compressBound(input.size()));
  const size_t size = ZSTD_compress(out.data(), out.size(), input.data(), input.size(), 3);
  if (ZSTD_isError(size)) throw std::runtime_error("ZSTD_compress failed");
  out.resize(size);
  return out;
}

Bytes lz4_compress(const Bytes& input) {
  Bytes out(static_cast<size_t>(LZ4_compressBound(static_cast<int>(input.size()))));
  const int size = LZ4_compress_default(
      reinterpret_cast<const char*>(input.data()), reinterpret_cast<char*>(out.data()),
      static_cast<int>(input.size()), static_cast<int>(out.size()));
  if (size <= 0) throw std::runtime_error("LZ4_compress_default failed");
  out.resize(static_cast<size_t>(size));
  return out;
}

EntrySpec cubin_entry(uint32_t sm, uint64_t extra_flags = 0, uint8_t abi_version = 8) {
  EntrySpec entry;
  entry.arch = sm;
  entry.version_minor = abi_version;
  entry.flags = 0x11 | extra_flags;
  entry.payload = cubin_bytes(sm, abi_version);
  return entry;
}

EntrySpec ptx_entry(uint32_t sm, uint16_t major, uint16_t minor) {
  EntrySpec entry;
  entry.kind = 1;
  entry.header_size = 80;
  entry.arch = sm;
  entry.version_major = major;
  entry.version_minor = minor;
  entry.payload = ptx_text(sm, std::to_string(major) + "." + std::to_string(minor));
  return entry;
}

EntrySpec compress(EntrySpec entry, Compression compression) {
  const Bytes plain = entry.payload;
  entry.payload = compression == Compression::zstd ? zstd_compress(plain) : lz4_compress(plain);
  entry.compressed_size = static_cast<uint32_t>(entry.payload.size());
  entry.uncompressed_size = plain.size();
  entry.flags |= compression == Compression::zstd ? 0x8000 : 0x2000;
  return entry;
}

// Three containers as nvcc packs them: 2, 1 and 3 entries, with SASS V1 and
// V2, PTX, a/f variants and both compressions.
struct Sample {
  Bytes bytes;
  std::vector<ContainerSpec> specs;
  std::vector<uint64_t> begin, end;                  // container extents
  std::vector<std::vector<uint64_t>> entry_offsets;  // per container
  std::vector<std::vector<uint64_t>> payload_end;    // per entry
  size_t images_before(uint64_t limit) const {
    size_t count = 0;
    for (size_t i = 0; i < begin.size(); ++i)
      count += end[i] <= limit ? specs[i].entries.size() : 0;
    return count;
  }
};

Sample make_sample() {
  Sample sample;
  sample.specs.push_back({{cubin_entry(80), ptx_entry(90, 9, 0)}});
  sample.specs.push_back({{cubin_entry(90, 0x100000)}});
  sample.specs.push_back({{cubin_entry(75, 0, 7), compress(ptx_entry(120, 9, 1), Compression::zstd),
                           compress(cubin_entry(100, 0x1200000), Compression::lz4)}});
  std::vector<Bytes> containers;
  for (const auto& spec : sample.specs) containers.push_back(container_bytes(spec));
  sample.bytes = packed(containers, &sample.begin);
  for (size_t i = 0; i < containers.size(); ++i) {
    sample.end.push_back(sample.begin[i] + containers[i].size());
    uint64_t at = sample.begin[i] + 16;
    sample.entry_offsets.emplace_back();
    sample.payload_end.emplace_back();
    for (const auto& entry : sample.specs[i].entries) {
      sample.entry_offsets.back().push_back(at);
      at += entry_bytes(entry).size();
      sample.payload_end.back().push_back(at);
    }
  }
  return sample;
}

constexpr size_t kSampleImages = 6;

// Bytes that are neither zero nor the container magic: unrelated data.
Bytes filler(size_t size, uint8_t seed) {
  Bytes out(size);
  for (size_t i = 0; i < size; ++i) out[i] = std::byte(static_cast<uint8_t>(seed + i * 7 + 1) | 1);
  return out;
}

// =================================================================================
// Files that are not (64-bit little-endian) ELF, fatbin, cubin or PTX
// =================================================================================

TEST(MalformedInput, EmptyBufferHasNoDeviceCodeAndNoProblem) {
  const FileScan result = scan({});
  EXPECT_EQ(result.format, FileFormat::other);
  EXPECT_FALSE(result.has_device_code());
  EXPECT_TRUE(result.ok()) << describe(result);
  EXPECT_EQ(result.file_size, 0u);
}

TEST(MalformedInput, NonElfFilesHaveNoDeviceCodeAndNoProblem) {
  // A container buried in a file that is not ELF is not searched for: only a
  // fatbin that starts at offset 0 is one.
  const Sample sample = make_sample();
  Bytes text_then_fatbin = to_bytes("#!/bin/sh\necho not a library\n\n\n");
  pad_to(text_then_fatbin, 8);
  append(text_then_fatbin, sample.bytes);
  for (const Bytes& input : {to_bytes("hello"), to_bytes("\x7f"),
                             to_bytes("\x7f"
                                      "EL"),
                             filler(4096, 3), to_bytes(".version 9.0\n"), text_then_fatbin}) {
    const FileScan result = scan(input);
    EXPECT_EQ(result.format, FileFormat::other) << input.size();
    EXPECT_FALSE(result.has_device_code()) << input.size();
    EXPECT_TRUE(result.ok()) << describe(result);
  }
}

TEST(MalformedInput, ElfThatIsNot64BitLittleEndianIsNotScanned) {
  const Sample sample = make_sample();
  // An ELFCLASS32 header (52 bytes) followed by a fatbin, and a big-endian
  // 64-bit one: no CUDA toolkit targets either, so neither is read further.
  Bytes elf32(52);
  const char ident[] = {0x7f, 'E', 'L', 'F', 1, 1, 1};
  std::memcpy(elf32.data(), ident, sizeof ident);
  put<uint16_t>(elf32, 16, 3);
  put<uint16_t>(elf32, 18, 3);           // EM_386
  put<uint32_t>(elf32, 32, 0xffffffff);  // e_shoff that would fault if it were followed
  append(elf32, sample.bytes);
  ElfSpec big_endian;
  big_endian.data_encoding = 2;
  big_endian.sections.push_back({".nv_fatbin", 1, 2, sample.bytes});
  ElfSpec elf32_layout = big_endian;
  elf32_layout.data_encoding = 1;
  elf32_layout.elf_class = 1;
  for (const Bytes& input : {elf32, build_elf(big_endian).bytes, build_elf(elf32_layout).bytes}) {
    const FileScan result = scan(input);
    EXPECT_EQ(result.format, FileFormat::other);
    EXPECT_FALSE(result.has_device_code());
    EXPECT_TRUE(result.ok()) << describe(result);
  }
}

TEST(MalformedInput, ValidInputsScanCleanlyAsAControl) {
  const Sample sample = make_sample();
  const FileScan fatbin = scan(sample.bytes, /*deep=*/true);
  EXPECT_EQ(fatbin.format, FileFormat::fatbin);
  ASSERT_EQ(fatbin.images.size(), kSampleImages) << describe(fatbin);
  EXPECT_TRUE(fatbin.ok()) << describe(fatbin);
  EXPECT_EQ(fatbin.containers, 3u);
  EXPECT_EQ(fatbin.images[2].arch_name(), "sm_90a");
  EXPECT_EQ(fatbin.images[3].elf_abi, 1);
  EXPECT_EQ(fatbin.images[4].ptx_isa.to_string(), "9.1");
  EXPECT_EQ(fatbin.images[4].compression, Compression::zstd);
  EXPECT_EQ(fatbin.images[5].compression, Compression::lz4);
  EXPECT_EQ(fatbin.images[5].arch_name(), "sm_100f");
  for (const Image& image : fatbin.images) {
    ASSERT_TRUE(image.payload);
    EXPECT_EQ(image.payload->error, "") << image.arch_name();
    EXPECT_TRUE(image.payload->disagreements.empty()) << image.arch_name();
  }
  const BuiltElf elf = elf_with_section(sample.bytes);
  const FileScan library = scan(elf.bytes, /*deep=*/true);
  EXPECT_EQ(library.format, FileFormat::elf);
  EXPECT_EQ(library.images.size(), kSampleImages);
  EXPECT_TRUE(library.ok()) << describe(library);
  EXPECT_EQ(library.images[0].offset, elf.data_offsets[1] + sample.entry_offsets[0][0]);
}

// =================================================================================
// Truncation
// =================================================================================

TEST(MalformedInput, TruncatedElfHeaderIsReportedAtOffsetZero) {
  const BuiltElf elf = elf_with_section(make_sample().bytes);
  for (size_t length = 0; length < 64; ++length) {
    const FileScan result = scan(std::span(elf.bytes).first(length));
    EXPECT_FALSE(result.has_device_code());
    if (length < 6) {
      // Too short to tell a 64-bit ELF from a 32-bit one: not ours, no error.
      EXPECT_TRUE(result.ok()) << length << ": " << describe(result);
      continue;
    }
    ASSERT_EQ(result.problems.size(), 1u) << length << ": " << describe(result);
    EXPECT_TRUE(has_problem_at(result, 0, "ELF header needs 64 bytes")) << describe(result);
  }
}

// GNU ld writes the section table last, so any cut loses it, and with it
// every section; the problem names where the table was to start.
TEST(MalformedInput, ElfCutAtEveryLengthReportsTheLostSectionTable) {
  const Sample sample = make_sample();
  const BuiltElf elf = elf_with_section(sample.bytes);
  ASSERT_EQ(elf.shoff + 4 * 64, elf.bytes.size());  // null, .text, .nv_fatbin, .shstrtab
  for (size_t length = 64; length < elf.bytes.size(); ++length) {
    const FileScan result = scan(std::span(elf.bytes).first(length));
    EXPECT_FALSE(result.has_device_code()) << length;
    ASSERT_EQ(result.problems.size(), 1u) << length << ": " << describe(result);
    EXPECT_TRUE(has_problem_at(result, elf.shoff, "section table"))
        << length << ": " << describe(result);
  }
}

// With the table first, a cut inside the data leaves the table readable: each
// section that now runs past the end is reported at its own section header,
// and the .nv_fatbin images survive exactly when their section is whole.
TEST(MalformedInput, ElfWithTableFirstCutAtEveryLengthReportsEachCutSection) {
  const Sample sample = make_sample();
  const BuiltElf elf = elf_with_section(sample.bytes, ".nv_fatbin", /*table_first=*/true);
  const uint64_t fatbin_begin = elf.data_offsets[1],
                 fatbin_end = fatbin_begin + sample.bytes.size();
  const uint64_t table_end = elf.shoff + 4 * 64;
  for (size_t length = table_end; length < elf.bytes.size(); ++length) {
    const FileScan result = scan(std::span(elf.bytes).first(length));
    const bool text_cut = length < elf.data_offsets[0] + 32;
    const bool fatbin_cut = length < fatbin_end;
    // .shstrtab comes last and is cut by every length here.
    EXPECT_EQ(result.problems.size(), 1u + text_cut + fatbin_cut)
        << length << ": " << describe(result);
    EXPECT_TRUE(has_problem_at(result, elf.header_offset(2), "extends past the end of the file"))
        << length << ": " << describe(result);
    EXPECT_EQ(has_problem_at(result, elf.header_offset(1), "extends past the end"), fatbin_cut)
        << length << ": " << describe(result);
    EXPECT_EQ(result.images.size(), fatbin_cut ? 0u : kSampleImages)
        << length << ": " << describe(result);
    for (const auto& problem : result.problems) EXPECT_TRUE(names_its_offset(problem));
  }
  for (size_t length = 64; length < table_end; ++length) {
    const FileScan result = scan(std::span(elf.bytes).first(length));
    EXPECT_TRUE(has_problem_at(result, elf.shoff, "section table"))
        << length << ": " << describe(result);
  }
}

// The expected problem for a region that ends `cut` bytes into a container
// starting at `container`: inside its first word nothing can be a container
// ("neither padding nor a fatbin container"); inside the 16-byte header the
// header is truncated; past it the size field (at +8) overruns the end.
void expect_cut_container(const FileScan& result, uint64_t container, uint64_t cut,
                          size_t images_before, const std::string& context) {
  EXPECT_EQ(result.images.size(), images_before) << context << ": " << describe(result);
  ASSERT_FALSE(result.problems.empty()) << context;
  for (const auto& problem : result.problems) EXPECT_TRUE(names_its_offset(problem)) << context;
  if (cut < 4) {
    EXPECT_TRUE(has_problem_at(result, container, "neither padding nor a fatbin container"))
        << context << ": " << describe(result);
  } else if (cut < 16) {
    EXPECT_TRUE(has_problem_at(result, container, "truncated fatbin container header"))
        << context << ": " << describe(result);
  } else {
    EXPECT_TRUE(has_problem_at(result, container + 8, "runs past the end"))
        << context << ": " << describe(result);
  }
}

TEST(MalformedInput, RawFatbinCutAtEveryLength) {
  const Sample sample = make_sample();
  for (size_t length = 0; length <= sample.bytes.size(); ++length) {
    const FileScan result = scan(std::span(sample.bytes).first(length));
    const std::string context = "cut at " + std::to_string(length);
    if (length < 4) {
      EXPECT_EQ(result.format, FileFormat::other) << context;  // not even the magic
      EXPECT_TRUE(result.ok()) << context << ": " << describe(result);
      continue;
    }
    EXPECT_EQ(result.format, FileFormat::fatbin) << context;
    size_t i = 0;
    while (i < sample.begin.size() && !(sample.begin[i] < length && length < sample.end[i])) ++i;
    if (i == sample.begin.size()) {  // a cut between containers (in padding or at the end)
      EXPECT_TRUE(result.ok()) << context << ": " << describe(result);
      EXPECT_EQ(result.images.size(), sample.images_before(length)) << context;
      continue;
    }
    expect_cut_container(result, sample.begin[i], length - sample.begin[i],
                         sample.images_before(length), context);
  }
}

// The same cuts, made by shrinking the .nv_fatbin section of a whole library.
TEST(MalformedInput, NvFatbinSectionCutAtEveryLength) {
  const Sample sample = make_sample();
  for (size_t length = 0; length <= sample.bytes.size(); ++length) {
    ElfSpec spec;
    spec.sections.push_back({".nv_fatbin", 1, 2, sample.bytes, 8, std::nullopt, length});
    const BuiltElf elf = build_elf(spec);
    const uint64_t base = elf.data_offsets[0];
    const FileScan result = scan(elf.bytes);
    const std::string context = "section size " + std::to_string(length);
    const size_t i = std::find_if(sample.end.begin(), sample.end.end(),
                                  [&](uint64_t end) { return length < end; }) -
                     sample.end.begin();
    if (i == sample.end.size() || length <= sample.begin[i]) {
      EXPECT_TRUE(result.ok()) << context << ": " << describe(result);
      EXPECT_EQ(result.images.size(), sample.images_before(length)) << context;
      continue;
    }
    expect_cut_container(result, base + sample.begin[i], length - sample.begin[i],
                         sample.images_before(length), context);
  }
}

// A container whose size field stops short of its entries, at every length:
// a cut at an entry boundary leaves a smaller valid container followed by
// stray entry bytes; a cut inside an entry header or payload is reported at
// that entry, at its header-size field or at its payload-size field.
TEST(MalformedInput, ContainerSizeCutAtEveryLengthNamesTheCutEntry) {
  const Sample sample = make_sample();
  const ContainerSpec& spec = sample.specs[2];  // 3 entries
  const uint64_t entries_size = sample.end[2] - sample.begin[2] - 16;
  std::vector<uint64_t> starts = {16}, headers;
  for (const auto& entry : spec.entries) {
    headers.push_back(entry.header_size.value_or(64));
    starts.push_back(starts.back() + entry_bytes(entry).size());
  }
  for (uint64_t size = 0; size < entries_size; ++size) {
    ContainerSpec cut = spec;
    cut.size = size;
    const Bytes bytes = container_bytes(cut);
    const FileScan result = scan(bytes);
    const std::string context = "container size " + std::to_string(size);
    ASSERT_FALSE(result.problems.empty()) << context;
    for (const auto& problem : result.problems) EXPECT_TRUE(names_its_offset(problem)) << context;
    const uint64_t end = 16 + size;
    const size_t k = std::upper_bound(starts.begin(), starts.end(), end) - starts.begin() - 1;
    if (starts[k] == end) {
      EXPECT_EQ(result.images.size(), k) << context << ": " << describe(result);
      EXPECT_TRUE(has_problem_at(result, end, "not a fatbin container"))
          << context << ": " << describe(result);
      continue;
    }
    EXPECT_EQ(result.images.size(), 0u)
        << context << ": " << describe(result);  // whole or not at all
    const uint64_t left = end - starts[k];
    const uint64_t at = left < 64 ? starts[k] : left < headers[k] ? starts[k] + 4 : starts[k] + 8;
    EXPECT_TRUE(has_problem_at(result, at, "fatbin entry")) << context << ": " << describe(result);
  }
}

// =================================================================================
// Absurd sizes and offsets
// =================================================================================

// The sample in .nv_fatbin, with container 1 (the lone sm_90a entry) made
// bad by `corrupt`; containers 0 and 2 must still be reported.
FileScan scan_with_bad_middle_container(const std::function<void(ContainerSpec&)>& corrupt,
                                        uint64_t* base = nullptr, Sample* out = nullptr) {
  Sample sample = make_sample();
  corrupt(sample.specs[1]);
  std::vector<Bytes> containers;
  for (const auto& spec : sample.specs) containers.push_back(container_bytes(spec));
  sample.begin.clear();
  sample.bytes = packed(containers, &sample.begin);
  const BuiltElf elf = elf_with_section(sample.bytes);
  if (base) *base = elf.data_offsets[1] + sample.begin[1];
  if (out) *out = sample;
  return scan(elf.bytes, /*deep=*/true);
}

void expect_others_survive(const FileScan& result) {
  ASSERT_EQ(result.images.size(), kSampleImages - 1) << describe(result);
  EXPECT_EQ(result.images[1].arch_name(), "compute_90");
  EXPECT_EQ(result.images[2].arch_name(), "sm_75");
  for (const auto& problem : result.problems) EXPECT_TRUE(names_its_offset(problem));
}

TEST(MalformedInput, ContainerSizeOfTwoToThe64MinusOne) {
  uint64_t at = 0;
  const FileScan result =
      scan_with_bad_middle_container([](ContainerSpec& c) { c.size = ~uint64_t{0}; }, &at);
  expect_others_survive(result);
  EXPECT_TRUE(has_problem_at(
      result, at + 8, "fatbin container size 0xffffffffffffffff runs past the end of .nv_fatbin"))
      << describe(result);
}

// Among other data (.rodata, .ldata, …) a container whose size field runs
// past the section used to pass for unrelated bytes: its images vanished and
// `archfit scan` exited 0 (issue 24). Its header is exact, so it is reported,
// and the search goes on to the good container after it.
// An ELF whose .rodata holds other bytes, then `odd`, then the sample's
// good containers; `odd_at` is where `odd` starts in the file.
BuiltElf rodata_with(const ContainerSpec& odd, const Sample& sample, uint64_t& odd_at) {
  Bytes rodata = filler(200, 7);
  pad_to(rodata, 8);
  const uint64_t in_section = rodata.size();
  append(rodata, container_bytes(odd));
  pad_to(rodata, 8);
  append(rodata, sample.bytes);
  BuiltElf elf = elf_with_section(std::move(rodata), ".rodata");
  odd_at = elf.data_offsets[1] + in_section;
  return elf;
}

TEST(MalformedInput, EmbeddedContainerWhoseSizeRunsPastItsSectionIsReported) {
  const Sample sample = make_sample();
  ContainerSpec corrupt = sample.specs[0];
  corrupt.size = uint64_t{1} << 20;
  uint64_t corrupt_at = 0;
  const BuiltElf elf = rodata_with(corrupt, sample, corrupt_at);
  const FileScan result = scan(elf.bytes);
  EXPECT_EQ(result.images.size(), kSampleImages) << describe(result);
  ASSERT_EQ(result.problems.size(), 1u) << describe(result);
  EXPECT_TRUE(has_problem_at(result, corrupt_at + 8,
                             "fatbin container size 0x100000 runs past the end of .rodata"))
      << describe(result);
}

TEST(MalformedInput, ContainerWithUnknownVersionOrHeaderSize) {
  uint64_t at = 0;
  FileScan result = scan_with_bad_middle_container([](ContainerSpec& c) { c.version = 2; }, &at);
  expect_others_survive(result);
  EXPECT_TRUE(has_problem_at(result, at, "version 2")) << describe(result);
  result = scan_with_bad_middle_container([](ContainerSpec& c) { c.header_size = 0xffff; }, &at);
  expect_others_survive(result);
  EXPECT_TRUE(has_problem_at(result, at, "header size 65535")) << describe(result);
}

// The same in .rodata, where containers are found by their magic: a header
// of version 2, or of size 0xFFFF, used to pass for unrelated bytes and its
// images went missing with `scan` exiting 0 (issue 34). The magic with half
// a header is a container archfit cannot read: reported; the magic alone,
// in other data, is chance and passed over.
TEST(MalformedInput, EmbeddedContainerOfAnUnknownVersionOrHeaderSizeIsReported) {
  const Sample sample = make_sample();
  for (const bool version : {true, false}) {
    ContainerSpec odd = sample.specs[0];
    if (version) {
      odd.version = 2;
    } else {
      odd.header_size = 0xffff;
    }
    uint64_t odd_at = 0;
    const FileScan result = scan(rodata_with(odd, sample, odd_at).bytes);
    EXPECT_GE(result.images.size(), kSampleImages) << describe(result);
    EXPECT_TRUE(has_problem_at(result, odd_at, version ? "version 2" : "header size 65535"))
        << describe(result);
  }
  // The magic alone among other bytes is no container.
  Bytes rodata = filler(200, 7);
  pad_to(rodata, 8);
  append(rodata, Bytes{std::byte{0x50}, std::byte{0xed}, std::byte{0x55}, std::byte{0xba},
                       std::byte{0x07}, std::byte{0x07}, std::byte{0x07}, std::byte{0x07}});
  append(rodata, filler(64, 9));
  const FileScan quiet = scan(elf_with_section(std::move(rodata), ".rodata").bytes);
  EXPECT_TRUE(quiet.problems.empty()) << describe(quiet);
}

TEST(MalformedInput, EntryHeaderSizeOf0And63AndHuge) {
  for (const uint32_t size : {0u, 63u, 0xffffffffu, 0x80000000u}) {
    uint64_t at = 0;
    const FileScan result = scan_with_bad_middle_container(
        [&](ContainerSpec& c) { c.entries[0].header_size = size; }, &at);
    expect_others_survive(result);
    EXPECT_TRUE(
        has_problem_at(result, at + 16 + 4,
                       "fatbin entry header size " + std::to_string(size) + " is outside 64.."))
        << describe(result);
  }
}

TEST(MalformedInput, EntryPayloadSizePastTheEnd) {
  for (const uint64_t size : {~uint64_t{0}, uint64_t{1} << 63, uint64_t{72}}) {
    uint64_t at = 0;
    const FileScan result = scan_with_bad_middle_container(
        [&](ContainerSpec& c) { c.entries[0].payload_size = size; }, &at);
    expect_others_survive(result);
    EXPECT_TRUE(has_problem_at(result, at + 16 + 8,
                               "fatbin entry payload size " + hex(size) + " runs past"))
        << describe(result);
  }
}

TEST(MalformedInput, CompressedSizeLargerThanThePayload) {
  uint64_t at = 0;
  const FileScan result = scan_with_bad_middle_container(
      [](ContainerSpec& c) {
        c.entries[0].flags |= 0x8000;
        c.entries[0].compressed_size = 65;  // the payload is 64 bytes
        c.entries[0].uncompressed_size = 64;
      },
      &at);
  expect_others_survive(result);
  EXPECT_TRUE(
      has_problem_at(result, at + 16 + 0x10, "compressed size 0x41 exceeds its payload size 0x40"))
      << describe(result);
}

TEST(MalformedInput, IdentifierOutsideTheEntry) {
  const std::vector<std::pair<uint32_t, uint32_t>> cases = {
      {0xfffffff0u, 8}, {64, 0xffffffffu}, {0xffffffffu, 0xffffffffu}, {64 + 64 + 1, 64}};
  for (const auto& one : cases) {
    // Not a structured binding: clang 14 (the sanitizer builds) cannot
    // capture one in a lambda.
    const uint32_t offset = one.first, length = one.second;
    uint64_t at = 0;
    const FileScan result = scan_with_bad_middle_container(
        [&](ContainerSpec& c) {
          c.entries[0].identifier = "k.cu";
          c.entries[0].identifier_offset = offset;
          c.entries[0].identifier_length = length;
        },
        &at);
    expect_others_survive(result);
    EXPECT_TRUE(has_problem_at(result, at + 16 + 0x20,
                               "identifier (offset " + hex(offset) + ", length " +
                                   std::to_string(length) + ") lies outside the entry"))
        << describe(result);
  }
  // In bounds but unterminated: cut at the stated length, never read beyond.
  const FileScan fine = scan_with_bad_middle_container([](ContainerSpec& c) {
    c.entries[0].identifier = "kernel.cu";
    c.entries[0].identifier_length = 6;
  });
  ASSERT_EQ(fine.images.size(), kSampleImages) << describe(fine);
  EXPECT_EQ(fine.images[2].identifier, "kernel");
}

TEST(MalformedInput, WrongEntryMarker) {
  uint64_t at = 0;
  const FileScan result =
      scan_with_bad_middle_container([](ContainerSpec& c) { c.entries[0].marker = 0x0202; }, &at);
  expect_others_survive(result);
  EXPECT_TRUE(has_problem_at(result, at + 16, "marker 0x202")) << describe(result);
}

TEST(MalformedInput, AbsurdSectionTableOffset) {
  const Sample sample = make_sample();
  for (const uint64_t shoff : {~uint64_t{0}, ~uint64_t{0} - 63, uint64_t{1} << 62}) {
    ElfSpec spec;
    spec.sections.push_back({".nv_fatbin", 1, 2, sample.bytes});
    spec.shoff = shoff;
    const BuiltElf elf = build_elf(spec);
    const FileScan result = scan(elf.bytes);
    EXPECT_FALSE(result.has_device_code());
    ASSERT_EQ(result.problems.size(), 1u) << describe(result);
    EXPECT_TRUE(has_problem_at(result, shoff, "ELF section table")) << describe(result);
  }
  // Just past the end of the file.
  ElfSpec spec;
  spec.sections.push_back({".nv_fatbin", 1, 2, sample.bytes});
  const uint64_t size = build_elf(spec).bytes.size();
  spec.shoff = size - 64 * 3 + 8;  // the last 8 bytes of the 3-header table run past the end
  const FileScan result = scan(build_elf(spec).bytes);
  EXPECT_TRUE(has_problem_at(result, size - 64 * 3 + 8, "extends past the end of the file"))
      << describe(result);
}

TEST(MalformedInput, AbsurdSectionCountsAndSizes) {
  const Sample sample = make_sample();
  auto with = [&](auto change) {
    ElfSpec spec;
    spec.sections.push_back({".nv_fatbin", 1, 2, sample.bytes});
    change(spec);
    return build_elf(spec);
  };
  {  // e_shnum 0xffff: 4 MiB of headers in a file of a few KiB.
    const BuiltElf elf = with([](ElfSpec& s) { s.shnum = 0xffff; });
    const FileScan result = scan(elf.bytes);
    EXPECT_TRUE(has_problem_at(result, elf.shoff, "65535 headers")) << describe(result);
  }
  {  // e_shnum 0: the count is read from section 0, which claims 2^64-1.
    BuiltElf elf = with([](ElfSpec& s) { s.shnum = 0; });
    put<uint64_t>(elf.bytes, elf.shoff + 32, ~uint64_t{0});
    const FileScan result = scan(elf.bytes);
    EXPECT_TRUE(has_problem_at(result, elf.shoff, "18446744073709551615 headers"))
        << describe(result);
  }
  {  // e_shentsize smaller than a section header, and the largest possible.
    const FileScan small = scan(with([](ElfSpec& s) { s.shentsize = 0; }).bytes);
    EXPECT_TRUE(has_problem_at(small, 58, "section header size 0")) << describe(small);
    const BuiltElf elf = with([](ElfSpec& s) { s.shentsize = 0xffff; });
    const FileScan huge = scan(elf.bytes);
    EXPECT_TRUE(has_problem_at(huge, elf.shoff, "of 65535 bytes")) << describe(huge);
  }
  {  // e_shstrndx out of range: no names, but .nv_fatbin is still an allocated
     // data section and its containers are still found by their magic.
    const FileScan result = scan(with([](ElfSpec& s) { s.shstrndx = 0xfff0; }).bytes);
    EXPECT_TRUE(result.ok()) << describe(result);
    ASSERT_EQ(result.images.size(), kSampleImages) << describe(result);
    EXPECT_EQ(result.images[0].section, "[1]");
  }
}

TEST(MalformedInput, SectionOffsetOrSizePastTheEndOfTheFile) {
  const Sample sample = make_sample();
  struct Case {
    uint64_t offset, size;
  };
  for (const Case bad : {Case{~uint64_t{0} - 15, 64}, Case{1u << 20, 64}, Case{64, ~uint64_t{0}},
                         Case{~uint64_t{0}, ~uint64_t{0}}}) {
    ElfSpec spec;
    spec.sections.push_back({".nv_fatbin", 1, 2, sample.bytes, 8, bad.offset, bad.size});
    spec.sections.push_back({".rodata", 1, 2, sample.bytes});  // intact: still scanned
    const BuiltElf elf = build_elf(spec);
    const FileScan result = scan(elf.bytes);
    ASSERT_EQ(result.problems.size(), 1u) << describe(result);
    EXPECT_TRUE(has_problem_at(
        result, elf.header_offset(0),
        "section .nv_fatbin (offset " + hex(bad.offset) + ", size " + hex(bad.size) + ")"))
        << describe(result);
    ASSERT_EQ(result.images.size(), kSampleImages) << describe(result);
    EXPECT_EQ(result.images[0].section, ".rodata");
  }
}

// Found in review: read_elf keeps NOBITS sections (their offset and size
// describe memory, not file bytes, and are not bounds-checked), and the
// cubin reader read a NOBITS .note.nv.tkinfo as data. One of 2^40 bytes,
// with a note at the file's end claiming a 4 GiB descriptor, walked 4e9
// bytes past the end of a 300-byte cubin one at a time. A NOBITS note here
// points at real bytes holding a toolkit string: it must not be read.
TEST(MalformedInput, CubinNotesInNobitsSectionsAreNotRead) {
  Bytes note(12);
  const std::string toolkit = "Cuda compilation tools, release 99.9, V99.9.1";
  Bytes descriptor(24);
  append(descriptor, to_bytes(toolkit));
  descriptor.push_back(std::byte{0});
  pad_to(descriptor, 4);
  put<uint32_t>(note, 0, 0);  // no name
  put<uint32_t>(note, 4, static_cast<uint32_t>(descriptor.size()));
  put<uint32_t>(note, 8, 2000);
  append(note, descriptor);

  auto cubin_with_note = [&](uint32_t type, uint64_t size) {
    ElfSpec spec;
    spec.machine = 190;  // EM_CUDA
    spec.type = 2;
    spec.sections.push_back({".nv.info", 1, 0, note, 4});
    spec.sections.push_back({".note.nv.tkinfo", type, 0, {}, 4});
    BuiltElf elf = build_elf(spec);
    spec.sections[1].offset = elf.data_offsets[0];  // where the note's bytes are
    spec.sections[1].size = size;
    return build_elf(spec).bytes;
  };
  using binary::ByteReader;
  // Control: the same bytes as a PROGBITS note are read.
  EXPECT_EQ(binary::read_cubin(ByteReader(cubin_with_note(1, note.size()))).toolkit, toolkit);
  EXPECT_EQ(binary::read_cubin(ByteReader(cubin_with_note(8, note.size()))).toolkit, "");
  EXPECT_EQ(binary::read_cubin(ByteReader(cubin_with_note(8, uint64_t{1} << 40))).toolkit, "");
}

// =================================================================================
// Overlapping and nested containers
// =================================================================================

// A container inside an entry's payload is payload, not a second container:
// a header walk skips it. Tested in .nv_fatbin, in an embedded region, and
// across the boundary between two chunks of a large region scanned in
// parallel, where the second chunk's search starts inside the outer one.
TEST(MalformedInput, NestedContainerIsPayloadNotASecondContainer) {
  const Sample sample = make_sample();
  EntrySpec outer_entry = cubin_entry(86);
  outer_entry.payload = sample.bytes;  // three whole containers inside
  const Bytes outer = container_bytes({{outer_entry}});
  for (const char* name : {".nv_fatbin", ".rodata"}) {
    const FileScan result = scan(elf_with_section(outer, name).bytes, /*deep=*/false);
    EXPECT_TRUE(result.ok()) << describe(result);
    ASSERT_EQ(result.images.size(), 1u) << name << ": " << describe(result);
    EXPECT_EQ(result.images[0].arch_name(), "sm_86");
    EXPECT_EQ(result.containers, 1u);
  }

  // 20 MiB of .rodata: chunks of 8 MiB with two threads. The outer container
  // straddles the 8 MiB boundary with nested containers on both sides; a
  // corrupt container sits before it in the same chunk, a good one after.
  constexpr uint64_t kChunk = 8u << 20;
  Bytes rodata = filler(20u << 20, 5);
  EntrySpec big = cubin_entry(87);
  big.payload = filler(256 * 1024, 9);
  std::copy(sample.bytes.begin(), sample.bytes.end(), big.payload.begin() + 4096);
  std::copy(sample.bytes.begin(), sample.bytes.end(), big.payload.begin() + 128 * 1024 + 4096);
  const Bytes straddling = container_bytes({{big}});
  const uint64_t outer_at = kChunk - 64 * 1024;
  std::copy(straddling.begin(), straddling.end(), rodata.begin() + outer_at);
  ContainerSpec corrupt_spec = sample.specs[0];
  corrupt_spec.entries[0].marker = 0x0303;
  const Bytes corrupt = container_bytes(corrupt_spec);
  const uint64_t corrupt_at = outer_at - 4096;
  std::copy(corrupt.begin(), corrupt.end(), rodata.begin() + corrupt_at);
  const uint64_t good_at = outer_at + straddling.size() + 4096;
  std::copy(sample.bytes.begin(), sample.bytes.end(), rodata.begin() + good_at);
  const BuiltElf elf = elf_with_section(std::move(rodata), ".rodata");
  const uint64_t base = elf.data_offsets[1];
  ASSERT_LT(base + outer_at, kChunk + base);
  ASSERT_GT(base + outer_at + straddling.size(), base + kChunk);
  FileScan serial = scan(elf.bytes, false, 1);
  FileScan parallel = scan(elf.bytes, false, 2);
  for (const FileScan* result : {&serial, &parallel}) {
    ASSERT_EQ(result->images.size(), 1 + kSampleImages) << describe(*result);
    EXPECT_EQ(result->images[0].arch_name(), "sm_87");
    EXPECT_EQ(result->images[0].container_offset, base + outer_at);
    EXPECT_EQ(result->images[1].container_offset, base + good_at);
    EXPECT_EQ(result->containers, 4u);
    // The corrupt container lies before good ones in the same section: it
    // must still be reported.
    ASSERT_EQ(result->problems.size(), 1u) << describe(*result);
    EXPECT_TRUE(has_problem_at(*result, base + corrupt_at + 16, "marker 0x303"))
        << describe(*result);
  }
}

// Container A claims more bytes than its entries fill, so it runs into
// container B: A's walk meets B's header where an entry should be. A is
// reported, B is still found.
TEST(MalformedInput, OverlappingContainersAreReportedAndResynchronised) {
  Sample sample;
  uint64_t a_at = 0;
  const FileScan result = scan_with_bad_middle_container(
      [](ContainerSpec& c) {
        c.size = 64 + 64 + 16 + 64;  // its own entry, then 80 bytes of container 2
      },
      &a_at, &sample);
  const uint64_t b_at = a_at + (sample.begin[2] - sample.begin[1]);
  ASSERT_EQ(result.images.size(), kSampleImages - 1) << describe(result);
  EXPECT_EQ(result.images[2].container_offset, b_at);
  EXPECT_TRUE(has_problem_at(result, b_at, "marker 0xba55 where 0x101 belongs"))
      << describe(result);
  // The size runs past the section instead: reported at the size field.
  const FileScan past =
      scan_with_bad_middle_container([](ContainerSpec& c) { c.size = 1u << 20; }, &a_at);
  expect_others_survive(past);
  EXPECT_TRUE(has_problem_at(past, a_at + 8, "runs past the end of .nv_fatbin")) << describe(past);
}

// Stray bytes inside .nv_fatbin before a good container: reported, and the
// walk resynchronises on the next magic.
// Found in review: after a container failed, the search for the next one
// resumed 4 bytes past its magic. A fatbin whose N entries each hide, in
// header bytes nothing reads, a container header running to the same bad
// last entry was walked N times over: 1 MiB took 5.3 s and gave 16384
// problems. Now the search resumes past the last entry that parsed.
TEST(MalformedInput, ContainersHiddenInsideEntriesAreNotWalkedOverAndOver) {
  constexpr size_t kEntries = 4096;  // 256 KiB: 0.3 s and 4096 problems before
  Bytes bytes(16 + 64 * kEntries);
  const uint64_t end = bytes.size();
  auto container_header = [&](uint64_t at) {
    put<uint32_t>(bytes, at, 0xBA55ED50);
    put<uint16_t>(bytes, at + 4, 1);
    put<uint16_t>(bytes, at + 6, 16);
    put<uint64_t>(bytes, at + 8, end - (at + 16));
  };
  container_header(0);
  for (size_t i = 0; i < kEntries; ++i) {
    const uint64_t entry = 16 + 64 * i;
    const bool last = i + 1 == kEntries;
    put<uint16_t>(bytes, entry, 2);
    put<uint16_t>(bytes, entry + 2, last ? 0x0202 : 0x0101);
    put<uint32_t>(bytes, entry + 4, 64);
    put<uint32_t>(bytes, entry + 0x1c, 90);
    if (!last) container_header(entry + 0x30);  // bytes 0x30-0x3f of an entry are unused
  }
  const uint64_t last_entry = 16 + 64 * (kEntries - 1);
  const FileScan result = scan(bytes);
  EXPECT_EQ(result.images.size(), 0u) << "a container is reported whole or not at all";
  ASSERT_EQ(result.problems.size(), 1u)
      << result.problems.size() << " problems, the first: " << result.problems.front().message;
  EXPECT_TRUE(has_problem_at(result, last_entry, "marker 0x202 where 0x101 belongs"))
      << describe(result);
}

TEST(MalformedInput, GarbageBetweenPackedContainers) {
  const Sample sample = make_sample();
  Bytes bytes = filler(40, 1);
  append(bytes, sample.bytes);
  const BuiltElf elf = elf_with_section(bytes);
  const FileScan result = scan(elf.bytes);
  ASSERT_EQ(result.images.size(), kSampleImages) << describe(result);
  ASSERT_EQ(result.problems.size(), 1u) << describe(result);
  EXPECT_TRUE(has_problem_at(result, elf.data_offsets[1], "not a fatbin container"))
      << describe(result);
}

// =================================================================================
// --deep on corrupted compressed payloads
// =================================================================================

// One compressed entry in a fatbin file, after `corrupt` has changed it.
const Image& deep_scan_one(FileScan& holder, EntrySpec entry,
                           const std::function<void(EntrySpec&)>& corrupt) {
  corrupt(entry);
  holder = scan(container_bytes({{entry}}), /*deep=*/true);
  EXPECT_TRUE(holder.ok()) << describe(holder);  // header problems are not payload problems
  if (holder.images.size() != 1)
    throw std::runtime_error("expected one image: " + describe(holder));
  return holder.images[0];
}

void expect_payload_error(const Image& image, uint64_t offset, std::string_view words) {
  ASSERT_TRUE(image.payload);
  EXPECT_TRUE(image.payload->error.starts_with("at offset " + hex(offset) + ": "))
      << image.payload->error;
  EXPECT_NE(image.payload->error.find(words), std::string::npos) << image.payload->error;
  EXPECT_FALSE(image.payload->ptx_version);
  EXPECT_FALSE(image.payload->cubin_sm);
}

TEST(MalformedInput, DeepScanOfCorruptedZstdPayloads) {
  for (const EntrySpec& plain : {ptx_entry(90, 9, 0), cubin_entry(80)}) {
    const EntrySpec entry = compress(plain, Compression::zstd);
    const uint64_t header = entry.header_size.value_or(64);
    const uint64_t payload = 16 + header;
    FileScan holder;
    // Control: it decompresses.
    const Image& good = deep_scan_one(holder, entry, [](EntrySpec&) {});
    ASSERT_TRUE(good.payload);
    EXPECT_EQ(good.payload->error, "");
    expect_payload_error(
        deep_scan_one(holder, entry, [](EntrySpec& e) { e.payload[0] = std::byte{0}; }), payload,
        "zstd payload does not decompress");
    expect_payload_error(deep_scan_one(holder, entry,
                                       [](EntrySpec& e) {
                                         for (size_t i = 8; i < e.compressed_size; ++i)
                                           e.payload[i] ^= std::byte{0x5a};
                                       }),
                         payload, "zstd payload");
    expect_payload_error(deep_scan_one(holder, entry, [](EntrySpec& e) { e.compressed_size /= 2; }),
                         payload, "zstd payload does not decompress");
    expect_payload_error(
        deep_scan_one(holder, entry, [](EntrySpec& e) { e.uncompressed_size += 1; }), payload,
        "the header says " + std::to_string(entry.uncompressed_size + 1));
    expect_payload_error(
        deep_scan_one(holder, entry, [](EntrySpec& e) { e.uncompressed_size = 0; }), 16 + 0x38,
        "uncompressed size 0x0 is outside");
    expect_payload_error(
        deep_scan_one(holder, entry, [](EntrySpec& e) { e.uncompressed_size = ~uint64_t{0}; }),
        16 + 0x38, "uncompressed size 0xffffffffffffffff is outside");
    // The largest size --deep accepts, on a payload of a few hundred bytes:
    // refused from the frame header ("holds"), before anything is allocated,
    // not after decompressing into a gigabyte ("decompressed to"). The
    // message tells the two paths apart; a time limit here would be flaky.
    expect_payload_error(
        deep_scan_one(holder, entry, [](EntrySpec& e) { e.uncompressed_size = 1u << 30; }), payload,
        "zstd payload holds " + std::to_string(entry.uncompressed_size) +
            " bytes, the header says " + std::to_string(1u << 30));
  }
}

// A "VmHWM:"/"VmRSS:" line of /proc/self/status, in bytes; 0 if absent.
uint64_t status_bytes(std::string_view field) {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.starts_with(field)) return std::stoull(line.substr(field.size())) * 1024;
  }
  return 0;
}

// Resets the process's peak resident memory (VmHWM) to what it holds now, so
// a later peak is this test's own and not an earlier test's in the same
// process. False where the kernel does not allow it.
bool reset_peak_resident() {
  std::ofstream clear("/proc/self/clear_refs");
  clear << "5";
  clear.close();
  return static_cast<bool>(clear) && status_bytes("VmHWM:") <= status_bytes("VmRSS:") + (1 << 20);
}

// A zstd frame that does not declare its content size, as a streaming
// compressor writes it.
Bytes zstd_frame_without_its_size(const Bytes& input) {
  Bytes out(ZSTD_compressBound(input.size()));
  ZSTD_CCtx* context = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(context, ZSTD_c_contentSizeFlag, 0);
  const size_t size = ZSTD_compress2(context, out.data(), out.size(), input.data(), input.size());
  ZSTD_freeCCtx(context);
  if (ZSTD_isError(size)) throw std::runtime_error("ZSTD_compress2 failed");
  out.resize(size);
  return out;
}

// Found in review: a frame that declares no size (or one followed by more
// bytes) was not checked against the header, whose size was allocated and
// zero-filled before decompressing. A 17-byte frame under a header claiming
// 1 GiB cost 1 GiB; four such entries took 4.4 s. Now the buffer grows with
// the bytes that arrive, and the peak memory shows it did not grow to the
// header's claim.
TEST(MalformedInput, DeepScanOfAZstdFrameWithoutItsSizeAllocatesOnlyWhatItDecompresses) {
  const EntrySpec plain = cubin_entry(80);
  EntrySpec entry = compress(plain, Compression::zstd);
  entry.payload = zstd_frame_without_its_size(plain.payload);
  entry.compressed_size = static_cast<uint32_t>(entry.payload.size());
  ASSERT_EQ(ZSTD_getFrameContentSize(entry.payload.data(), entry.payload.size()),
            ZSTD_CONTENTSIZE_UNKNOWN);
  const uint64_t payload = 16 + entry.header_size.value_or(64);
  FileScan holder;
  // Control: with the true size in its header it decompresses and is read.
  const Image& good = deep_scan_one(holder, entry, [](EntrySpec&) {});
  ASSERT_TRUE(good.payload);
  EXPECT_EQ(good.payload->error, "");
  EXPECT_EQ(good.payload->cubin_sm, 80u);
  // Zero padding after the frame, inside the compressed size, is padding.
  const Image& padded = deep_scan_one(holder, entry, [](EntrySpec& e) {
    e.payload.resize(e.payload.size() + 8);
    e.compressed_size += 8;
  });
  ASSERT_TRUE(padded.payload);
  EXPECT_EQ(padded.payload->error, "");
  // Two frames are one payload.
  const Image& two_frames = deep_scan_one(holder, entry, [&](EntrySpec& e) {
    const Bytes half(plain.payload.begin(), plain.payload.begin() + 40);
    const Bytes rest(plain.payload.begin() + 40, plain.payload.end());
    e.payload = zstd_frame_without_its_size(half);
    append(e.payload, zstd_compress(rest));
    e.compressed_size = static_cast<uint32_t>(e.payload.size());
  });
  ASSERT_TRUE(two_frames.payload);
  EXPECT_EQ(two_frames.payload->error, "");
  EXPECT_EQ(two_frames.payload->cubin_sm, 80u);
  // Bytes after the frame that are not padding.
  expect_payload_error(deep_scan_one(holder, entry,
                                     [](EntrySpec& e) {
                                       append(e.payload, to_bytes("not zstd"));
                                       e.compressed_size += 8;
                                     }),
                       payload, "zstd payload does not decompress");
  // A header claiming a byte less; far less (the decoder stopped at its
  // buffer's end with input left); and far more.
  expect_payload_error(
      deep_scan_one(holder, entry, [](EntrySpec& e) { e.uncompressed_size -= 1; }), payload,
      "zstd payload decompressed to " + std::to_string(entry.uncompressed_size) +
          " bytes, the header says " + std::to_string(entry.uncompressed_size - 1));
  expect_payload_error(deep_scan_one(holder, entry, [](EntrySpec& e) { e.uncompressed_size = 16; }),
                       payload, "zstd payload decompresses to more than the 16 bytes");
  if (!reset_peak_resident()) GTEST_SKIP() << "/proc/self/clear_refs cannot reset VmHWM here";
  const uint64_t before = status_bytes("VmRSS:");
  expect_payload_error(
      deep_scan_one(holder, entry, [](EntrySpec& e) { e.uncompressed_size = 1u << 30; }), payload,
      "zstd payload decompressed to " + std::to_string(entry.uncompressed_size) +
          " bytes, the header says " + std::to_string(1u << 30));
  EXPECT_LT(status_bytes("VmHWM:") - before, uint64_t{64} << 20)
      << "the claimed gigabyte was allocated";
}

TEST(MalformedInput, DeepScanOfCorruptedLz4Payloads) {
  for (const EntrySpec& plain : {ptx_entry(90, 9, 0), cubin_entry(80)}) {
    const EntrySpec entry = compress(plain, Compression::lz4);
    const uint64_t payload = 16 + entry.header_size.value_or(64);
    FileScan holder;
    const Image& good = deep_scan_one(holder, entry, [](EntrySpec&) {});
    ASSERT_TRUE(good.payload);
    EXPECT_EQ(good.payload->error, "");
    expect_payload_error(deep_scan_one(holder, entry,
                                       [](EntrySpec& e) {
                                         for (auto& b : e.payload) b = std::byte{0xff};
                                       }),
                         payload, "LZ4 payload does not decompress");
    expect_payload_error(deep_scan_one(holder, entry, [](EntrySpec& e) { e.compressed_size -= 3; }),
                         payload, "LZ4 payload does not decompress");
    expect_payload_error(
        deep_scan_one(holder, entry, [](EntrySpec& e) { e.uncompressed_size -= 1; }), payload,
        "LZ4 payload does not decompress");
    expect_payload_error(
        deep_scan_one(holder, entry, [](EntrySpec& e) { e.uncompressed_size += 1; }), payload,
        "LZ4 payload does not decompress");
    // A gigabyte from a few hundred bytes is beyond LZ4's 255:1 ratio: refused
    // before anything is allocated ("cannot"), not after ("does not").
    expect_payload_error(
        deep_scan_one(holder, entry, [](EntrySpec& e) { e.uncompressed_size = 1u << 30; }), payload,
        "cannot decompress to the " + std::to_string(1u << 30) + " bytes");
  }
}

// A payload that decompresses but is not what its header says it is.
TEST(MalformedInput, DeepScanOfPayloadsThatAreNotWhatTheHeaderSays) {
  FileScan holder;
  EntrySpec not_a_cubin = compress(cubin_entry(80), Compression::zstd);
  not_a_cubin.payload = zstd_compress(to_bytes(std::string(64, 'x')));
  not_a_cubin.compressed_size = static_cast<uint32_t>(not_a_cubin.payload.size());
  const Image& image = deep_scan_one(holder, not_a_cubin, [](EntrySpec&) {});
  ASSERT_TRUE(image.payload);
  EXPECT_NE(image.payload->error.find("not a 64-bit ELF cubin"), std::string::npos)
      << image.payload->error;

  EntrySpec wrong_arch = compress(ptx_entry(90, 9, 0), Compression::lz4);
  wrong_arch.arch = 80;
  const Image& ptx = deep_scan_one(holder, wrong_arch, [](EntrySpec&) {});
  ASSERT_TRUE(ptx.payload);
  EXPECT_EQ(ptx.payload->error, "");
  ASSERT_EQ(ptx.payload->disagreements.size(), 1u);
  EXPECT_EQ(ptx.payload->disagreements[0], "entry header says compute_80, .target says sm_90");
}

// =================================================================================
// Deterministic random mutation
// =================================================================================

struct Fuzzer {
  std::mt19937_64 random;
  std::vector<std::pair<uint64_t, uint64_t>> hot;  // header ranges, where mutations do damage

  uint64_t below(uint64_t n) { return std::uniform_int_distribution<uint64_t>(0, n - 1)(random); }

  // Mutates 1-4 places in `bytes`; returns the offsets touched, first to last.
  std::vector<uint64_t> mutate(std::span<std::byte> bytes) {
    std::vector<uint64_t> touched;
    const uint64_t count = 1 + below(4);
    for (uint64_t m = 0; m < count; ++m) {
      uint64_t at;
      if (!hot.empty() && below(4) != 0) {
        const auto& [begin, end] = hot[below(hot.size())];
        at = end > begin && end <= bytes.size() ? begin + below(end - begin) : below(bytes.size());
      } else {
        at = below(bytes.size());
      }
      static constexpr uint64_t kValues[] = {0,          1,      0x3f,         0x40,
                                             0xff,       0xffff, 0xffffffff,   0x80000000,
                                             0xba55ed50, 0x0101, ~uint64_t{0}, uint64_t{1} << 63};
      switch (below(4)) {
        case 0:
        case 1:
          bytes[at] ^= std::byte(static_cast<uint8_t>(1 + below(255)));
          touched.push_back(at);
          break;
        case 2: {  // an interesting value over a whole field
          const uint64_t width = below(2) ? 4 : 8;
          const uint64_t value =
              below(3) ? kValues[below(std::size(kValues))] : below(bytes.size() + 64);
          for (uint64_t i = 0; i < width && at + i < bytes.size(); ++i) {
            bytes[at + i] = std::byte(static_cast<uint8_t>(value >> (8 * i)));
            touched.push_back(at + i);
          }
          break;
        }
        default:
          bytes[at] = below(2) ? std::byte{0} : std::byte{0xff};
          touched.push_back(at);
      }
    }
    std::sort(touched.begin(), touched.end());
    return touched;
  }
};

// What every scan of every input must satisfy.
void check_invariants(const FileScan& result, uint64_t size, const std::string& context) {
  for (const auto& problem : result.problems) ASSERT_TRUE(names_its_offset(problem)) << context;
  ASSERT_LE(result.images.size(), size / 64) << context;
  for (const Image& image : result.images) {
    // A mutated e_machine can turn a host library into a cubin: one image, the file.
    if (image.section == "(file)") {
      ASSERT_EQ(result.format, FileFormat::cubin) << context;
      continue;
    }
    ASSERT_LE(image.container_offset + 16, image.offset) << context;
    ASSERT_LE(image.offset + 64, image.payload_offset) << context;
    ASSERT_LE(image.payload_offset, size) << context;
    ASSERT_LE(image.size, size - image.payload_offset) << context;
    if (image.payload && !image.payload->error.empty()) {
      ASSERT_TRUE(image.payload->error.starts_with("at offset "))
          << context << ": " << image.payload->error;
    }
  }
}

struct FuzzTarget {
  Bytes bytes;
  FileScan baseline;
  std::vector<std::pair<uint64_t, uint64_t>> payloads;  // [begin, end) of each entry payload
  std::vector<std::pair<uint64_t, uint64_t>> regions;   // data sections scanned for containers
  std::map<uint64_t, uint64_t> container_end;  // container offset -> end of its last payload
};

// The sample packed in .nv_fatbin, and again embedded among unrelated data
// (with a stray magic number) in .rodata.
FuzzTarget synthetic_target() {
  const Sample sample = make_sample();
  Bytes rodata = filler(200, 7);
  put<uint32_t>(rodata, 96, 0xBA55ED50);  // the magic alone, inside unrelated data
  pad_to(rodata, 8);
  append(rodata, sample.bytes);
  append(rodata, filler(100, 11));
  ElfSpec spec;
  spec.sections.push_back({".text", 1, 6, filler(64, 2), 16});
  spec.sections.push_back({".nv_fatbin", 1, 2, sample.bytes});
  spec.sections.push_back({".rodata", 1, 2, rodata});
  const BuiltElf elf = build_elf(spec);
  FuzzTarget target;
  target.bytes = elf.bytes;
  for (size_t i = 0; i < 3; ++i) {
    target.regions.push_back(
        {elf.data_offsets[i], elf.data_offsets[i] + spec.sections[i].data.size()});
  }
  return target;
}

void prepare(FuzzTarget& target, Fuzzer& fuzzer) {
  target.baseline = scan(target.bytes);
  fuzzer.hot = {{0, 64}, {get<uint64_t>(target.bytes, 40), target.bytes.size()}};
  for (const Image& image : target.baseline.images) {
    fuzzer.hot.push_back({image.container_offset, image.container_offset + 16});
    fuzzer.hot.push_back({image.offset, image.payload_offset});
    target.payloads.push_back({image.payload_offset, image.payload_offset + image.size});
    uint64_t& end = target.container_end[image.container_offset];
    end = std::max(end, image.payload_offset + image.size);
  }
}

// How often each mutation loop ran into what: proof that it reaches the
// error paths rather than only mutating bytes nobody reads.
struct FuzzStats {
  int scans = 0, with_problems = 0, with_payload_errors = 0, lost_images = 0;
};

// ARCHFIT_FUZZ_SCALE=N runs N times the iterations (a longer soak, e.g.
// under AddressSanitizer); the default keeps each loop well under a second.
int scaled(int iterations) {
  const char* scale = std::getenv("ARCHFIT_FUZZ_SCALE");
  return scale && std::atoi(scale) > 0 ? iterations * std::atoi(scale) : iterations;
}

// Runs `iterations` seeded mutations of `target`; every fourth scan is deep.
void fuzz(FuzzTarget& target, Fuzzer& fuzzer, int iterations, FuzzStats& stats) {
  GuardedBuffer buffer(target.bytes);
  const std::span<std::byte> bytes = buffer.bytes();
  iterations = scaled(iterations);
  for (int iteration = 0; iteration < iterations; ++iteration) {
    const std::vector<uint64_t> touched = fuzzer.mutate(bytes);
    const bool deep = iteration % 4 == 0;
    ScanOptions options;
    options.deep = deep;
    const FileScan result = binary::scan_bytes(bytes, "fuzz", options);
    const std::string context = "iteration " + std::to_string(iteration) +
                                ", first byte changed at " + hex(touched.front());
    check_invariants(result, bytes.size(), context);
    if (::testing::Test::HasFatalFailure()) return;
    ++stats.scans;
    stats.with_problems += !result.ok();
    stats.with_payload_errors += std::any_of(
        result.images.begin(), result.images.end(),
        [](const Image& image) { return image.payload && !image.payload->error.empty(); });
    stats.lost_images += result.images.size() < target.baseline.images.size();

    auto inside = [&](const auto& ranges, uint64_t at) {
      return std::any_of(ranges.begin(), ranges.end(),
                         [&](const auto& r) { return r.first <= at && at < r.second; });
    };
    // Bytes inside payloads are skipped by a header walk: same images, no problems.
    if (!deep && std::all_of(touched.begin(), touched.end(),
                             [&](uint64_t at) { return inside(target.payloads, at); })) {
      ASSERT_TRUE(result.ok()) << context << ": " << describe(result);
      ASSERT_EQ(result.images.size(), target.baseline.images.size()) << context;
    }
    // Corruption inside a data section cannot hide the containers before it.
    if (std::all_of(touched.begin(), touched.end(),
                    [&](uint64_t at) { return inside(target.regions, at); })) {
      for (const Image& image : target.baseline.images) {
        const auto& region = *std::find_if(
            target.regions.begin(), target.regions.end(),
            [&](const auto& r) { return r.first <= image.offset && image.offset < r.second; });
        const auto first_hit = std::find_if(touched.begin(), touched.end(), [&](uint64_t at) {
          return region.first <= at && at < region.second;
        });
        if (first_hit != touched.end() &&
            *first_hit < target.container_end.at(image.container_offset))
          continue;
        ASSERT_TRUE(std::any_of(result.images.begin(), result.images.end(),
                                [&](const Image& found) { return found.offset == image.offset; }))
            << context << ": lost the image at " << hex(image.offset) << "\n"
            << describe(result);
      }
    }
    for (const uint64_t at : touched) bytes[at] = target.bytes[at];
  }
  // The buffer is back to the original: so is the scan.
  const FileScan after = binary::scan_bytes(bytes, "fuzz");
  EXPECT_EQ(after.images.size(), target.baseline.images.size());
  std::cout << "[ FUZZ     ] " << stats.scans << " mutated scans: " << stats.with_problems
            << " with problems, " << stats.with_payload_errors << " with payload errors, "
            << stats.lost_images << " lost images\n";
}

TEST(MalformedFuzz, SeededMutationsOfASyntheticLibrary) {
  FuzzTarget target = synthetic_target();
  Fuzzer fuzzer{std::mt19937_64(0x5eed'f00d)};
  prepare(target, fuzzer);
  ASSERT_EQ(target.baseline.images.size(), 2 * kSampleImages) << describe(target.baseline);
  ASSERT_TRUE(target.baseline.ok()) << describe(target.baseline);
  FuzzStats stats;
  fuzz(target, fuzzer, 4000, stats);
  EXPECT_GT(stats.with_problems, stats.scans / 5);
  EXPECT_GT(stats.with_payload_errors, 0);
}

TEST(MalformedFuzz, SeededMutationsOfARawFatbin) {
  FuzzTarget target;
  target.bytes = make_sample().bytes;
  target.regions = {{0, target.bytes.size()}};
  Fuzzer fuzzer{std::mt19937_64(0xfa7b'1234)};
  prepare(target, fuzzer);
  fuzzer.hot.erase(fuzzer.hot.begin(),
                   fuzzer.hot.begin() + 2);  // there is no ELF header or section table
  ASSERT_EQ(target.baseline.images.size(), kSampleImages);
  FuzzStats stats;
  fuzz(target, fuzzer, 2000, stats);
  EXPECT_GT(stats.with_problems, stats.scans / 5);
}

// Real containers from NVIDIA's CUPTI: the .rodata section of libcupti.so.13
// (0x6b068 bytes; 3 containers, 33 uncompressed SASS images, sm_75..sm_121)
// in a small host ELF of its own.
TEST(MalformedFuzz, SeededMutationsOfRealCuptiContainers) {
  const fs::path path = fs::path(ARCHFIT_CUDA_LIB_DIR) / "libcupti.so.13";
  std::ifstream file(path, std::ios::binary);
  if (!file) GTEST_SKIP() << path << " is absent: no real NVIDIA containers to mutate";
  Bytes library(fs::file_size(path));
  file.read(reinterpret_cast<char*>(library.data()), static_cast<std::streamsize>(library.size()));
  ASSERT_TRUE(file);
  const binary::ElfFile elf = binary::read_elf(binary::ByteReader(library));
  const binary::ElfSection* rodata = binary::find_section(elf, ".rodata");
  ASSERT_TRUE(rodata);
  FuzzTarget target;
  const BuiltElf built = elf_with_section(
      Bytes(library.begin() + rodata->offset, library.begin() + rodata->offset + rodata->size),
      ".rodata");
  target.bytes = built.bytes;
  target.regions = {{built.data_offsets[1], built.data_offsets[1] + rodata->size}};
  library.clear();
  Fuzzer fuzzer{std::mt19937_64(0xc0de'cafe)};
  prepare(target, fuzzer);
  ASSERT_GT(target.baseline.images.size(), 0u);
  ASSERT_TRUE(target.baseline.ok()) << describe(target.baseline);
  FuzzStats stats;
  fuzz(target, fuzzer, 2000, stats);
  EXPECT_GT(stats.with_problems, stats.scans / 10);
  EXPECT_GT(stats.with_payload_errors, 0);

  // The first real cubin as a file of its own.
  const Image& first = target.baseline.images[0];
  FuzzTarget cubin;
  cubin.bytes = Bytes(target.bytes.begin() + first.payload_offset,
                      target.bytes.begin() + first.payload_offset + first.size);
  cubin.baseline = scan(cubin.bytes);
  ASSERT_EQ(cubin.baseline.format, FileFormat::cubin);
  ASSERT_EQ(cubin.baseline.images.size(), 1u);
  Fuzzer cubin_fuzzer{std::mt19937_64(0xc0b1'0000)};
  cubin_fuzzer.hot = {{0, 64}, {get<uint64_t>(cubin.bytes, 40), cubin.bytes.size()}};
  GuardedBuffer buffer(cubin.bytes);
  for (int iteration = 0; iteration < scaled(1000); ++iteration) {
    const auto touched = cubin_fuzzer.mutate(buffer.bytes());
    const FileScan result = binary::scan_bytes(buffer.bytes(), "cubin");
    for (const auto& problem : result.problems) ASSERT_TRUE(names_its_offset(problem));
    ASSERT_LE(result.images.size(), 1u);
    for (const uint64_t at : touched) buffer.bytes()[at] = cubin.bytes[at];
  }
}

// =================================================================================
// Directory trees
// =================================================================================
// POSIX file kinds (FIFOs, links, permission bits, another user): left out of
// the Windows build of these tests (docs/windows.md, "The tests under Wine").
#ifndef _WIN32

class TempDir {
 public:
  TempDir() {
    std::random_device seed;
    path_ = fs::temp_directory_path() /
            ("archfit-malformed-" + std::to_string(::getpid()) + "-" + std::to_string(seed()));
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;
    fs::permissions(path_ / "locked", fs::perms::owner_all, ignored);
    fs::remove_all(path_, ignored);
  }
  const fs::path& path() const { return path_; }
  fs::path write(const std::string& name, const Bytes& bytes) const {
    const fs::path file = path_ / name;
    fs::create_directories(file.parent_path());
    std::ofstream(file, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    return file;
  }

 private:
  fs::path path_;
};

const FileScan* find(const binary::TreeScan& tree, const fs::path& path) {
  for (const auto& file : tree.files) {
    if (file.path == path.string()) return &file;
  }
  return nullptr;
}

// scan_tree on another thread, with a watchdog: a scan that blocks on a FIFO
// fails the test instead of hanging it (the watchdog opens the FIFO itself,
// which releases a blocked open).
binary::TreeScan scan_tree_with_watchdog(const std::vector<fs::path>& paths,
                                         const std::vector<fs::path>& fifos) {
  auto pending = std::async(std::launch::async, [&] {
    binary::TreeScanOptions options;
    options.threads = 2;
    return binary::scan_tree(paths, options);
  });
  if (pending.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
    ADD_FAILURE() << "scan_tree did not finish within 10 s";
    for (const auto& fifo : fifos) {
      const int fd = ::open(fifo.c_str(), O_RDWR | O_NONBLOCK);
      if (fd >= 0) ::close(fd);
    }
  }
  return pending.get();
}

TEST(TreeScanRobustness, AMalformedFileDoesNotStopTheOthers) {
  TempDir dir;
  const Sample sample = make_sample();
  const fs::path good = dir.write("a_good.fatbin", sample.bytes);
  BuiltElf bad_elf = elf_with_section(sample.bytes);
  put<uint64_t>(bad_elf.bytes, bad_elf.data_offsets[1] + sample.begin[1] + 8, ~uint64_t{0});
  const fs::path bad = dir.write("b_bad.so", bad_elf.bytes);
  const fs::path truncated =
      dir.write("c_truncated.so", Bytes(bad_elf.bytes.begin(), bad_elf.bytes.begin() + 40));
  const fs::path library =
      dir.write("sub/d_good.so", elf_with_section(sample.bytes, ".rodata").bytes);
  const binary::TreeScan tree = scan_tree_with_watchdog({dir.path()}, {});
  ASSERT_EQ(tree.files.size(), 4u);
  EXPECT_EQ(tree.files[0].path, good.string());  // sorted by name
  EXPECT_EQ(tree.files[3].path, library.string());
  EXPECT_EQ(tree.files[0].images.size(), kSampleImages);
  EXPECT_TRUE(tree.files[0].ok()) << describe(tree.files[0]);
  EXPECT_EQ(tree.files[1].images.size(), kSampleImages - 1);
  EXPECT_TRUE(has_problem_at(tree.files[1], bad_elf.data_offsets[1] + sample.begin[1] + 8,
                             "runs past the end"))
      << describe(tree.files[1]);
  EXPECT_TRUE(has_problem_at(tree.files[2], 0, "ELF header needs 64 bytes"))
      << describe(tree.files[2]);
  EXPECT_EQ(tree.files[3].images.size(), kSampleImages);
  EXPECT_EQ(tree.files[3].images[0].section, ".rodata");
  uint64_t total = 0;
  for (const auto& file : tree.files) total += file.file_size;
  EXPECT_EQ(tree.bytes, total);
}

TEST(TreeScanRobustness, SymlinkLoopsTerminateAndVisitEachFileOnce) {
  TempDir dir;
  const fs::path good = dir.write("lib/good.fatbin", make_sample().bytes);
  fs::create_directory_symlink(dir.path(), dir.path() / "lib" / "up");     // lib/up -> the root
  fs::create_directory_symlink(dir.path() / "lib", dir.path() / "again");  // again -> lib
  fs::create_symlink(dir.path() / "self", dir.path() / "self");            // a link to itself
  fs::create_symlink(dir.path() / "b", dir.path() / "a");                  // a -> b -> a
  fs::create_symlink(dir.path() / "a", dir.path() / "b");
  fs::create_symlink(dir.path() / "missing", dir.path() / "dangling");
  const binary::TreeScan tree = scan_tree_with_watchdog({dir.path()}, {});
  ASSERT_EQ(tree.files.size(), 1u)
      << "links met inside a tree are followed once or quietly skipped";
  EXPECT_EQ(tree.files[0].path, good.string());
  EXPECT_EQ(tree.files[0].images.size(), kSampleImages);

  // Named on the command line, a link loop is the user's question: say why.
  const binary::TreeScan named =
      scan_tree_with_watchdog({dir.path() / "self", dir.path() / "a"}, {});
  ASSERT_EQ(named.files.size(), 2u);
  for (const auto& file : named.files) {
    EXPECT_TRUE(file.unreadable);
    ASSERT_EQ(file.problems.size(), 1u);
    EXPECT_NE(file.problems[0].message.find("Too many levels of symbolic links"), std::string::npos)
        << file.problems[0].message;
  }
}

TEST(TreeScanRobustness, FifoDoesNotHang) {
  TempDir dir;
  const fs::path good = dir.write("good.fatbin", make_sample().bytes);
  const fs::path fifo = dir.path() / "pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
  // In a tree a FIFO is not a file to scan; named, it is looked at and found empty.
  const binary::TreeScan tree = scan_tree_with_watchdog({dir.path()}, {fifo});
  ASSERT_EQ(tree.files.size(), 1u);
  EXPECT_EQ(tree.files[0].path, good.string());
  const binary::TreeScan named = scan_tree_with_watchdog({fifo, good}, {fifo});
  ASSERT_EQ(named.files.size(), 2u);
  const FileScan* pipe = find(named, fifo);
  ASSERT_TRUE(pipe);
  EXPECT_FALSE(pipe->has_device_code());
  EXPECT_TRUE(pipe->ok()) << describe(*pipe);
  EXPECT_EQ(find(named, good)->images.size(), kSampleImages);
  // scan_file straight on the FIFO, too.
  const FileScan direct = binary::scan_file(fifo);
  EXPECT_FALSE(direct.has_device_code());
}

TEST(TreeScanRobustness, NonexistentAndUnreadablePathsGiveAProblem) {
  TempDir dir;
  const fs::path good = dir.write("good.fatbin", make_sample().bytes);
  const fs::path missing = dir.path() / "no-such-file.so";
  const fs::path not_a_directory = good / "child.so";
  const binary::TreeScan tree = scan_tree_with_watchdog({missing, good, not_a_directory}, {});
  ASSERT_EQ(tree.files.size(), 3u);
  const FileScan* absent = find(tree, missing);
  ASSERT_TRUE(absent);
  EXPECT_TRUE(absent->unreadable);
  ASSERT_EQ(absent->problems.size(), 1u);
  EXPECT_NE(absent->problems[0].message.find("No such file or directory"), std::string::npos);
  const FileScan* under_file = find(tree, not_a_directory);
  ASSERT_TRUE(under_file);
  ASSERT_EQ(under_file->problems.size(), 1u);
  EXPECT_NE(under_file->problems[0].message.find("Not a directory"), std::string::npos);
  EXPECT_EQ(find(tree, good)->images.size(), kSampleImages);

  const FileScan direct = binary::scan_file(missing);
  EXPECT_TRUE(direct.unreadable);
  ASSERT_EQ(direct.problems.size(), 1u);
  EXPECT_NE(direct.problems[0].message.find("cannot open"), std::string::npos);
}

// What an unprivileged user gets for a file and a directory they may not read;
// "" when all is as it should be.
std::string check_permission_denied(const fs::path& root, const fs::path& unreadable,
                                    const fs::path& locked, const fs::path& inside) {
  const binary::TreeScan tree = scan_tree_with_watchdog({root}, {});
  std::string failures;
  const FileScan* file = find(tree, unreadable);
  if (!file || !file->unreadable || file->problems.size() != 1 ||
      file->problems[0].message != "cannot open: Permission denied") {
    failures += "unreadable file: " + (file ? describe(*file) : "not listed") + "\n";
  }
  const FileScan* directory = find(tree, locked);
  if (!directory || directory->problems.size() != 1 ||
      directory->problems[0].message != "cannot list directory: Permission denied") {
    failures += "locked directory: " + (directory ? describe(*directory) : "not listed") + "\n";
  }
  if (find(tree, inside)) failures += "a file inside the locked directory was listed\n";
  return failures;
}

TEST(TreeScanRobustness, PermissionDeniedGivesAProblem) {
  TempDir dir;
  const fs::path locked = dir.path() / "locked";
  const fs::path inside = dir.write("locked/lib.fatbin", make_sample().bytes);
  const fs::path unreadable = dir.write("unreadable.fatbin", make_sample().bytes);
  fs::permissions(unreadable, fs::perms::none);
  fs::permissions(locked, fs::perms::none);
  if (::geteuid() != 0) {
    EXPECT_EQ(check_permission_denied(dir.path(), unreadable, locked, inside), "");
    return;
  }
  // Permission bits deny root nothing: check as `nobody`, in a forked child
  // ("fast" style: no re-run of this test, so the child sees this TempDir,
  // and no scanner threads are alive at the fork).
  GTEST_FLAG_SET(death_test_style, "fast");
  EXPECT_EXIT(
      {
        if (::setgid(65534) != 0 || ::setuid(65534) != 0) {
          std::fputs("cannot become nobody (uid 65534)\n", stderr);
          std::_Exit(2);
        }
        const std::string failures =
            check_permission_denied(dir.path(), unreadable, locked, inside);
        std::fputs(failures.c_str(), stderr);
        std::_Exit(failures.empty() ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

#endif  // _WIN32

}  // namespace
}  // namespace archfit::test
