#include <gtest/gtest.h>
#include <unistd.h>
#ifdef _WIN32
#include <windows.h>
#endif

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "made_links.hpp"
#include "run_archfit.hpp"
#include "wheel_builder.hpp"

namespace fs = std::filesystem;

namespace {

class ScratchDir : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = scratch_folder("archfit_cli_" + std::to_string(::getpid()) + "_" +
                          ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path write(const std::string& name, const std::string& bytes) {
    std::ofstream(dir_ / name, std::ios::binary) << bytes;
    return dir_ / name;
  }
  fs::path dir_;
};

// A minimal fatbin: one container holding one uncompressed PTX entry for
// compute_90 (layout: docs/cuda-binaries.md).
std::string tiny_fatbin() {
  const std::string ptx = ".version 9.0\n.target sm_90\n.address_size 64\n";
  std::string payload = ptx;
  payload.resize((payload.size() + 7) & ~size_t{7}, '\0');
  std::string entry(64, '\0');
  auto put = [](std::string& s, size_t at, uint64_t value, int bytes) {
    for (int i = 0; i < bytes; ++i) s[at + i] = static_cast<char>((value >> (8 * i)) & 0xff);
  };
  put(entry, 0x00, 1, 2);       // kind PTX
  put(entry, 0x02, 0x0101, 2);  // marker
  put(entry, 0x04, 64, 4);      // header size
  put(entry, 0x08, payload.size(), 8);
  put(entry, 0x18, 0, 2);     // ISA minor
  put(entry, 0x1a, 9, 2);     // ISA major
  put(entry, 0x1c, 90, 4);    // arch
  put(entry, 0x28, 0x11, 8);  // 64-bit, Linux host
  std::string container(16, '\0');
  put(container, 0, 0xBA55ED50, 4);
  put(container, 4, 1, 2);
  put(container, 6, 16, 2);
  put(container, 8, entry.size() + payload.size(), 8);
  return container + entry + payload;
}

}  // namespace

using CliScan = ScratchDir;

TEST_F(CliScan, SummarisesAFatbinAndExitsZero) {
  const CommandResult run = run_archfit({"scan", arg(write("k.fatbin", tiny_fatbin()))});
  EXPECT_EQ(run.exit_code, 0) << run.out;
  EXPECT_NE(run.out.find("compute_90 (ISA 9.0)"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("1 files"), std::string::npos) << run.out;
}

TEST_F(CliScan, JsonIsTheVersionedScanDocument) {
  const CommandResult run = run_archfit({"scan", "--json", arg(write("k.fatbin", tiny_fatbin()))});
  ASSERT_EQ(run.exit_code, 0) << run.out;
  const auto doc = nlohmann::json::parse(run.out);
  EXPECT_EQ(doc["schema"], "archfit.scan/1");
  ASSERT_EQ(doc["files"].size(), 1u);
  const auto& file = doc["files"][0];
  EXPECT_EQ(file["format"], "fatbin");
  EXPECT_TRUE(file["error"].is_null());
  ASSERT_EQ(file["images"].size(), 1u);
  const auto& image = file["images"][0];
  EXPECT_EQ(image["kind"], "ptx");
  EXPECT_EQ(image["sm"], 90);
  EXPECT_EQ(image["variant"], "plain");
  EXPECT_EQ(image["ptx_isa"], "9.0");
  EXPECT_EQ(image["compression"], "none");
  EXPECT_EQ(image["offset"], 16);
}

TEST_F(CliScan, ImagesFlagListsEveryImageWithItsOffset) {
  const CommandResult run =
      run_archfit({"scan", "--images", arg(write("k.fatbin", tiny_fatbin()))});
  EXPECT_EQ(run.exit_code, 0) << run.out;
  EXPECT_NE(run.out.find("compute_90"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("@0x10"), std::string::npos) << run.out;
}

TEST_F(CliScan, MalformedFileNamesTheOffsetExitsOneAndOtherFilesAreStillScanned) {
  std::string broken = tiny_fatbin();
  broken[16 + 2] = 0x7f;  // the first entry's 0x0101 marker
  write("broken.fatbin", broken);
  write("good.fatbin", tiny_fatbin());
  const CommandResult run = run_archfit({"scan", "--json", arg(dir_)});
  ASSERT_EQ(run.exit_code, 1) << run.out;
  const auto doc = nlohmann::json::parse(run.out);
  ASSERT_EQ(doc["files"].size(), 2u);
  for (const auto& file : doc["files"]) {
    if (path_of(file["path"].get<std::string>()).filename() == "broken.fatbin") {
      EXPECT_NE(file["error"].get<std::string>().find("at offset 0x10"), std::string::npos)
          << file["error"];
      EXPECT_TRUE(file["images"].empty());
    } else {
      EXPECT_TRUE(file["error"].is_null());
      EXPECT_EQ(file["images"].size(), 1u);
    }
  }
}

TEST_F(CliScan, FilesWithoutDeviceCodeAreNotErrors) {
  write("notes.dat", "just text\n");
  write("empty.bin", "");
  const CommandResult run = run_archfit({"scan", arg(dir_)});
  EXPECT_EQ(run.exit_code, 0) << run.out;
  EXPECT_NE(run.out.find("2 files"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("0 with device code"), std::string::npos) << run.out;
}

// In a directory, sources, headers and text are passed over by name (a torch
// venv: 16,910 files, 240 read); a file named on the command line is read
// whatever its name.
TEST_F(CliScan, ADirectorysSourcesAndTextArePassedOverByNameButANamedFileIsRead) {
  write("kernel.cuh", "// a header\n");
  write("notes.txt", "just text\n");
  write("k.fatbin", tiny_fatbin());
  const CommandResult walk = run_archfit({"scan", arg(dir_)});
  EXPECT_EQ(walk.exit_code, 0) << walk.out;
  EXPECT_NE(walk.out.find("1 files"), std::string::npos) << walk.out;
  EXPECT_EQ(walk.out.find("notes.txt"), std::string::npos) << walk.out;
  const CommandResult named = run_archfit({"scan", arg(dir_ / "notes.txt")});
  EXPECT_EQ(named.exit_code, 0) << named.out;
  EXPECT_NE(named.out.find("notes.txt"), std::string::npos) << named.out;
  EXPECT_NE(named.out.find("1 files"), std::string::npos) << named.out;
}

TEST_F(CliScan, SymlinkLoopsAndAliasesAreScannedOnce) {
  write("k.fatbin", tiny_fatbin());
  if (!archfit::testing::made_links([&] {
        fs::create_directory_symlink(dir_, dir_ / "loop");
        fs::create_symlink(dir_ / "k.fatbin", dir_ / "alias.fatbin");
      }))
    GTEST_SKIP() << archfit::testing::kNoLinks;
  const CommandResult run = run_archfit({"scan", "--json", arg(dir_)});
  ASSERT_EQ(run.exit_code, 0) << run.out;
  const auto doc = nlohmann::json::parse(run.out);
  ASSERT_EQ(doc["files"].size(), 1u);
  EXPECT_EQ(path_of(doc["files"][0]["path"].get<std::string>()).filename(), "k.fatbin");
}

TEST_F(CliScan, MissingPathIsReportedAndExitsOne) {
  const CommandResult run = run_archfit({"scan", arg(dir_ / "no-such.so")});
  EXPECT_EQ(run.exit_code, 1) << run.out;
  EXPECT_NE(run.out.find("no-such.so"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("No such file"), std::string::npos) << run.out;
}

TEST(CliUsage, UnknownOptionExitsTwo) {
  const CommandResult run = run_archfit({"scan", "--no-such-option", "x"});
  EXPECT_EQ(run.exit_code, 2) << run.out;
}

TEST(CliUsage, ScanWithoutPathsExitsTwo) {
  const CommandResult run = run_archfit({"scan"});
  EXPECT_EQ(run.exit_code, 2) << run.out;
}

TEST(CliToolkit, SummarisesCublasLtContainersOutsideNvFatbin) {
  const fs::path library = fs::path(ARCHFIT_CUDA_LIB_DIR) / "libcublasLt.so.13";
  if (!fs::exists(library))
    GTEST_SKIP() << library << " is not here: the CUDA 13 toolkit's cuBLASLt is needed";
  const CommandResult run = run_archfit({"scan", arg(library)});
  EXPECT_EQ(run.exit_code, 0) << run.out;
  EXPECT_NE(run.out.find(".cask_resource"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find(".nv_fatbin"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("sm_120"), std::string::npos) << run.out;
}

// `archfit check` on the demo environment (tests/fixtures/make_demo_env.cmake):
// torch with SASS sm_75-sm_90 and no PTX, fastops with compute_90 PTX only.
class CliCheck : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(fs::path(ARCHFIT_DEMO_SITE) / "torch" / "version.py")) {
      GTEST_SKIP() << "the demo environment was not built (nvcc missing?) in " << ARCHFIT_DEMO_SITE;
    }
  }
  std::string site() const { return ARCHFIT_DEMO_SITE; }
};

TEST_F(CliCheck, FailingEnvironmentExitsOneWithTheFix) {
  const CommandResult run = run_archfit({"check", "--gpu", "RTX 5090", "--site-packages", site()});
  EXPECT_EQ(run.exit_code, 1) << run.out;
  EXPECT_NE(run.out.find("PyTorch 2.5.1+cu124  no-image"), std::string::npos) << run.out;
  // The newest build for sm_120, and the oldest as the smaller change.
  EXPECT_NE(run.out.find("      pip install torch==2.15.0\n"), std::string::npos) << run.out;
  EXPECT_NE(
      run.out.find(
          "pip install torch==2.7.0+cu128 --index-url https://download.pytorch.org/whl/cu128"),
      std::string::npos)
      << run.out;
  // The last line is the answer in one line, with the command.
  EXPECT_NE(run.out.find("fails: PyTorch 2.5.1+cu124 has no image for GeForce RTX 5090 (sm_120); "
                         "run: pip install torch==2.15.0"),
            std::string::npos)
      << run.out;
}

TEST_F(CliCheck, FittingEnvironmentExitsZero) {
  const CommandResult run = run_archfit({"check", "--gpu", "H100", "--site-packages", site()});
  EXPECT_EQ(run.exit_code, 0) << run.out;
  EXPECT_NE(run.out.find("fits"), std::string::npos) << run.out;
}

TEST_F(CliCheck, JsonNamesTheSchemaAndTheVerdict) {
  const CommandResult run = run_archfit(
      {"check", "--json", "--gpu", "sm_120", "--driver", "570.86", "--site-packages", site()});
  ASSERT_EQ(run.exit_code, 1) << run.out;
  const auto doc = nlohmann::json::parse(run.out);
  EXPECT_EQ(doc["schema"], "archfit.check/1");
  EXPECT_EQ(doc["verdict"], "fails");
  EXPECT_EQ(doc["driver"]["max_ptx_isa"], "8.7");
  bool saw_ptx_too_new = false;
  for (const auto& component : doc["components"])
    saw_ptx_too_new |= component["verdict"] == "ptx-too-new-for-driver";
  EXPECT_TRUE(saw_ptx_too_new) << run.out;
}

TEST_F(CliCheck, UnknownGpuExitsTwoListingCloseNames) {
  const CommandResult run = run_archfit({"check", "--gpu", "RTX 5909", "--site-packages", site()});
  EXPECT_EQ(run.exit_code, 2) << run.out;
  EXPECT_NE(run.out.find("GeForce RTX 5090"), std::string::npos) << run.out;
}

TEST_F(CliCheck, NoGpuAndNoneGivenSaysSoAndExitsTwo) {
  // A machine with a GPU judges its own device; the no-GPU answer is checked
  // where there is none, as on the build machines.
  const CommandResult run = run_archfit({"check", "--site-packages", site()});
  if (run.out.find("GPU     none") == std::string::npos) GTEST_SKIP() << "this machine has a GPU";
  EXPECT_EQ(run.exit_code, 2) << run.out;
  // One sentence says why, and how to ask about a GPU; nothing is marked.
  EXPECT_NE(run.out.find("GPU     none: no NVIDIA driver is installed here"), std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("--gpu \"RTX 5090\""), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("? PyTorch 2.5.1+cu124  unknown"), std::string::npos) << run.out;
  EXPECT_EQ(run.out.find("✓"), std::string::npos) << run.out;
  EXPECT_EQ(run.out.find("note: "), std::string::npos) << run.out;
}

// Bare `archfit check` in an activated venv: the venv, said on the first
// line, judged against the GPU; a second check reads no library again.
class CliBareCheck : public ScratchDir {
 protected:
  void SetUp() override {
    ScratchDir::SetUp();
    if (!fs::exists(fs::path(ARCHFIT_DEMO_SITE) / "torch" / "version.py"))
      GTEST_SKIP() << "the demo environment was not built in " << ARCHFIT_DEMO_SITE;
    venv_ = dir_ / "venv";
#ifdef _WIN32
    // A venv as Windows lays it out: Lib\site-packages and Scripts\python.exe
    // (never run: being there is enough).
    site_ = venv_ / "Lib" / "site-packages";
    python_ = venv_ / "Scripts" / "python.exe";
    fs::create_directories(site_.parent_path());
    fs::copy(ARCHFIT_DEMO_SITE, site_, fs::copy_options::recursive);
    fs::create_directories(python_.parent_path());
    std::ofstream(python_) << "";
#else
    site_ = venv_ / "lib" / "python3.12" / "site-packages";
    python_ = venv_ / "bin" / "python";
    fs::create_directories(site_.parent_path());
    fs::create_directory_symlink(fs::absolute(ARCHFIT_DEMO_SITE), site_);
    fs::create_directories(python_.parent_path());
    std::ofstream(python_) << "#!/bin/sh\nexit 1\n";
    fs::permissions(python_, fs::perms::owner_all);
#endif
    fs::create_directories(dir_ / "elsewhere");
  }
  // From a folder with nothing in it, as a user in their home would.
  CommandResult bare_check(std::vector<std::string> arguments) {
    arguments.insert(arguments.begin(), "check");
    return run_archfit(arguments,
                       {{{"VIRTUAL_ENV", arg(venv_)}, {"ARCHFIT_CACHE_DIR", arg(dir_ / "cache")}},
                        dir_ / "elsewhere"});
  }
  fs::path venv_;
  fs::path site_;    // its site-packages
  fs::path python_;  // its interpreter
};

TEST_F(CliBareCheck, JudgesTheActivatedVenvAndSaysSoFirst) {
  const CommandResult run = bare_check({"--gpu", "RTX 5090"});
  EXPECT_EQ(run.exit_code, 1) << run.out;
  EXPECT_EQ(run.out.rfind("env     " + arg(venv_) + "  ($VIRTUAL_ENV)\n", 0), 0u) << run.out;
  EXPECT_NE(run.out.find("PyTorch 2.5.1+cu124  no-image"), std::string::npos) << run.out;
  // A venv's own pip runs the plan.
  const CommandResult plan = bare_check({"--gpu", "RTX 5090", "--plan"});
  EXPECT_NE(plan.out.find(arg(python_)), std::string::npos) << plan.out;
  // ... and its closing check names the venv, for a shell where it is not
  // activated, quoted for the shell that runs the plan.
  const std::string closing = plan.out.substr(plan.out.rfind("archfit check"));
#ifdef _WIN32
  // A .bat file: cmd's double quotes, only where the path needs them.
  EXPECT_TRUE(closing.find("--site-packages " + arg(site_)) != std::string::npos ||
              closing.find("--site-packages \"" + arg(site_) + "\"") != std::string::npos)
      << closing;
  EXPECT_EQ(closing.find('\''), std::string::npos) << closing;
  EXPECT_EQ(plan.out.rfind("@echo off\n", 0), 0u) << plan.out;
  // CRLF once: printed as its bytes, not through text mode's LF → CRLF.
  EXPECT_EQ(plan.out.find('\r'), std::string::npos) << plan.out;
#else
  EXPECT_NE(closing.find("--site-packages '" + arg(site_) + "'"), std::string::npos) << closing;
#endif
}

// `--venv DIR` names a venv that is not activated: its plan runs that
// venv's own interpreter, where the venv's layout puts it (Scripts\python.exe
// on Windows, bin/python elsewhere).
TEST_F(CliBareCheck, APlanForANamedVenvRunsThatVenvsOwnInterpreter) {
  const CommandResult plan =
      run_archfit({"check", "--plan", "--gpu", "RTX 5090", "--venv", arg(venv_)},
                  {{{"ARCHFIT_CACHE_DIR", arg(dir_ / "cache")}}, dir_ / "elsewhere"});
  EXPECT_EQ(plan.exit_code, 1) << plan.out;
  EXPECT_NE(plan.out.find(arg(python_)), std::string::npos) << plan.out;
}

TEST_F(CliBareCheck, ASecondCheckReadsNoLibraryAndNoIndexReadsThemAll) {
  const auto scan_of = [](const CommandResult& run) {
    return nlohmann::json::parse(run.out.substr(run.out.find('{')))["scan"];
  };
  const auto first = scan_of(bare_check({"--gpu", "sm_120", "--json"}));
  ASSERT_GT(first["files"].get<int>(), 0) << first;
  EXPECT_EQ(first["reused"], 0) << first;
  const auto second = scan_of(bare_check({"--gpu", "sm_120", "--json"}));
  EXPECT_EQ(second["reused"], second["files"]) << second;
  EXPECT_GT(second["directories"].get<int>(), 0) << second;
  EXPECT_EQ(second["directories_reused"], second["directories"]) << second;
  EXPECT_TRUE(second["index_problem"].is_null()) << second;
  const auto again = scan_of(bare_check({"--gpu", "sm_120", "--json", "--no-index"}));
  EXPECT_EQ(again["reused"], 0) << again;
}

TEST_F(CliBareCheck, AVenvVariableNamingNoVenvExitsTwoSayingSo) {
  const CommandResult run =
      run_archfit({"check", "--gpu", "sm_120"}, {{{"VIRTUAL_ENV", arg(dir_ / "elsewhere")}}});
  EXPECT_EQ(run.exit_code, 2) << run.out;
  EXPECT_NE(run.out.find("$VIRTUAL_ENV names " + arg(dir_ / "elsewhere")), std::string::npos)
      << run.out;
}

TEST(CliCheckOptions, APythonThatIsNotThereExitsTwoNamingIt) {
  const CommandResult run =
      run_archfit({"check", "--gpu", "RTX 5090", "--python", "/nonexistent/bin/python3"});
  EXPECT_EQ(run.exit_code, 2) << run.out;
  EXPECT_NE(run.out.find("no Python at /nonexistent/bin/python3"), std::string::npos) << run.out;
}

TEST_F(CliCheck, PlanPrintsAScriptThatChecksAgainWithTheSameOptions) {
  const CommandResult run =
      run_archfit({"check", "--plan", "--gpu", "RTX 5090", "--site-packages", site()});
  EXPECT_EQ(run.exit_code, 1) << run.out;  // the environment still fails until the plan is run
  EXPECT_EQ(run.out.rfind("#!/bin/sh\n", 0), 0u) << run.out;
  EXPECT_NE(run.out.find("\"$PYTHON\" -m pip install torch==2.15.0"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("archfit check --gpu 'RTX 5090' --site-packages '" +
                         arg(fs::absolute(ARCHFIT_DEMO_SITE))),
            std::string::npos)
      << run.out;
}

// A wheel made from the demo environment's torch library: scanned and checked
// as it is, without installing it.
class CliWheel : public ScratchDir {
 protected:
  void SetUp() override {
    ScratchDir::SetUp();
    const fs::path library = fs::path(ARCHFIT_DEMO_SITE) / "torch" / "lib" / "libtorch_cuda.so";
    if (!fs::exists(library)) GTEST_SKIP() << "the demo environment was not built in " << library;
    wheel_ = dir_ / "torch-2.5.1-cp311-cp311-manylinux1_x86_64.whl";
    archfit::test::write_zip(wheel_,
                             {{"torch/lib/libtorch_cuda.so", archfit::test::file_content(library)},
                              {"torch/version.py", "__version__ = '2.5.1+cu124'\ncuda = '12.4'\n"},
                              {"torch-2.5.1.dist-info/METADATA", "Name: torch\nVersion: 2.5.1\n"}});
  }
  fs::path wheel_;
};

TEST_F(CliWheel, ScanListsTheWheelsLibraryByItsPathInsideTheWheel) {
  const CommandResult run = run_archfit({"scan", "--json", arg(wheel_)});
  ASSERT_EQ(run.exit_code, 0) << run.out;
  const auto doc = nlohmann::json::parse(run.out);
  ASSERT_EQ(doc["files"].size(), 1u) << run.out;
  EXPECT_EQ(doc["files"][0]["path"], arg(wheel_) + "!/torch/lib/libtorch_cuda.so");
  EXPECT_GT(doc["files"][0]["images"].size(), 0u);
}

TEST_F(CliWheel, CheckWheelFailsOnAnRtx5090AndNamesTheWheel) {
  const CommandResult run = run_archfit({"check", "--wheel", arg(wheel_), "--gpu", "RTX 5090"});
  EXPECT_EQ(run.exit_code, 1) << run.out;
  EXPECT_NE(run.out.find("wheel   torch 2.5.1"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("torch 2.5.1  no-image"), std::string::npos) << run.out;
}

TEST_F(CliWheel, CheckWheelThatIsNotThereExitsTwo) {
  const CommandResult run =
      run_archfit({"check", "--wheel", arg(dir_ / "none.whl"), "--gpu", "H100"});
  EXPECT_EQ(run.exit_code, 2) << run.out;
  EXPECT_NE(run.out.find("none.whl"), std::string::npos) << run.out;
}

// Issue 24 row 3: entries sharing one deflate stream. The wheel is refused
// whole, at once, as malformed input.
TEST_F(CliWheel, ScanOfAWheelWhoseMembersOverlapExitsOneAndSaysSo) {
  const fs::path bomb = dir_ / "bomb-1.0-py3-none-any.whl";
  std::vector<std::string> names;
  for (int i = 0; i < 32; ++i) names.push_back("bomb/lib" + std::to_string(i) + ".so");
  archfit::test::write_overlapping_zip(bomb, names, std::string(1 << 20, '\0'));
  const CommandResult run = run_archfit({"scan", arg(bomb)});
  EXPECT_EQ(run.exit_code, 1) << run.out;
  EXPECT_NE(run.out.find("its 32 members claim"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("the members overlap (a zip bomb)"), std::string::npos) << run.out;
}

// Issue 24 row 4: a member past the wheel's decompression budget, here
// lowered by ARCHFIT_WHEEL_MAX_BYTES below the 8 MiB member and above the
// real library. scan says so and exits 1; check says unknown, not fits, and
// exits 2.
TEST_F(CliWheel, AMemberPastTheBudgetIsAProblemForScanAndUnknownForCheck) {
  const fs::path library = fs::path(ARCHFIT_DEMO_SITE) / "torch" / "lib" / "libtorch_cuda.so";
  const uint64_t cap = fs::file_size(library) + (1u << 20);
  ASSERT_LT(cap, 8u << 20);
  const fs::path wheel = dir_ / "torch-2.5.1-cp311-cp311-manylinux_2_28_x86_64.whl";
  archfit::test::write_zip(wheel,
                           {{"torch/lib/libtorch_cuda.so", archfit::test::file_content(library)},
                            {"torch/lib/libbomb.so", std::string(8u << 20, '\0')},
                            {"torch-2.5.1.dist-info/METADATA", "Name: torch\nVersion: 2.5.1\n"}});
  const RunPlace limit{{{"ARCHFIT_WHEEL_MAX_BYTES", std::to_string(cap)}}};

  const CommandResult scan = run_archfit({"scan", arg(wheel)}, limit);
  EXPECT_EQ(scan.exit_code, 1) << scan.out;
  EXPECT_NE(scan.out.find("libbomb.so: not read: its 8388608 bytes uncompressed would take the "
                          "archive past its decompression budget of " +
                          std::to_string(cap)),
            std::string::npos)
      << scan.out;

  const CommandResult check =
      run_archfit({"check", "--no-index", "--wheel", arg(wheel), "--gpu", "H100"}, limit);
  EXPECT_EQ(check.exit_code, 2) << check.out;
  EXPECT_NE(check.out.find("unknown: " + arg(wheel) + "!/torch/lib/libbomb.so: not read"),
            std::string::npos)
      << check.out;
  EXPECT_EQ(check.out.find("fits:"), std::string::npos) << check.out;

  // Without the lowered cap the 8 MiB member is read (the floor allows it),
  // and the wheel is judged whole.
  EXPECT_EQ(run_archfit({"check", "--no-index", "--wheel", arg(wheel), "--gpu", "H100"}).exit_code,
            0);
}

TEST_F(CliWheel, AMalformedBudgetVariableIsNamedAndTheDefaultKept) {
  const CommandResult run =
      run_archfit({"scan", arg(wheel_)}, {{{"ARCHFIT_WHEEL_MAX_RATIO", "lots"}}});
  EXPECT_EQ(run.exit_code, 0) << run.out;
  EXPECT_NE(run.out.find("ARCHFIT_WHEEL_MAX_RATIO=lots is not a whole number above 0; using 32"),
            std::string::npos)
      << run.out;
}

TEST_F(CliWheel, ProgressIsSilentForAScanUnderASecond) {
  const CommandResult run = run_archfit({"scan", "--progress", arg(wheel_)});
  EXPECT_EQ(run.exit_code, 0) << run.out;
  EXPECT_EQ(run.out.find("archfit: scanning"), std::string::npos) << run.out;
}

// --confirm with the test-only driver on the loader path, as a user's machine
// has the real one: one RTX 4090.
TEST_F(CliCheck, ConfirmAsksTheDriverAndSaysItAgrees) {
#ifdef _WIN32
  // nvcuda.dll as the loader finds it on PATH: the test-only one first.
  const char* const path = std::getenv("PATH");
  const RunPlace driver{{{"PATH", std::string(ARCHFIT_FAKE_CUDA_DIR) + ";" + (path ? path : "")},
                         {"ARCHFIT_FAKE_CUDA_DEVICES", "NVIDIA GeForce RTX 4090,8.9,1"}}};
#else
  const RunPlace driver{{{"LD_LIBRARY_PATH", ARCHFIT_FAKE_CUDA_DIR},
                         {"ARCHFIT_FAKE_CUDA_DEVICES", "NVIDIA GeForce RTX 4090,8.9,1"}}};
#endif
  const CommandResult run = run_archfit({"check", "--confirm", "--site-packages", site()}, driver);
  EXPECT_EQ(run.exit_code, 1) << run.out;  // fastops' compute_90 PTX cannot run on 8.9
  EXPECT_NE(run.out.find("GPU     NVIDIA GeForce RTX 4090"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("driver check (--confirm): 2 containers loaded or refused, 0 disagreeing"),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("driver: 1 of 1 containers loaded by the driver, as judged"),
            std::string::npos)
      << run.out;
}

// Nothing archfit could not read is "fits" (issue 34): a folder named to
// judge that is empty, a pseudo-filesystem, a file that cannot be opened.
class CliCheckNothingRead : public ScratchDir {};

TEST_F(CliCheckNothingRead, AnEmptyFolderIsUnknownNotFits) {
  fs::create_directories(dir_ / "empty");
  const CommandResult run = run_archfit({"check", "--gpu", "RTX 5090", arg(dir_ / "empty")});
  EXPECT_EQ(run.exit_code, 2) << run.out;
  EXPECT_NE(run.out.find("an empty folder, with nothing in it to judge"), std::string::npos)
      << run.out;
}

TEST_F(CliCheckNothingRead, APseudoFilesystemIsUnknownNotFits) {
#ifdef _WIN32
  GTEST_SKIP() << "Windows has no /proc";
#endif
  const CommandResult run = run_archfit({"check", "--gpu", "RTX 5090", "/proc/self/fd"});
  EXPECT_EQ(run.exit_code, 2) << run.out;
  EXPECT_NE(run.out.find("kernel pseudo-filesystem"), std::string::npos) << run.out;
}

TEST_F(CliCheckNothingRead, AFileThatCannotBeOpenedIsUnknownNotFits) {
  const fs::path library = write("libhidden.so",
                                 "\x7f"
                                 "ELF");
#ifdef _WIN32
  // Held open by another process with no sharing, as an antivirus scanner
  // or an installer holds a DLL: a sharing violation for archfit.
  const HANDLE held = ::CreateFileW(library.c_str(), GENERIC_READ, 0, nullptr, OPEN_EXISTING,
                                    FILE_ATTRIBUTE_NORMAL, nullptr);
  ASSERT_NE(held, INVALID_HANDLE_VALUE);
#else
  if (::geteuid() == 0) GTEST_SKIP() << "root opens any file";
  fs::permissions(library, fs::perms::none);
#endif
  const CommandResult run = run_archfit({"check", "--gpu", "RTX 5090", arg(dir_)});
#ifdef _WIN32
  ::CloseHandle(held);
#endif
  EXPECT_EQ(run.exit_code, 2) << run.out;
  EXPECT_NE(run.out.find("libhidden.so"), std::string::npos) << run.out;
}
