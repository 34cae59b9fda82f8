// What the loader reads of a library, read from libraries nvcc and the linker
// built with torch's own SONAMEs, DT_NEEDED and DT_RPATH (tests/fixtures/stacks.cmake).
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

#include "binary/elf.hpp"
#include "binary/elf_linkage.hpp"
#include "binary/file_scan.hpp"
#include "check/reach.hpp"
#include "stack_site.hpp"

using archfit::binary::scan_file;
using archfit::testing::stack_fixture;

TEST(Linkage, ReadsTheSonameNeededAndRpathTheLinkerWrote) {
  if (!archfit::testing::stack_fixtures_built()) GTEST_SKIP() << "the stack fixtures need nvcc";
  const auto scan = scan_file(stack_fixture("torch_cu128/libtorch_cuda.so"));
  EXPECT_TRUE(scan.ok()) << scan.problems.front().message;
  EXPECT_EQ(archfit::binary::machine_name(scan.machine), "x86_64");
  ASSERT_TRUE(scan.linkage);
  EXPECT_EQ(scan.linkage->name, "libtorch_cuda.so");
  const auto& needed = scan.linkage->needed;
  for (const char* name : {"libcudart.so.12", "libcufft.so.11", "libcusparseLt.so.0"})
    EXPECT_NE(std::find(needed.begin(), needed.end(), name), needed.end()) << name;
  EXPECT_EQ(scan.linkage->rpath,
            (std::vector<std::string>{"$ORIGIN/../../nvidia/cuda_runtime/lib",
                                      "$ORIGIN/../../nvidia/cufft/lib",
                                      "$ORIGIN/../../nvidia/cusparselt/lib", "$ORIGIN"}));
  EXPECT_TRUE(scan.linkage->runpath.empty());
  // A PTX file or a cubin has no linkage; an object file no .dynamic.
  EXPECT_FALSE(scan_file(std::filesystem::path(ARCHFIT_FIXTURE_DIR) / "sm_80.cubin").linkage);
  EXPECT_FALSE(scan_file(stack_fixture("modern.o")).linkage);
}

TEST(Linkage, ADynamicEntryPastItsStringTableIsAProblemAndTheImagesAreStillRead) {
  if (!archfit::testing::stack_fixtures_built()) GTEST_SKIP() << "the stack fixtures need nvcc";
  std::ifstream in(stack_fixture("cufft/libcufft.so.11"), std::ios::binary);
  std::vector<char> bytes{std::istreambuf_iterator<char>(in), {}};
  const archfit::binary::ByteReader reader(
      std::span(reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()));
  const auto elf = archfit::binary::read_elf(reader);
  const archfit::binary::ElfSection* dynamic = nullptr;
  for (const auto& section : elf.sections)
    if (section.type == archfit::binary::elf::kSectionDynamic) dynamic = &section;
  ASSERT_NE(dynamic, nullptr);
  // Point the first DT_NEEDED at a string far past the table.
  for (uint64_t at = dynamic->offset; at + 16 <= dynamic->offset + dynamic->size; at += 16) {
    int64_t tag;
    std::memcpy(&tag, bytes.data() + at, 8);
    if (tag != 1) continue;
    const uint64_t far = 1u << 30;
    std::memcpy(bytes.data() + at + 8, &far, 8);
    break;
  }
  const auto scan = archfit::binary::scan_bytes(
      std::span(reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()), "damaged.so");
  ASSERT_FALSE(scan.problems.empty());
  EXPECT_NE(scan.problems.front().message.find("past the end of its string table"),
            std::string::npos)
      << scan.problems.front().message;
  EXPECT_FALSE(scan.linkage);
  EXPECT_EQ(scan.images.size(), 5u);  // sm_75 … sm_90 and compute_90, as before
}

TEST(Linkage, OriginInAnRpathIsTheLibrarysFolder) {
  EXPECT_EQ(archfit::check::expand_origin("$ORIGIN/../../nvidia/cufft/lib", "/s/torch/lib"),
            std::filesystem::path("/s/nvidia/cufft/lib"));
  EXPECT_EQ(archfit::check::expand_origin("${ORIGIN}", "/s/torch/lib"),
            std::filesystem::path("/s/torch/lib"));
  EXPECT_EQ(archfit::check::expand_origin("/usr/local/cuda/lib64", "/s"),
            std::filesystem::path("/usr/local/cuda/lib64"));
}
