// Stacks, reach, driver and platform rules and the fixes a user runs, on a
// stock PyTorch install in miniature (stack_site.hpp). The fixes come from the
// real knowledge base, so the commands asserted here are the ones printed for
// a real venv; the real-world tier runs the same cases on PyPI's wheels.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <memory>

#include "check/check.hpp"
#include "check/report_json.hpp"
#include "check/stack_judge.hpp"
#include "check_resources.hpp"
#include "stack_site.hpp"

namespace fs = std::filesystem;
using archfit::check::CheckReport;
using archfit::check::CheckRequest;
using archfit::check::ComponentResult;
using archfit::check::OverallVerdict;
using archfit::check::Reach;
using archfit::check::run_check;
using archfit::check::StackResult;
using archfit::compat::Verdict;

namespace {

class CheckStackTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!archfit::testing::stack_fixtures_built())
      GTEST_SKIP() << "the stack fixtures need nvcc: " << archfit::testing::stack_fixture("");
    site_ = std::make_unique<archfit::testing::FixtureSite>(
        std::string("stack_") + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    options_.site_packages = {site_->root()};
    resources_ =
        archfit::testing::check_resources(site_->root() / "no-driver-here" / "libcuda.so.1");
  }
  CheckReport check(std::vector<std::string> gpus, const std::string& driver) {
    options_.gpus = std::move(gpus);
    if (!driver.empty()) options_.driver = driver;
    return run_check(options_, resources_);
  }
  static const StackResult& stack(const CheckReport& report, const std::string& name) {
    for (const auto& s : report.stacks) {
      if (s.name == name) return s;
    }
    ADD_FAILURE() << "no stack " << name;
    static StackResult none;
    return none;
  }
  static const ComponentResult& component(const CheckReport& report, const std::string& name) {
    for (const auto& c : report.components) {
      if (c.component.name == name) return c;
    }
    ADD_FAILURE() << "no component " << name;
    static ComponentResult none;
    return none;
  }
  static const archfit::check::BinaryResult& binary(const ComponentResult& c,
                                                    const std::string& file) {
    for (const auto& b : c.binaries) {
      if (b.path.filename() == file) return b;
    }
    ADD_FAILURE() << "no binary " << file << " in " << c.component.name;
    static archfit::check::BinaryResult none;
    return none;
  }
  std::unique_ptr<archfit::testing::FixtureSite> site_;
  CheckRequest options_;
  archfit::check::CheckResources resources_;
};

}  // namespace

// The false failure: nvidia-cufft's libcufftw holds only old SASS,
// and nothing links it. A stock install fits; the library is set aside.
TEST_F(CheckStackTest, AStockInstallFitsWhereItsUnlinkedCufftwCannotRun) {
  archfit::testing::install_stock_torch(*site_);
  for (const char* gpu : {"H100", "RTX 4090", "RTX 5090"}) {
    const auto report = check({gpu}, "580.65.06");
    EXPECT_EQ(report.verdict, OverallVerdict::fits) << gpu << ": " << report.summary;
    ASSERT_EQ(report.stacks.size(), 1u) << gpu;
    const auto& torch = report.stacks[0];
    EXPECT_EQ(torch.name, "PyTorch");
    EXPECT_EQ(torch.version, "2.8.0+cu128");
    // torch, torchvision, and the nvidia-* wheels torch's metadata requires.
    for (const char* member : {"torch", "torchvision", "nvidia-cufft-cu12",
                               "nvidia-cusparselt-cu12", "nvidia-cuda-runtime-cu12"})
      EXPECT_NE(std::find(torch.members.begin(), torch.members.end(), member), torch.members.end())
          << member;
    const auto& cufft = component(report, "nvidia-cufft-cu12");
    EXPECT_FALSE(cufft.blocks()) << gpu;
    const auto& cufftw = binary(cufft, "libcufftw.so.11");
    EXPECT_EQ(cufftw.reach, Reach::unreached);
    EXPECT_EQ(cufftw.reach_reason, "nothing in what was checked links or opens it");
    const auto& libcufft = binary(cufft, "libcufft.so.11");
    EXPECT_EQ(libcufft.reach, Reach::loaded);
    EXPECT_EQ(libcufft.reach_reason, "linked from torch/lib/libtorch_cuda.so");
    EXPECT_EQ(report.summary.rfind("fits: PyTorch 2.8.0+cu128 run on ", 0), 0u) << report.summary;
  }
  // On sm_120 cuFFT's SASS stops at sm_90: the driver JITs its PTX.
  const auto rtx5090 = check({"RTX 5090"}, "580.65.06");
  EXPECT_EQ(rtx5090.stacks[0].verdict, Verdict::ptx_jit);
}

// A library whose kernels serve one feature (cuSPARSELt: 2:4 sparsity, on
// sm_80 and newer) is a note where it cannot run, never a failure of the
// stack; on a GPU without the feature at all there is nothing to say.
TEST_F(CheckStackTest, AFeatureLibraryThatCannotRunIsANoteNotAFailure) {
  archfit::testing::install_stock_torch(*site_);
  const auto turing = check({"RTX 2080"}, "550.54.14");  // 7.5: no 2:4 sparsity there
  EXPECT_EQ(turing.verdict, OverallVerdict::fits) << turing.summary;
  EXPECT_TRUE(stack(turing, "PyTorch").notes.empty());
  const auto report = check({"H100"}, "580.65.06");  // 9.0: the imitation has sm_80 only
  EXPECT_EQ(report.verdict, OverallVerdict::fits) << report.summary;
  const auto& torch = stack(report, "PyTorch");
  EXPECT_EQ(torch.verdict, Verdict::native);
  ASSERT_EQ(torch.notes.size(), 1u);
  EXPECT_NE(torch.notes[0].feature.find("2:4 semi-structured sparsity"), std::string::npos);
  EXPECT_EQ(torch.notes[0].verdict, Verdict::no_image);
  const auto& lt = binary(component(report, "nvidia-cusparselt-cu12"), "libcusparseLt.so.0");
  EXPECT_EQ(lt.reach, Reach::feature);
  EXPECT_FALSE(component(report, "nvidia-cusparselt-cu12").blocks());
  EXPECT_NE(report.summary.find("1 feature will not work"), std::string::npos) << report.summary;
}

// The CUDA runtime a library links, by its name as each OS spells it: a
// Windows stack's driver needs come from cudart64_*.dll (CUDA 11's carries
// the minor too: cudart64_110.dll is every 11.x).
TEST(CudartMajor, ReadsTheMajorFromTheRuntimesNameOnEitherOs) {
  using archfit::check::cudart_major;
  EXPECT_EQ(cudart_major("libcudart.so.12"), 12u);
  EXPECT_EQ(cudart_major("libcudart.so.11.0"), 11u);
  EXPECT_EQ(cudart_major("cudart64_12.dll"), 12u);
  EXPECT_EQ(cudart_major("CUDART64_13.DLL"), 13u);
  EXPECT_EQ(cudart_major("cudart64_110.dll"), 11u);
  EXPECT_EQ(cudart_major("cudart64_101.dll"), 10u);
  for (const char* other : {"cudart64_.dll", "cudart64_1234.dll", "cudart64_12.so", "cudart.dll",
                            "cudart64_x2.dll", "libcudart.so", "cudart32_110.dll"})
    EXPECT_EQ(cudart_major(other), std::nullopt) << other;
}

// Issue 36, item 6: with no driver read, "fits" is only half the answer: the
// summary says which driver the stack's CUDA needs (CUDA 13: 580).
TEST_F(CheckStackTest, WithNoDriverReadTheSummarySaysWhichDriverTheStackNeeds) {
  archfit::testing::install_stock_torch(*site_, {"2.15.0", "cu130", "13.0", false});
  const auto report = check({"RTX 5090"}, "");
  ASSERT_EQ(report.verdict, OverallVerdict::fits) << report.summary;
  const auto& torch = stack(report, "PyTorch");
  ASSERT_TRUE(torch.cuda && torch.cuda->min_driver);
  EXPECT_NE(report.summary.find(", given an NVIDIA driver of at least " +
                                torch.cuda->min_driver->to_string() +
                                " (what CUDA 13.0 needs; no driver was read)"),
            std::string::npos)
      << report.summary;
  EXPECT_EQ(torch.cuda->min_driver->to_string().rfind("580.", 0), 0u);
  // With a driver read, the summary names it instead.
  const auto with_driver = check({"RTX 5090"}, "580.65.06");
  EXPECT_NE(with_driver.summary.find(" with driver 580.65.06"), std::string::npos)
      << with_driver.summary;
  EXPECT_EQ(with_driver.summary.find("no driver was read"), std::string::npos);
}

// An old GPU: the newest build that still runs it, with the torchvision
// pinned to it, from the tag's index with the labels that force the move.
TEST_F(CheckStackTest, AnOldGpuGetsTheNewestBuildThatStillRunsIt) {
  archfit::testing::install_stock_torch(*site_);
  const auto report = check({"GTX 1080"}, "570.86");
  EXPECT_EQ(report.verdict, OverallVerdict::fails);
  const auto& torch = stack(report, "PyTorch");
  EXPECT_EQ(torch.verdict, Verdict::no_image);
  ASSERT_EQ(torch.fix.commands.size(), 1u) << torch.fix.summary;
  EXPECT_EQ(torch.fix.commands[0],
            "pip install torch==2.14.1+cu126 torchvision==0.29.1+cu126 --index-url "
            "https://download.pytorch.org/whl/cu126");
  EXPECT_EQ(torch.fix.index_url, "https://download.pytorch.org/whl/cu126");
  EXPECT_EQ(torch.fix.requirements,
            (std::vector<std::string>{"torch==2.14.1+cu126", "torchvision==0.29.1+cu126"}));
  EXPECT_NE(torch.fix.summary.find("the newest PyTorch that still runs on sm_61"),
            std::string::npos)
      << torch.fix.summary;
  // No alternative offers an older torch for an old GPU.
  EXPECT_TRUE(torch.fix.alternatives.empty()) << torch.fix.alternatives[0].summary;
  // The first fix shown, and the one line, are the stack's.
  EXPECT_NE(report.summary.find("fails: PyTorch 2.8.0+cu128 has no image for GeForce GTX 1080 "
                                "(sm_61); run: pip install torch==2.14.1+cu126"),
            std::string::npos)
      << report.summary;
}

// A new GPU: the newest build within the driver, the oldest as the smallest
// change, and the newest of all after a driver update.
TEST_F(CheckStackTest, ANewGpuGetsTheNewestBuildWithinTheDriverAndTheOldestAsAnother) {
  archfit::testing::install_stock_torch(*site_, {"2.5.1", "cu124", "12.4"});
  const auto report = check({"RTX 5090"}, "570.86");
  const auto& torch = stack(report, "PyTorch");
  EXPECT_EQ(torch.verdict, Verdict::no_image);
  EXPECT_EQ(torch.fix.commands.at(0),
            "pip install torch==2.11.0+cu128 torchvision==0.26.0+cu128 --index-url "
            "https://download.pytorch.org/whl/cu128");
  EXPECT_EQ(torch.fix.driver, "570.26");  // sm_120 needs it, whatever the CUDA floor
  ASSERT_EQ(torch.fix.alternatives.size(), 2u);
  EXPECT_EQ(torch.fix.alternatives[0].commands.at(0),
            "pip install torch==2.7.0+cu128 torchvision==0.22.0+cu128 --index-url "
            "https://download.pytorch.org/whl/cu128");
  // PyPI's own build needs no index and no label.
  EXPECT_EQ(torch.fix.alternatives[1].commands.at(0),
            "pip install torch==2.15.0 torchvision==0.29.2");
  EXPECT_EQ(torch.fix.alternatives[1].driver, "580.65.06");
  EXPECT_TRUE(torch.fix.alternatives[1].index_url.empty());
}

// Two GPUs that no one build serves: said plainly, with each GPU's own fix.
TEST_F(CheckStackTest, TwoGpusNoBuildServesAreSaidPlainlyWithEachOnesFix) {
  archfit::testing::install_stock_torch(*site_, {"2.5.1", "cu124", "12.4"});
  const auto report = check({"RTX 5090", "GTX 1080"}, "570.86");
  const auto& torch = stack(report, "PyTorch");
  EXPECT_TRUE(torch.fix.commands.empty());
  EXPECT_EQ(torch.fix.summary.rfind("No PyTorch build runs on all of GeForce RTX 5090 (sm_120) and "
                                    "GeForce GTX 1080 (sm_61)",
                                    0),
            0u)
      << torch.fix.summary;
  ASSERT_EQ(torch.fix.alternatives.size(), 2u);
  EXPECT_NE(torch.fix.alternatives[0].summary.find("For GeForce RTX 5090 alone"),
            std::string::npos);
  EXPECT_NE(torch.fix.alternatives[1].commands.at(0).find("torch==2.14.1+cu126"),
            std::string::npos);
  // …and two that one build serves get it.
  const auto both = check({"RTX 5090", "RTX 4090"}, "570.86");
  EXPECT_NE(stack(both, "PyTorch").fix.commands.at(0).find("torch==2.11.0+cu128"),
            std::string::npos);
}

// CUDA 13 builds need an R580 driver (minor-version compatibility): the
// images would run, the driver will not load them.
TEST_F(CheckStackTest, ACuda13BuildOnDriver570IsDriverTooOld) {
  archfit::testing::install_stock_torch(*site_, {"2.11.0", "cu130", "13.0"});
  const auto report = check({"RTX 4090"}, "570.86");
  EXPECT_EQ(report.verdict, OverallVerdict::fails);
  const auto& torch = stack(report, "PyTorch");
  EXPECT_EQ(torch.verdict, Verdict::driver_too_old);
  ASSERT_TRUE(torch.cuda);
  EXPECT_EQ(torch.cuda->version, "13.0");
  EXPECT_EQ(torch.cuda->min_driver->to_string(), "580.65.06");
  EXPECT_NE(torch.evidence.find("driver 570.86 is too old for CUDA 13.x applications"),
            std::string::npos)
      << torch.evidence;
  EXPECT_EQ(torch.fix.driver, "580.65.06");
  // Or keep the driver: the same torch built for CUDA 12.8.
  ASSERT_FALSE(torch.fix.alternatives.empty());
  EXPECT_NE(torch.fix.alternatives[0].commands.at(0).find("torch==2.11.0+cu128"), std::string::npos)
      << torch.fix.alternatives[0].summary;
  // A 12.8 build on a 550 driver runs its SASS: not driver-too-old.
  site_ = std::make_unique<archfit::testing::FixtureSite>("stack_cuda12_on_550");
  options_.site_packages = {site_->root()};
  archfit::testing::install_stock_torch(*site_);
  EXPECT_EQ(check({"RTX 4090"}, "550.54.14").verdict, OverallVerdict::fits);
}

// Blackwell needs the first driver that knows it (570.26), whatever the build.
TEST_F(CheckStackTest, ABlackwellGpuOnDriver550IsDriverTooOldForEveryStack) {
  archfit::testing::install_stock_torch(*site_);
  for (const char* gpu : {"RTX 5090", "B200"}) {
    const auto report = check({gpu}, "550.144.03");
    EXPECT_EQ(report.verdict, OverallVerdict::fails) << gpu;
    ASSERT_FALSE(report.devices[0].driver_knows_it);
    const auto& torch = stack(report, "PyTorch");
    EXPECT_EQ(torch.verdict, Verdict::driver_too_old) << gpu;
    EXPECT_EQ(torch.fix.summary.rfind("Update the NVIDIA driver to 570.26 or newer", 0), 0u)
        << torch.fix.summary;
  }
}

// Wheels built for x86_64 never load on a Jetson (aarch64).
TEST_F(CheckStackTest, X86WheelsOnAJetsonAreTheWrongPlatform) {
  archfit::testing::install_stock_torch(*site_);
  const auto report = check({"Jetson Orin"}, "");
  EXPECT_EQ(report.devices.at(0).machine, "aarch64");
  const auto& torch = stack(report, "PyTorch");
  EXPECT_EQ(torch.verdict, Verdict::wrong_platform);
  EXPECT_NE(torch.evidence.find("built for x86_64"), std::string::npos) << torch.evidence;
  EXPECT_NE(torch.fix.summary.find("JetPack"), std::string::npos) << torch.fix.summary;
  EXPECT_EQ(report.verdict, OverallVerdict::fails);
}

// A binary-only package is never told to build from source.
TEST_F(CheckStackTest, ABinaryOnlyPackageIsNeverToldToBuildFromSource) {
  site_->install("onnxruntime-gpu", "1.31.1",
                 {{"onnxruntime/capi/libonnxruntime_providers_cuda.so",
                   archfit::testing::stack_fixture("closed_sm75/libclosed.so")}});
  const auto report = check({"RTX 5090"}, "580.65.06");
  const auto& ort = stack(report, "onnxruntime-gpu");
  EXPECT_EQ(ort.verdict, Verdict::no_image);
  EXPECT_FALSE(ort.fix.summary.empty());
  for (const auto& command : ort.fix.commands)
    EXPECT_EQ(command.find("--no-binary"), std::string::npos) << command;
  EXPECT_NE(ort.fix.summary.find("binaries only"), std::string::npos) << ort.fix.summary;
  // No bare pip in a sentence either: a command not made for the environment.
  EXPECT_EQ(ort.fix.summary.find("pip "), std::string::npos) << ort.fix.summary;
}

// xformers moves with torch: the release pinned to the torch the fix installs.
TEST_F(CheckStackTest, XformersIsMovedWithTheTorchTheFixInstalls) {
  archfit::testing::install_stock_torch(*site_, {"2.5.1", "cu124", "12.4"});
  site_->install("xformers", "0.0.28.post3",
                 {{"xformers/_C.so", archfit::testing::stack_fixture("xformers/_C.so")}},
                 {"numpy", "torch==2.5.1"});
  const auto report = check({"RTX 5090"}, "580.65.06");
  // The first stack and its fix are PyTorch's, whatever else fails.
  ASSERT_FALSE(report.stacks.empty());
  EXPECT_EQ(report.stacks[0].anchor, "torch");
  const auto& torch = report.stacks[0];
  EXPECT_EQ(torch.fix.commands.at(0),
            "pip install torch==2.15.0 torchvision==0.29.2 xformers==0.0.35");
  // xformers is judged on its own code (compute_90 PTX: JIT on sm_120), not
  // on the torch libraries it links, which are PyTorch's to judge.
  const auto& xformers = stack(report, "xformers");
  EXPECT_EQ(xformers.verdict, Verdict::ptx_jit);
}

// Issue 36: xformers 0.0.35's _C.so links libcudart.so.12; beside a torch
// built for CUDA 13 nothing in the environment holds it, and the loader's
// own folders (none here) do not either. Importing it would stop at
// "libcudart.so.12: cannot open shared object file": the stack does not
// load, whatever its PTX would do on the GPU, and no command is offered
// that archfit has not judged.
class CheckMissingLibraryTest : public CheckStackTest {
 protected:
  void SetUp() override {
    CheckStackTest::SetUp();
    if (IsSkipped()) return;
    archfit::testing::install_stock_torch(*site_, {"2.15.0", "cu130", "13.0", false});
    site_->install("xformers", "0.0.35",
                   {{"xformers/_C.so", archfit::testing::stack_fixture("xformers/_C.so")}},
                   {"numpy", "torch>=2.10"});
    resources_.loader_search = archfit::sys::LoaderSearch{};
  }
  // A folder outside the environment holding CUDA 12's runtime.
  fs::path folder_with_cudart12() const {
    const fs::path folder = site_->top() / "outside" / "cuda-12" / "lib64";
    fs::create_directories(folder);
    fs::copy_file(archfit::testing::stack_fixture("cudart12/libcudart.so.12"),
                  folder / "libcudart.so.12");
    return folder;
  }
};

TEST_F(CheckMissingLibraryTest, AStackLinkingALibraryNoOneInstalledDoesNotLoad) {
  const auto report = check({"RTX 5090"}, "580.65.06");
  const auto& xformers = stack(report, "xformers");
  EXPECT_EQ(xformers.verdict, Verdict::missing_library);
  ASSERT_EQ(xformers.missing_libraries.size(), 1u);
  EXPECT_EQ(xformers.missing_libraries[0].library, "libcudart.so.12");
  EXPECT_EQ(xformers.missing_libraries[0].needed_by, "xformers/_C.so");
  EXPECT_EQ(xformers.missing_libraries[0].distribution, "nvidia-cuda-runtime-cu12");
  EXPECT_NE(xformers.evidence.find("xformers/_C.so links libcudart.so.12"), std::string::npos)
      << xformers.evidence;
  EXPECT_TRUE(xformers.fix.commands.empty());
  EXPECT_NE(xformers.fix.summary.find("Install a build of xformers made for this environment's "
                                      "CUDA; the installed one links libcudart.so.12 (from "
                                      "nvidia-cuda-runtime-cu12)"),
            std::string::npos)
      << xformers.fix.summary;
  EXPECT_EQ(report.verdict, OverallVerdict::fails);
  // torch itself links libcudart.so.13, which its wheel installed: it loads.
  EXPECT_NE(stack(report, "PyTorch").verdict, Verdict::missing_library);
  const auto doc = archfit::check::check_document(report);
  for (const auto& s : doc["stacks"]) {
    if (s["name"] != "xformers") continue;
    EXPECT_EQ(s["verdict"], "missing-library");
    EXPECT_EQ(s["blocks"], true);
    EXPECT_EQ(s["title"], "xformers 0.0.35 does not load");
    EXPECT_EQ(s["missing_libraries"][0]["library"], "libcudart.so.12");
  }
}

// With no GPU named it still fails: a missing library fails on any GPU.
TEST_F(CheckMissingLibraryTest, ItFailsWithNoGpuNamed) {
  const auto report = check({}, "");
  EXPECT_EQ(stack(report, "xformers").verdict, Verdict::missing_library);
}

// The loader finds it in a folder of its own (ld.so.conf's): it loads.
TEST_F(CheckMissingLibraryTest, ACopyInTheLoadersOwnFoldersLoads) {
  resources_.loader_search->system_dirs = {folder_with_cudart12()};
  const auto report = check({"RTX 5090"}, "580.65.06");
  const auto& xformers = stack(report, "xformers");
  EXPECT_EQ(xformers.verdict, Verdict::ptx_jit);
  EXPECT_TRUE(xformers.missing_libraries.empty());
}

// Found only through LD_LIBRARY_PATH (PATH on Windows, for a Linux
// environment read there): it loads here, and the report says a process
// started without the variable would not.
TEST_F(CheckMissingLibraryTest, ACopyFoundOnlyThroughTheLibraryPathIsSaid) {
  resources_.loader_search->variable_dirs = {folder_with_cudart12()};
  const auto report = check({"RTX 5090"}, "580.65.06");
  EXPECT_EQ(stack(report, "xformers").verdict, Verdict::ptx_jit);
  const std::string said = "xformers/_C.so loads libcudart.so.12 from ";
  EXPECT_TRUE(std::any_of(report.findings.begin(), report.findings.end(),
                          [&](const std::string& finding) {
                            return finding.rfind(said, 0) == 0 &&
                                   finding.find(archfit::sys::kLibraryPathVariable) !=
                                       std::string::npos;
                          }))
      << ::testing::PrintToString(report.findings);
}

// Issue 36, item 3: going from a CUDA 13 torch to a CUDA 12 one leaves the
// newer cuDNN's extra sub-libraries behind. pip installs nvidia-cudnn-cu12
// over the folder nvidia-cudnn-cu13 filled, overwrites the names both ship
// and uninstalls neither: nvidia-cudnn-cu13 9.26.0.51 ships
// libcudnn_engines_tensor_ir.so.9 and libcudnn_ext.so.9, which
// nvidia-cudnn-cu12 9.10.2.21 does not (both wheels' file lists, read on
// PyPI). The cuDNN loaded is 9.10's, which never opens them.
class CheckLeftOverCudnnTest : public CheckStackTest {
 protected:
  // nvidia-cudnn-cu13 first, then a CUDA 12 torch and its cuDNN over it.
  // cu13's libcudnn.so.9 stands in with other bytes (another size in its
  // RECORD), as a different build would; cu12's is the one left on disk.
  void install_after_cuda13_cudnn(const std::vector<std::string>& cu12_also_ships = {}) {
    using archfit::testing::stack_fixture;
    site_->install(
        "nvidia-cudnn-cu13", "9.26.0.51",
        {{"nvidia/cudnn/lib/libcudnn.so.9", stack_fixture("cudart13/libcudart.so.13")},
         {"nvidia/cudnn/lib/libcudnn_ops.so.9", stack_fixture("cudnn_ops/libcudnn_ops.so.9")},
         {"nvidia/cudnn/lib/libcudnn_ext.so.9", stack_fixture("cudnn_ext/libcudnn_ext.so.9")}});
    archfit::testing::install_stock_torch(*site_, {"2.7.1", "cu126", "12.6", false});
    // A cuDNN 9 release that ships the file too, for the control case.
    for (const auto& relative : cu12_also_ships)
      site_->write(
          "nvidia-cudnn-cu12-9.10.2.21.dist-info/RECORD",
          read(site_->root() / "nvidia-cudnn-cu12-9.10.2.21.dist-info/RECORD") + relative + ",,\n");
  }
  static std::string read(const fs::path& file) {
    std::ifstream in(file);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
};

TEST_F(CheckLeftOverCudnnTest, ASubLibraryTheLoadedCudnnDoesNotShipIsNeverJudged) {
  install_after_cuda13_cudnn();
  // libcudnn_ext.so.9 holds sm_100f SASS only: judged, it would fail an
  // RTX 4090 and print a torch fix that changes nothing about it.
  const auto report = check({"RTX 4090"}, "570.86.16");
  const auto& torch = stack(report, "PyTorch");
  EXPECT_FALSE(archfit::compat::is_failure(torch.verdict)) << torch.evidence;
  EXPECT_EQ(report.verdict, OverallVerdict::fits) << report.summary;
  // What 9.10 ships is opened and judged.
  const auto& ops = binary(component(report, "nvidia-cudnn-cu12"), "libcudnn_ops.so.9");
  EXPECT_EQ(ops.reach, Reach::loaded);
  EXPECT_EQ(ops.reach_reason, "opened by nvidia/cudnn/lib/libcudnn.so.9");
  // The leftover is said once, with whose it is and why it is never loaded.
  const auto& ext = binary(component(report, "nvidia-cudnn-cu13"), "libcudnn_ext.so.9");
  EXPECT_EQ(ext.reach, Reach::unreached);
  EXPECT_EQ(ext.reach_reason,
            "left over from nvidia-cudnn-cu13 9.26.0.51: the nvidia/cudnn/lib/libcudnn.so.9 of "
            "nvidia-cudnn-cu12 9.10.2.21 does not open it");
  EXPECT_EQ(std::count(report.findings.begin(), report.findings.end(),
                       "nvidia/cudnn/lib/libcudnn_ext.so.9 is " + ext.reach_reason +
                           "; it is never loaded and not judged"),
            1)
      << ::testing::PrintToString(report.findings);
}

// The control: a release that ships the same file opens it, and its
// sm_100f-only code fails the RTX 4090. What decides is the RECORD of the
// release whose libcudnn.so.9 is on disk, not the file's name.
TEST_F(CheckLeftOverCudnnTest, ASubLibraryTheLoadedCudnnShipsIsOpenedAndJudged) {
  install_after_cuda13_cudnn({"nvidia/cudnn/lib/libcudnn_ext.so.9"});
  const auto report = check({"RTX 4090"}, "570.86.16");
  EXPECT_EQ(stack(report, "PyTorch").verdict, Verdict::no_image);
  const auto& ext = binary(component(report, "nvidia-cudnn-cu12"), "libcudnn_ext.so.9");
  EXPECT_EQ(ext.reach, Reach::loaded);
  EXPECT_EQ(ext.reach_reason, "opened by nvidia/cudnn/lib/libcudnn.so.9");
}

// Every front end reads the same answer: the document carries the stacks,
// whether each blocks, how each binary is reached, and the one line.
TEST_F(CheckStackTest, TheDocumentCarriesStacksReachAndTheOneLineAnswer) {
  archfit::testing::install_stock_torch(*site_);
  const auto doc = archfit::check::check_document(check({"GTX 1080"}, "570.86"));
  EXPECT_EQ(doc["schema"], "archfit.check/1");
  EXPECT_EQ(doc["stacks"][0]["name"], "PyTorch");
  EXPECT_EQ(doc["stacks"][0]["verdict"], "no-image");
  EXPECT_EQ(doc["stacks"][0]["blocks"], true);
  // The title a toast or the Pre-flight node leads with: the GPU by its short name.
  EXPECT_EQ(doc["stacks"][0]["title"], "GTX 1080 cannot run PyTorch 2.8.0+cu128");
  for (const auto& stack : doc["stacks"])
    if (stack["blocks"] == false) EXPECT_EQ(stack["title"], "") << stack["name"];
  EXPECT_EQ(doc["stacks"][0]["cuda"]["version"], "12.8");
  EXPECT_EQ(doc["stacks"][0]["cuda"]["min_driver"], "525.60.13");
  EXPECT_EQ(doc["fix"], doc["stacks"][0]["fix"]);
  EXPECT_EQ(doc["fix"]["index_url"], "https://download.pytorch.org/whl/cu126");
  EXPECT_EQ(doc["summary"].get<std::string>().rfind("fails: PyTorch 2.8.0+cu128", 0), 0u);
  bool saw_unreached = false;
  for (const auto& c : doc["components"]) {
    for (const auto& b : c["binaries"]) {
      if (b["reach"] == "unreached") {
        saw_unreached = true;
        EXPECT_EQ(b["blocks"], false);
        EXPECT_EQ(b["not_loaded"], b["reach_reason"]);
      }
    }
  }
  EXPECT_TRUE(saw_unreached);
}

// A GPU older than every PyTorch build the knowledge base lists (a Kepler,
// sm_30) has no torch to install: the fix says so. Choosing one once
// recursed without end and crashed `archfit check --gpu sm_30`.
TEST_F(CheckStackTest, AGpuOlderThanEveryPyTorchBuildIsToldSoWithoutACommand) {
  archfit::testing::install_stock_torch(*site_);
  const auto report = check({"sm_30"}, "");
  const auto& torch = stack(report, "PyTorch");
  EXPECT_TRUE(torch.fix.commands.empty());
  EXPECT_NE(torch.fix.summary.find("No PyTorch build in the knowledge base runs on"),
            std::string::npos)
      << torch.fix.summary;
}
