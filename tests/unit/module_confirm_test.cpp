// Asks the test-only driver (tests/fakes/fake_libcuda.c) to load real
// nvcc-built containers on devices each test chooses. The fake judges images
// by its own C rules, written apart from compat/, so the last test here is a
// cross-check of two independent readings of the same rules.
#include "env/module_confirm.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "binary/file_scan.hpp"
#include "check/confirm_container.hpp"
#include "compat/rules.hpp"
#include "fixture_files.hpp"
#include "saved_env.hpp"

namespace {

namespace fs = std::filesystem;
using archfit::binary::scan_file;
using archfit::check::container_to_confirm;
using archfit::env::confirm_modules;
using archfit::env::ModuleConfirmation;
using archfit::env::ModuleConfirmOptions;
using archfit::env::ModuleLoad;
using archfit::env::ModuleRequest;
using archfit::testing::kFixtureDir;

constexpr int kLoaded = 0;
constexpr int kInvalidImage = 200;
constexpr int kNoBinaryForGpu = 209;
constexpr int kUnsupportedPtxVersion = 222;

std::string all_findings(const ModuleConfirmation& confirmation) {
  std::string text;
  for (const auto& finding : confirmation.findings) text += finding + "\n";
  return text;
}

// The one finding of a confirmation the driver could not answer.
std::string sole_finding(const ModuleConfirmation& confirmation) {
  EXPECT_FALSE(confirmation.answered());
  EXPECT_EQ(confirmation.findings.size(), 1u) << all_findings(confirmation);
  return confirmation.findings.empty() ? std::string() : confirmation.findings.front();
}

::testing::AssertionResult contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\"" << part << "\" is not in: " << text;
}

class ModuleConfirmTest : public archfit::testing::FixtureTest {
 protected:
  void SetUp() override {
    FixtureTest::SetUp();
    if (IsSkipped()) return;
    archfit::testing::set_env("ARCHFIT_FAKE_CUDA_VERSION", "13000");
    archfit::testing::unset_env("ARCHFIT_FAKE_CUDA_INIT");
    archfit::testing::unset_env("ARCHFIT_FAKE_CUDA_MODULE_LOAD");
    use_device("8.9");
  }

  // One device of this capability ("12.0") as ordinal 0.
  static void use_device(const std::string& capability) {
    archfit::testing::set_env("ARCHFIT_FAKE_CUDA_DEVICES",
                              ("Test GPU," + capability + ",1073741824").c_str());
  }

  // The container --confirm would hand over for a fixture.
  static ModuleRequest request(const std::string& fixture) {
    const auto scan = scan_file(kFixtureDir / fixture);
    auto bytes = container_to_confirm(scan);
    EXPECT_TRUE(bytes) << fixture << ": nothing to confirm";
    return {fixture, bytes.value_or(std::vector<uint8_t>{})};
  }

  static ModuleConfirmation confirm(const std::vector<ModuleRequest>& requests,
                                    const fs::path& library = ARCHFIT_FAKE_CUDA) {
    ModuleConfirmOptions options;
    options.library = library;
    return confirm_modules(requests, options);
  }

  // The driver's answer for one request on a device of `capability`.
  static ModuleLoad load_on(const ModuleRequest& request, const std::string& capability) {
    use_device(capability);
    const auto confirmation = confirm({request});
    EXPECT_TRUE(confirmation.findings.empty()) << all_findings(confirmation);
    if (confirmation.loads.size() != 1) {
      ADD_FAILURE() << "the driver was not asked:\n" << all_findings(confirmation);
      return {};
    }
    EXPECT_TRUE(confirmation.loads[0].asked) << confirmation.loads[0].problem;
    return confirmation.loads[0];
  }
  static int result_on(const std::string& fixture, const std::string& capability) {
    return load_on(request(fixture), capability).result;
  }
  struct Answer {
    const char* fixture;
    const char* device;
    int result;
  };
  static void expect_answers(std::initializer_list<Answer> answers) {
    for (const Answer& answer : answers) {
      SCOPED_TRACE(std::string(answer.fixture) + " on " + answer.device);
      EXPECT_EQ(result_on(answer.fixture, answer.device), answer.result);
    }
  }

  archfit::testing::SavedEnv saved_{"ARCHFIT_FAKE_CUDA_VERSION", "ARCHFIT_FAKE_CUDA_INIT",
                                    "ARCHFIT_FAKE_CUDA_DEVICES", "ARCHFIT_FAKE_CUDA_MODULE_LOAD"};
};

// A container holding only entry `index` of `fixture`'s first container:
// real nvcc output, one arch at a time.
ModuleRequest single_entry(const std::string& fixture, size_t index) {
  const auto scan = scan_file(kFixtureDir / fixture);
  EXPECT_LT(index, scan.images.size());
  if (index >= scan.images.size()) return {};
  const auto& image = scan.images[index];
  const auto file = archfit::testing::read_bytes(kFixtureDir / fixture);
  const uint64_t entry_size = image.payload_offset + image.size - image.offset;
  std::vector<uint8_t> container(16);
  const uint32_t magic = 0xBA55ED50;
  const uint16_t version = 1, header_size = 16;
  std::memcpy(container.data(), &magic, 4);
  std::memcpy(container.data() + 4, &version, 2);
  std::memcpy(container.data() + 6, &header_size, 2);
  std::memcpy(container.data() + 8, &entry_size, 8);
  container.insert(container.end(), file.begin() + static_cast<std::ptrdiff_t>(image.offset),
                   file.begin() + static_cast<std::ptrdiff_t>(image.offset + entry_size));
  return {fixture + " entry " + std::to_string(index) + " (" + image.arch_name() + ")", container};
}

}  // namespace

TEST_F(ModuleConfirmTest, SassLoadsOnALaterMinorOfItsMajorOnly) {
  const ModuleRequest sm_86 = single_entry("sm_86_sm_89.fatbin", 0);
  ASSERT_TRUE(contains(sm_86.label, "sm_86"));
  EXPECT_TRUE(load_on(sm_86, "8.6").loaded);
  EXPECT_TRUE(load_on(sm_86, "8.9").loaded);
  const ModuleLoad on_hopper = load_on(sm_86, "9.0");
  EXPECT_FALSE(on_hopper.loaded);
  EXPECT_EQ(on_hopper.result, kNoBinaryForGpu);
  EXPECT_EQ(on_hopper.error_name, "CUDA_ERROR_NO_BINARY_FOR_GPU");
  EXPECT_EQ(on_hopper.error_text, "no kernel image is available for execution on the device (209)");
  expect_answers({
      {"sm_86_sm_89.fatbin", "8.9", kLoaded},
      {"sm_86_sm_89.fatbin", "9.0", kNoBinaryForGpu},
      {"sm_80.cubin", "8.6", kLoaded},
      {"sm_80.cubin", "7.5", kNoBinaryForGpu},
      {"sm_80.so", "8.0", kLoaded},
      {"sm_80.so", "12.0", kNoBinaryForGpu},
  });
}

TEST_F(ModuleConfirmTest, PtxJitsForEveryLaterCapabilityAndNoEarlierOne) {
  for (const char* fixture : {"compute_90.ptx", "compute_90.fatbin", "compute_90.so"}) {
    SCOPED_TRACE(fixture);
    EXPECT_EQ(result_on(fixture, "12.0"), kLoaded);
    EXPECT_EQ(result_on(fixture, "9.0"), kLoaded);
    EXPECT_EQ(result_on(fixture, "8.9"), kNoBinaryForGpu);
  }
}

TEST_F(ModuleConfirmTest, PtxOfAnIsaTooNewForTheDriverIsRefusedAs222) {
  archfit::testing::set_env("ARCHFIT_FAKE_CUDA_VERSION",
                            "12080");  // knows PTX ISA up to 8.7; nvcc 13 writes 9.0
  for (const char* fixture : {"compute_90.ptx", "compute_90.fatbin"}) {
    SCOPED_TRACE(fixture);
    const ModuleLoad load = load_on(request(fixture), "12.0");
    EXPECT_EQ(load.result, kUnsupportedPtxVersion);
    EXPECT_EQ(load.error_name, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION");
  }
  // SASS needs no JIT, so the driver's PTX ISA does not matter to it.
  EXPECT_EQ(result_on("sm_80.fatbin", "8.6"), kLoaded);
  // Too new, but for the wrong arch anyway: no image, not an old driver.
  EXPECT_EQ(result_on("compute_90.ptx", "8.9"), kNoBinaryForGpu);
}

TEST_F(ModuleConfirmTest, ArchAndFamilyVariantsKeepTheirLimits) {
  expect_answers({
      {"sm_90a.cubin", "9.0", kLoaded},
      {"sm_100a.cubin", "10.0", kLoaded},
      {"sm_100a.cubin", "10.3", kNoBinaryForGpu},
      {"sm_100a.fatbin", "10.3", kNoBinaryForGpu},
      {"sm_100f.fatbin", "10.3", kLoaded},
      {"sm_100f.fatbin", "12.0", kNoBinaryForGpu},
      {"sm_103f.cubin", "10.0", kNoBinaryForGpu},
      {"sm_120a.cubin", "12.0", kLoaded},
      {"sm_120a.cubin", "12.1", kNoBinaryForGpu},
      {"sm_120f.cubin", "12.1", kLoaded},
      // `f` PTX stays in its family, where plain PTX would JIT for any later major.
      {"compute_100f.ptx", "10.3", kLoaded},
      {"compute_100f.ptx", "12.0", kNoBinaryForGpu},
      {"compute_100f.fatbin", "12.0", kNoBinaryForGpu},
  });
}

TEST_F(ModuleConfirmTest, CompressedEntriesAreJudgedByTheirHeaders) {
  for (const char* fixture : {"compress_all.fatbin", "compress_speed.fatbin"}) {  // zstd, LZ4
    SCOPED_TRACE(fixture);
    EXPECT_EQ(result_on(fixture, "8.6"), kLoaded);
    EXPECT_EQ(result_on(fixture, "12.0"), kLoaded);  // through its compute_80 PTX
    EXPECT_EQ(result_on(fixture, "7.5"), kNoBinaryForGpu);
  }
}

TEST_F(ModuleConfirmTest, AForcedAnswerShowsADriverThatDisagrees) {
  archfit::testing::set_env("ARCHFIT_FAKE_CUDA_MODULE_LOAD", "209");
  const ModuleLoad refused = load_on(request("sm_80.cubin"), "8.0");  // archfit: native
  EXPECT_TRUE(refused.asked);
  EXPECT_FALSE(refused.loaded);
  EXPECT_EQ(refused.result, kNoBinaryForGpu);
  EXPECT_EQ(refused.error_name, "CUDA_ERROR_NO_BINARY_FOR_GPU");
  archfit::testing::set_env("ARCHFIT_FAKE_CUDA_MODULE_LOAD", "0");
  EXPECT_TRUE(load_on(request("sm_80.cubin"), "9.0").loaded);  // archfit: no-image
}

TEST_F(ModuleConfirmTest, EachRequestGetsItsOwnAnswerInOrder) {
  const std::string garbage = "this is not device code";
  use_device("8.6");
  const auto confirmation = confirm({request("sm_80.cubin"),
                                     request("compute_90.ptx"),
                                     {"garbage", {garbage.begin(), garbage.end()}}});
  ASSERT_EQ(confirmation.loads.size(), 3u) << all_findings(confirmation);
  EXPECT_EQ(confirmation.loads[0].label, "sm_80.cubin");
  EXPECT_TRUE(confirmation.loads[0].loaded);
  EXPECT_EQ(confirmation.loads[0].error_name, "");
  EXPECT_EQ(confirmation.loads[1].label, "compute_90.ptx");
  EXPECT_EQ(confirmation.loads[1].result, kNoBinaryForGpu);
  EXPECT_EQ(confirmation.loads[2].label, "garbage");
  EXPECT_TRUE(confirmation.loads[2].asked);
  EXPECT_EQ(confirmation.loads[2].result, kInvalidImage);
  EXPECT_EQ(confirmation.loads[2].error_name, "CUDA_ERROR_INVALID_IMAGE");
}

TEST_F(ModuleConfirmTest, BytesCutShortAreNeverHandedToTheDriver) {
  // cuModuleLoadData takes no length and trusts the sizes inside the image.
  auto fatbin = request("sm_80.fatbin");
  fatbin.image.resize(fatbin.image.size() / 2);
  auto cubin = request("sm_80.cubin");
  cubin.image.resize(cubin.image.size() - 1);
  const auto confirmation = confirm({fatbin, cubin, {"empty", {}}});
  ASSERT_EQ(confirmation.loads.size(), 3u) << all_findings(confirmation);
  for (const ModuleLoad& load : confirmation.loads) {
    SCOPED_TRACE(load.label);
    EXPECT_FALSE(load.asked);
    EXPECT_FALSE(load.loaded);
    EXPECT_FALSE(load.problem.empty());
  }
  EXPECT_TRUE(contains(confirmation.loads[0].problem, "runs past the end"));
  EXPECT_TRUE(contains(confirmation.loads[1].problem, "past the end"));
}

// Found in review: only the section table and the program header table's
// extent were checked, with whatever entry size e_phentsize claimed, and of
// a fatbin container only its 16-byte header. The driver strides program
// headers by their real size and reads every segment, and a container read
// back from a file that changed since the scan could hold entries whose
// sizes lie. A cubin's segments and a container's every entry, and the cubin
// in each SASS entry, are checked now before the driver sees them.
TEST_F(ModuleConfirmTest, WhatTheDriverWouldReadIsCheckedBeforeItIsAsked) {
  const auto cubin = request("sm_80.cubin");
  auto field = [](const std::vector<uint8_t>& bytes, size_t at, auto value) {
    std::memcpy(const_cast<uint8_t*>(bytes.data()) + at, &value, sizeof value);
  };
  uint64_t phoff = 0;
  std::memcpy(&phoff, cubin.image.data() + 0x20, 8);
  ASSERT_GT(phoff, 0u) << "nvcc's cubin has program headers";

  auto small_entries = cubin;
  field(small_entries.image, 0x36, uint16_t{1});  // e_phentsize
  auto extended = cubin;
  field(extended.image, 0x38, uint16_t{0xffff});  // e_phnum = PN_XNUM
  auto long_segment = cubin;
  field(long_segment.image, phoff + 32, uint64_t{1} << 40);  // segment 0's p_filesz
  // A container whose only entry's payload size runs past the container.
  auto lying_entry = single_entry("sm_80.fatbin", 0);
  field(lying_entry.image, 16 + 8, uint64_t{1} << 30);
  // A container whose SASS entry holds a cubin with a segment past its end.
  auto container_of_bad_cubin = single_entry("sm_80.fatbin", 0);
  {
    const auto scan = scan_file(kFixtureDir / "sm_80.fatbin");
    const auto& image = scan.images[0];
    ASSERT_EQ(image.compression, archfit::binary::Compression::none);
    const uint64_t cubin_at = 16 + (image.payload_offset - image.offset);
    uint64_t entry_phoff = 0;
    std::memcpy(&entry_phoff, container_of_bad_cubin.image.data() + cubin_at + 0x20, 8);
    field(container_of_bad_cubin.image, cubin_at + entry_phoff + 32, uint64_t{1} << 40);
  }

  use_device("8.0");
  const auto confirmation =
      confirm({small_entries, extended, long_segment, lying_entry, container_of_bad_cubin, cubin});
  ASSERT_EQ(confirmation.loads.size(), 6u) << all_findings(confirmation);
  const char* expected[] = {"smaller than an ELF64 program header",
                            "extended program header numbering", "ELF segment 0 (offset",
                            "runs past the container end",
                            "the sm_80 entry at 0x10: ELF segment 0"};
  for (size_t i = 0; i < 5; ++i) {
    SCOPED_TRACE(i);
    EXPECT_FALSE(confirmation.loads[i].asked);
    EXPECT_TRUE(contains(confirmation.loads[i].problem, expected[i]));
  }
  // Control: the cubin as nvcc wrote it is handed over and loads.
  EXPECT_TRUE(confirmation.loads[5].asked) << confirmation.loads[5].problem;
  EXPECT_TRUE(confirmation.loads[5].loaded);
}

TEST_F(ModuleConfirmTest, PtxWithoutATerminatingNulIsStillReadWhole) {
  auto ptx = request("compute_90.ptx");
  ASSERT_FALSE(ptx.image.empty());
  ASSERT_EQ(ptx.image.back(), 0);  // container_to_confirm added one
  ptx.image.pop_back();
  EXPECT_TRUE(load_on(ptx, "9.0").loaded);
}

TEST_F(ModuleConfirmTest, SaysWhichDriverAndDeviceItAsked) {
  archfit::testing::set_env(
      "ARCHFIT_FAKE_CUDA_DEVICES",
      "NVIDIA H100 80GB HBM3,9.0,85045411840;NVIDIA GeForce RTX 5090,12.0,34190917632");
  ModuleConfirmOptions options;
  options.library = ARCHFIT_FAKE_CUDA;
  options.device = 1;
  const std::vector<ModuleRequest> requests{request("sm_120.fatbin")};
  const auto confirmation = confirm_modules(requests, options);
  EXPECT_TRUE(confirmation.findings.empty()) << all_findings(confirmation);
  ASSERT_TRUE(confirmation.library);
  EXPECT_EQ(confirmation.library->filename(), fs::path(ARCHFIT_FAKE_CUDA).filename());
  EXPECT_EQ(confirmation.cuda_version, 13000);
  EXPECT_EQ(confirmation.device_name, "NVIDIA GeForce RTX 5090");
  EXPECT_EQ(confirmation.cc_major, 12);
  EXPECT_EQ(confirmation.cc_minor, 0);
  ASSERT_TRUE(confirmation.answered());
  EXPECT_TRUE(confirmation.loads[0].loaded);
}

TEST_F(ModuleConfirmTest, NoDriverIsAFindingNotACrash) {
  const auto confirmation =
      confirm({request("sm_80.cubin")}, fs::temp_directory_path() / "no-such-dir" / "libcuda.so.1");
  EXPECT_FALSE(confirmation.library);
  const std::string finding = sole_finding(confirmation);
  EXPECT_TRUE(contains(finding, "No NVIDIA driver"));
  EXPECT_TRUE(contains(finding, "could not be confirmed"));
}

TEST_F(ModuleConfirmTest, ALibraryThatIsNotADriverIsAFinding) {
  const auto confirmation = confirm({request("sm_80.cubin")}, ARCHFIT_NOT_A_DRIVER);
  EXPECT_TRUE(contains(sole_finding(confirmation), "not a working libcuda"));
}

TEST_F(ModuleConfirmTest, CuInitFailingIsAFinding) {
  archfit::testing::set_env("ARCHFIT_FAKE_CUDA_INIT", "100");  // CUDA_ERROR_NO_DEVICE
  const std::string finding = sole_finding(confirm({request("sm_80.cubin")}));
  EXPECT_TRUE(contains(finding, "cuInit failed"));
  EXPECT_TRUE(contains(finding, "CUDA_ERROR_NO_DEVICE"));
}

TEST_F(ModuleConfirmTest, ADeviceThatIsNotThereIsAFinding) {
  ModuleConfirmOptions options;
  options.library = ARCHFIT_FAKE_CUDA;
  options.device = 3;
  const std::vector<ModuleRequest> requests{request("sm_80.cubin")};
  const std::string finding = sole_finding(confirm_modules(requests, options));
  EXPECT_TRUE(contains(finding, "GPU 3 could not be opened"));
  EXPECT_TRUE(contains(finding, "CUDA_ERROR_INVALID_DEVICE"));
}

// archfit's judge (compat/) and the fake driver's own C rules must give the
// same answer for every fixture on every device of interest, with a driver
// that knows PTX ISA 9.0 (CUDA 13.0) and one that knows 8.7 (CUDA 12.8).
TEST_F(ModuleConfirmTest, TheDriverAgreesWithTheJudgeOnEveryFixture) {
  using archfit::compat::Verdict;
  std::vector<std::string> fixtures;
  std::ifstream manifest(kFixtureDir / "fixtures.txt");
  for (std::string name; std::getline(manifest, name);) {
    if (!name.empty()) fixtures.push_back(name);
  }
  ASSERT_FALSE(fixtures.empty());
  const struct {
    const char* cuda;
    archfit::binary::Version isa;
  } drivers[] = {{"13000", {9, 0}}, {"12080", {8, 7}}};
  const char* devices[] = {"7.5",  "8.0",  "8.6",  "8.9",  "9.0",
                           "10.0", "10.3", "11.0", "12.0", "12.1"};
  int compared = 0;
  for (const auto& driver : drivers) {
    archfit::testing::set_env("ARCHFIT_FAKE_CUDA_VERSION", driver.cuda);
    for (const auto& fixture : fixtures) {
      const auto scan = scan_file(kFixtureDir / fixture);
      for (const char* device : devices) {
        SCOPED_TRACE(fixture + " on " + device + ", CUDA " + driver.cuda);
        const auto judgement = archfit::compat::judge_binary(
            scan, archfit::compat::parse_compute_capability(device), {"", driver.isa});
        const auto bytes = container_to_confirm(scan, judgement.chosen);
        if (judgement.verdict == Verdict::relocatable_only ||
            judgement.verdict == Verdict::no_device_code) {
          EXPECT_FALSE(bytes) << "nothing here is launchable, yet bytes were picked";
          continue;
        }
        ASSERT_TRUE(bytes);
        const ModuleLoad load = load_on({fixture, *bytes}, device);
        switch (judgement.verdict) {
          case Verdict::native:
          case Verdict::ptx_jit:
            EXPECT_TRUE(load.loaded) << load.error_name;
            break;
          case Verdict::no_image:
            EXPECT_EQ(load.result, kNoBinaryForGpu) << load.error_name;
            break;
          case Verdict::ptx_too_new_for_driver:
            EXPECT_EQ(load.result, kUnsupportedPtxVersion) << load.error_name;
            break;
          default:
            ADD_FAILURE() << "unexpected verdict";
        }
        ++compared;
      }
    }
  }
  RecordProperty("comparisons", compared);
  EXPECT_GT(compared, 1000);
}
