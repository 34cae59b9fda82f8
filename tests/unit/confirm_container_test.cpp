// Which bytes of a scanned file --confirm hands to the driver, read back from
// real nvcc-built fixtures.
#include "check/confirm_container.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "binary/file_scan.hpp"
#include "fixture_files.hpp"

namespace {

namespace fs = std::filesystem;
using archfit::binary::scan_file;
using archfit::check::container_to_confirm;
using archfit::testing::kFixtureDir;
using archfit::testing::read_bytes;

uint64_t u64(const std::vector<uint8_t>& bytes, size_t offset) {
  uint64_t value;
  std::memcpy(&value, bytes.data() + offset, 8);
  return value;
}

bool starts_with_container_magic(const std::vector<uint8_t>& bytes) {
  return bytes.size() >= 16 && bytes[0] == 0x50 && bytes[1] == 0xed && bytes[2] == 0x55 &&
         bytes[3] == 0xba;
}

class ConfirmContainer : public archfit::testing::FixtureTest {};

}  // namespace

TEST_F(ConfirmContainer, AStandaloneCubinIsHandedOverWhole) {
  const auto bytes = container_to_confirm(scan_file(kFixtureDir / "sm_80.cubin"));
  ASSERT_TRUE(bytes);
  EXPECT_EQ(*bytes, read_bytes(kFixtureDir / "sm_80.cubin"));
}

TEST_F(ConfirmContainer, PtxTextGetsTheNulTheDriverReadsUpTo) {
  const auto bytes = container_to_confirm(scan_file(kFixtureDir / "compute_90.ptx"));
  ASSERT_TRUE(bytes);
  auto expected = read_bytes(kFixtureDir / "compute_90.ptx");
  ASSERT_NE(expected.back(), 0);
  expected.push_back(0);
  EXPECT_EQ(*bytes, expected);
}

TEST_F(ConfirmContainer, AFatbinFileGivesItsContainerFromTheHeaderOn) {
  const auto file = read_bytes(kFixtureDir / "sm_86_sm_89.fatbin");
  const auto bytes = container_to_confirm(scan_file(kFixtureDir / "sm_86_sm_89.fatbin"));
  ASSERT_TRUE(bytes);
  ASSERT_TRUE(starts_with_container_magic(*bytes));
  EXPECT_EQ(bytes->size(), 16 + u64(*bytes, 8));
  ASSERT_LE(bytes->size(), file.size());
  EXPECT_TRUE(std::equal(bytes->begin(), bytes->end(), file.begin()));
}

TEST_F(ConfirmContainer, AHostLibraryGivesTheContainerOfTheChosenImage) {
  const auto scan = scan_file(kFixtureDir / "sm_86_sm_89.so");
  // nvcc -shared: the device-link container first, then the translation unit's own.
  ASSERT_EQ(scan.containers, 2u);
  const size_t last = scan.images.size() - 1;
  ASSERT_NE(scan.images.front().container_offset, scan.images[last].container_offset);
  const auto file = read_bytes(kFixtureDir / "sm_86_sm_89.so");
  for (const size_t chosen : {size_t{0}, last}) {
    SCOPED_TRACE(chosen);
    const auto bytes = container_to_confirm(scan, chosen);
    ASSERT_TRUE(bytes);
    ASSERT_TRUE(starts_with_container_magic(*bytes));
    const auto at =
        file.begin() + static_cast<std::ptrdiff_t>(scan.images[chosen].container_offset);
    EXPECT_TRUE(std::equal(bytes->begin(), bytes->end(), at));
  }
  // Without a choice, or with one out of range: the first launchable container.
  EXPECT_EQ(container_to_confirm(scan), container_to_confirm(scan, 0));
  EXPECT_EQ(container_to_confirm(scan, 1000), container_to_confirm(scan, 0));
}

TEST_F(ConfirmContainer, APtxOnlyLibrarySkipsTheEmptyDeviceLinkContainer) {
  const auto scan = scan_file(kFixtureDir / "compute_90.so");
  ASSERT_EQ(scan.containers, 2u);
  ASSERT_EQ(scan.images.size(), 1u);
  const auto bytes = container_to_confirm(scan);
  ASSERT_TRUE(bytes);
  EXPECT_GT(u64(*bytes, 8), 0u);  // the empty device-link container has size 0
}

TEST_F(ConfirmContainer, DeviceLinkInputsAloneGiveNothingToConfirm) {
  for (const char* fixture : {"rdc.o", "rdc.cubin", "lto_90.fatbin", "lto_90.o"}) {
    SCOPED_TRACE(fixture);
    const auto scan = scan_file(kFixtureDir / fixture);
    ASSERT_FALSE(scan.images.empty());
    EXPECT_FALSE(container_to_confirm(scan));
  }
}

TEST_F(ConfirmContainer, AFileChangedSinceTheScanGivesNothing) {
  const fs::path copy =
      fs::temp_directory_path() / ("archfit_confirm_" + std::to_string(::getpid()) + ".so");
  fs::copy_file(kFixtureDir / "sm_80.so", copy, fs::copy_options::overwrite_existing);
  const auto scan = scan_file(copy);
  ASSERT_FALSE(scan.images.empty());
  ASSERT_TRUE(container_to_confirm(scan));
  {
    std::fstream file(copy, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(static_cast<std::streamoff>(scan.images[0].container_offset));
    file.write("\0\0\0\0", 4);
  }
  EXPECT_FALSE(container_to_confirm(scan));
  fs::resize_file(copy, scan.images[0].container_offset + 8);
  EXPECT_FALSE(container_to_confirm(scan));
  fs::remove(copy);
  EXPECT_FALSE(container_to_confirm(scan));
}

TEST(ConfirmContainerWithoutFixtures, NoDeviceCodeGivesNothing) {
  archfit::binary::FileScan scan;
  scan.path = "/nonexistent";
  EXPECT_FALSE(container_to_confirm(scan));
  EXPECT_FALSE(container_to_confirm(scan, 0));
}
