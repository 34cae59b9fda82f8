#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <random>
#include <set>

#include "kb/knowledge_base.hpp"
#include "saved_env.hpp"

namespace fs = std::filesystem;
using archfit::kb::ComputeCapability;
using archfit::kb::KbError;
using archfit::kb::KbFormatError;
using archfit::kb::KnowledgeBase;
using archfit::kb::load_knowledge_base;
using archfit::kb::parse_driver_version;
using archfit::kb::PtxIsa;
using archfit::kb::ResolvedGpu;
using archfit::kb::UnknownGpuError;

namespace {

const fs::path kSourceKb = fs::path(__FILE__).parent_path() / "../../sdk/data/kb";

const KnowledgeBase& real_kb() {
  static const KnowledgeBase kb = load_knowledge_base(kSourceKb);
  return kb;
}

ComputeCapability cc(uint16_t major, uint16_t minor) { return {major, minor}; }

// A scratch copy of the real knowledge base; tests overwrite one file in it.
class ScratchKb {
 public:
  ScratchKb() {
    std::random_device random;
    dir_ = fs::temp_directory_path() /
           ("archfit_kb_test_" + std::to_string(::getpid()) + "_" + std::to_string(random()));
    fs::create_directories(dir_);
    for (const auto& entry : fs::directory_iterator(kSourceKb)) {
      if (entry.path().extension() == ".yaml")
        fs::copy_file(entry.path(), dir_ / entry.path().filename());
    }
  }
  ~ScratchKb() {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }
  void write(const std::string& name, const std::string& text) const {
    std::ofstream(dir_ / name) << text;
  }
  const fs::path& dir() const { return dir_; }

 private:
  fs::path dir_;
};

// Loads `text` as `file` in a scratch knowledge base; returns the error.
KbFormatError format_error(const std::string& file, const std::string& text) {
  ScratchKb kb;
  kb.write(file, text);
  try {
    load_knowledge_base(kb.dir());
  } catch (const KbFormatError& e) {
    return e;
  }
  ADD_FAILURE() << file << " loaded without an error:\n" << text;
  return KbFormatError("", 0, 0, "", "");
}

// Sets an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    archfit::testing::set_env(name, value.c_str());
  }
  ~ScopedEnv() {
    if (old_) {
      archfit::testing::set_env(name_, old_->c_str());
    } else {
      archfit::testing::unset_env(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

}  // namespace

// --- the real data ---------------------------------------------------------------

TEST(KnowledgeBase, ResolvesGpuNamesForgivingly) {
  const auto& kb = real_kb();
  for (const char* query : {"GeForce RTX 5090", "RTX 5090", "5090", "NVIDIA GeForce RTX 5090",
                            "rtx5090", "  geforce   rtx-5090 "}) {
    const auto gpu = kb.resolve_gpu(query);
    EXPECT_EQ(gpu.name, "GeForce RTX 5090") << query;
    EXPECT_EQ(gpu.cc, cc(12, 0)) << query;
  }
  EXPECT_EQ(kb.resolve_gpu("rtx 4090").cc, cc(8, 9));
  EXPECT_EQ(kb.resolve_gpu("B200").cc, cc(10, 0));
  EXPECT_EQ(kb.resolve_gpu("B300").cc, cc(10, 3));
  EXPECT_EQ(kb.resolve_gpu("RTX PRO 6000 Blackwell").cc, cc(12, 0));
  EXPECT_EQ(kb.resolve_gpu("Jetson Thor").cc, cc(11, 0));
  EXPECT_EQ(kb.resolve_gpu("Orin Nano").cc, cc(8, 7));
  EXPECT_EQ(kb.resolve_gpu("T4").cc, cc(7, 5));
  const auto spark = kb.resolve_gpu("DGX Spark");
  EXPECT_EQ(spark.name, "NVIDIA GB10");
  EXPECT_EQ(spark.cc, cc(12, 1));
  EXPECT_EQ(spark.how, ResolvedGpu::How::alias);
  ASSERT_NE(spark.entry, nullptr);
  EXPECT_FALSE(spark.entry->provenance.source.empty());
}

// A check loads everything but errors.yaml, which only explain reads.
TEST(KnowledgeBase, ACheckLoadsEverythingButTheErrorSignatures) {
  const KnowledgeBase& full = real_kb();
  const KnowledgeBase for_check =
      load_knowledge_base(kSourceKb, archfit::kb::KbParts::without_error_signatures);
  EXPECT_FALSE(full.error_signatures().empty());
  EXPECT_TRUE(for_check.error_signatures().empty());
  EXPECT_EQ(for_check.gpus().size(), full.gpus().size());
  EXPECT_EQ(for_check.torch_releases().size(), full.torch_releases().size());
  EXPECT_EQ(for_check.components().size(), full.components().size());
  EXPECT_EQ(for_check.resolve_gpu("RTX 5090").cc, full.resolve_gpu("RTX 5090").cc);
}

TEST(KnowledgeBase, ResolvesCapabilitiesAsWrittenByUsers) {
  const auto& kb = real_kb();
  const auto sm121 = kb.resolve_gpu("sm_121");
  EXPECT_EQ(sm121.cc, cc(12, 1));
  EXPECT_EQ(sm121.how, ResolvedGpu::How::capability);
  EXPECT_EQ(sm121.entry, nullptr);
  EXPECT_EQ(sm121.name, "sm_121");
  EXPECT_EQ(kb.resolve_gpu("12.0").cc, cc(12, 0));
  EXPECT_EQ(kb.resolve_gpu("120").cc, cc(12, 0));
  EXPECT_EQ(kb.resolve_gpu("SM120").cc, cc(12, 0));
  EXPECT_EQ(kb.resolve_gpu("compute_90").cc, cc(9, 0));
  EXPECT_EQ(kb.resolve_gpu("75").cc, cc(7, 5));
}

TEST(KnowledgeBase, MatchesDriverReportedNamesByWholeWordPrefix) {
  const auto& kb = real_kb();
  const auto h100 = kb.resolve_gpu("NVIDIA H100 80GB HBM3");
  EXPECT_EQ(h100.name, "NVIDIA H100");
  EXPECT_EQ(h100.how, ResolvedGpu::How::prefix);
  EXPECT_EQ(kb.resolve_gpu("NVIDIA A100-SXM4-80GB").cc, cc(8, 0));
  EXPECT_EQ(kb.resolve_gpu("NVIDIA GeForce RTX 4090 Laptop GPU").cc, cc(8, 9));
  EXPECT_EQ(kb.resolve_gpu("NVIDIA RTX PRO 6000 Blackwell Server Edition").how,
            ResolvedGpu::How::name);
  EXPECT_EQ(kb.resolve_gpu("NVIDIA L40S").name, "NVIDIA L40S");  // not L40 or L4
  // A prefix must end at a word boundary: an A1000 is not an A100.
  EXPECT_THROW(kb.resolve_gpu("A1000"), UnknownGpuError);
}

TEST(KnowledgeBase, UnknownGpuNameListsTheClosestNames) {
  const auto& kb = real_kb();
  try {
    kb.resolve_gpu("RTX 5900");
    FAIL() << "RTX 5900 resolved";
  } catch (const UnknownGpuError& e) {
    EXPECT_EQ(e.query(), "RTX 5900");
    ASSERT_FALSE(e.suggestions().empty());
    EXPECT_EQ(e.suggestions().front(), "GeForce RTX 5090");
    EXPECT_NE(std::string(e.what()).find("GeForce RTX 5090"), std::string::npos) << e.what();
  }
  EXPECT_THROW(kb.resolve_gpu(""), UnknownGpuError);
  EXPECT_THROW(kb.resolve_gpu("sm_120a"), UnknownGpuError);  // a device has no `a` variant
}

TEST(KnowledgeBase, MapsDriversToPtxIsa) {
  const auto& kb = real_kb();
  EXPECT_EQ(kb.max_ptx_isa_for_driver("570.86"), (PtxIsa{8, 7}));
  EXPECT_EQ(kb.max_ptx_isa_for_driver("570.86.16"), (PtxIsa{8, 7}));
  EXPECT_EQ(kb.max_ptx_isa_for_driver("570.26"), (PtxIsa{8, 7}));
  EXPECT_EQ(kb.max_ptx_isa_for_driver("565.57.01"), (PtxIsa{8, 5}));
  EXPECT_EQ(kb.max_ptx_isa_for_driver("575.51.03"), (PtxIsa{8, 8}));
  EXPECT_EQ(kb.max_ptx_isa_for_driver("580.65.06"), (PtxIsa{9, 0}));
  EXPECT_EQ(kb.max_ptx_isa_for_driver("580.65.05"), (PtxIsa{8, 8}));
  EXPECT_EQ(kb.max_ptx_isa_for_driver("610"), (PtxIsa{9, 1}));  // a lower bound
  EXPECT_EQ(kb.max_ptx_isa_for_driver("450.80.02"), std::nullopt);
  EXPECT_THROW(kb.max_ptx_isa_for_driver("five hundred"), KbError);

  EXPECT_EQ(kb.min_driver_for_ptx_isa({8, 7})->to_string(), "570.26");
  EXPECT_EQ(kb.min_driver_for_ptx_isa({9, 0})->to_string(), "580.65.06");
  EXPECT_EQ(kb.min_driver_for_ptx_isa({8, 6})->to_string(), "570.26");  // 12.7 shipped no driver
  EXPECT_EQ(kb.min_driver_for_ptx_isa({9, 9}), std::nullopt);

  // NVIDIA's minor-version compatibility table, as exact as it is written.
  EXPECT_EQ(kb.cuda_floor_for_major(11)->to_string(), "450.80.02");
  EXPECT_EQ(kb.cuda_floor_for_major(12)->to_string(), "525.60.13");
  EXPECT_EQ(kb.cuda_floor_for_major(13)->to_string(), "580.65.06");
  EXPECT_EQ(kb.cuda_floor_for_major(10), std::nullopt);
}

TEST(KnowledgeBase, LooksUpTorchArchLists) {
  const auto& kb = real_kb();
  const auto* build = kb.torch_build("2.7.0+cu128");
  ASSERT_NE(build, nullptr);
  EXPECT_EQ(build->sass, (std::vector<uint32_t>{75, 80, 86, 90, 100, 120}));
  EXPECT_EQ(build->ptx, (std::vector<uint32_t>{120}));
  EXPECT_EQ(kb.torch_build("2.7.1", "cu128"), build);
  EXPECT_EQ(kb.torch_build("2.7", "cu128"), build);
  EXPECT_EQ(kb.torch_build("2.6.0", "cu128"), nullptr);
  EXPECT_EQ(kb.torch_build("1.13.1", "cu117"), nullptr);
  const auto* cu126 = kb.torch_build("2.11.0+cu126");
  ASSERT_NE(cu126, nullptr);
  EXPECT_EQ(cu126->sass.front(), 50u);
  // Releases are ordered by number, not by text: 2.10 after 2.9.
  const auto& releases = kb.torch_releases();
  ASSERT_GE(releases.size(), 2u);
  const auto at = [&](const char* r) {
    return std::find_if(releases.begin(), releases.end(),
                        [&](const auto& x) { return x.release == r; });
  };
  EXPECT_LT(at("2.9"), at("2.10"));
  const auto* tag = kb.cuda_tag("cu130");
  ASSERT_NE(tag, nullptr);
  EXPECT_EQ(tag->index_url, "https://download.pytorch.org/whl/cu130");
}

// The oldest torch build with an image for `cc`: the first the table lists.
std::optional<archfit::kb::TorchImage> oldest(const archfit::kb::KnowledgeBase& kb,
                                              archfit::kb::ComputeCapability cc) {
  const auto images = kb.torch_images_for(cc);
  if (images.empty()) return std::nullopt;
  return images.front();
}

TEST(KnowledgeBase, ListsEveryTorchBuildForADeviceNewestLast) {
  const auto& kb = real_kb();
  const auto pascal = kb.torch_images_for(cc(6, 1));  // GTX 1080: sm_60 SASS runs on 6.1
  ASSERT_FALSE(pascal.empty());
  const auto& newest = pascal.back();
  EXPECT_EQ(newest.version->version + "+" + newest.tag->tag, "2.14.1+cu126");
  EXPECT_FALSE(newest.on_pypi);  // PyPI's 2.14.1 is cu130, without sm_60
  EXPECT_EQ(newest.arch, 60u);
  for (const auto& image : pascal) EXPECT_NE(image.tag->tag, "cu128") << image.version->version;
  // Each version once per build, oldest first.
  for (size_t i = 1; i < pascal.size(); ++i) {
    EXPECT_FALSE(pascal[i].version == pascal[i - 1].version &&
                 pascal[i].build == pascal[i - 1].build);
  }
}

TEST(KnowledgeBase, KnowsWhichBuildPypiCarriesAndWhatIsPinnedToIt) {
  const auto& kb = real_kb();
  const auto release = [&](const char* r) -> const archfit::kb::TorchRelease& {
    for (const auto& x : kb.torch_releases()) {
      if (x.release == r) return x;
    }
    ADD_FAILURE() << "no release " << r;
    return kb.torch_releases().front();
  };
  // torch/version.py in each PyPI wheel (tests/realworld reads them again).
  EXPECT_EQ(release("2.5").pypi_tag, "cu124");
  EXPECT_EQ(release("2.8").pypi_tag, "cu128");
  EXPECT_EQ(release("2.11").pypi_tag, "cu130");
  EXPECT_EQ(release("2.14").pypi_tag, "cu130");
  EXPECT_EQ(release("2.15").pypi_tag, "cu132");
  const auto& v280 = release("2.8").versions.front();
  EXPECT_EQ(v280.version, "2.8.0");
  ASSERT_EQ(v280.companions.size(), 2u);
  EXPECT_EQ(v280.companions[0].name, "torchvision");
  EXPECT_EQ(v280.companions[0].version, "0.23.0");
  EXPECT_TRUE(v280.companions[0].per_cuda);
  // torchaudio's last release is one build for every CUDA.
  const auto& v2130 = release("2.13").versions.front();
  ASSERT_EQ(v2130.companions.size(), 2u);
  EXPECT_EQ(v2130.companions[1].version, "2.11.1");
  EXPECT_FALSE(v2130.companions[1].per_cuda);
  // The PyPI wheels of the CUDA 13 builds hold no PTX, whatever the matrix says.
  EXPECT_TRUE(kb.torch_build("2.11.0", "cu130")->ptx.empty());
  // 2.15 dropped CUDA 12.6.
  EXPECT_EQ(kb.torch_build("2.15.0", "cu126"), nullptr);

  const auto* xformers = kb.component_for("xformers");
  ASSERT_NE(xformers, nullptr);
  ASSERT_FALSE(xformers->releases.empty());
  EXPECT_EQ(xformers->releases.front().version, "0.0.28.post3");
  EXPECT_EQ(xformers->releases.front().torch, "==2.5.1");
  EXPECT_EQ(xformers->releases.back().torch, ">=2.10");
}

// Which traceback frames name no culprit is data (issue 32): packages.yaml's
// pass_through and hosts, each with a source, read by diagnose's attribution.
TEST(KnowledgeBase, KnowsWhichPackagesOnlyPassCallsOnAndWhichAreHosts) {
  const auto& packages = real_kb().packages();
  EXPECT_TRUE(packages.passes_through("diffusers"));
  EXPECT_TRUE(packages.passes_through("torch"));
  EXPECT_FALSE(packages.passes_through("xformers"));
  EXPECT_FALSE(packages.passes_through("invokeai"));
  EXPECT_TRUE(packages.is_host("invokeai"));
  EXPECT_FALSE(packages.is_host("torch"));
  for (const auto* lists : {&packages.pass_through, &packages.hosts}) {
    ASSERT_FALSE(lists->empty());
    for (const auto& list : *lists) EXPECT_FALSE(list.provenance.source.empty());
  }
}

TEST(KnowledgeBase, KnowsHowPackagesAreReached) {
  const auto& packages = real_kb().packages();
  ASSERT_NE(packages.supplier("nvidia-cufft-cu12"), nullptr);
  EXPECT_TRUE(packages.supplier("nvidia-cufft-cu12")->binary_only);
  EXPECT_EQ(packages.supplier("torch"), nullptr);
  EXPECT_TRUE(packages.is_binary_only("onnxruntime-gpu"));
  EXPECT_TRUE(packages.is_binary_only("nvidia-cublas"));
  // No sdist on PyPI: a rebuild from source cannot be offered (the real-ComfyUI tier).
  EXPECT_TRUE(packages.is_binary_only("comfy-kitchen"));
  EXPECT_FALSE(packages.is_binary_only("xformers"));
  ASSERT_NE(packages.stack_of("torchvision"), nullptr);
  EXPECT_EQ(packages.stack_of("torchvision")->anchor, "torch");
  EXPECT_EQ(packages.stack_of("xformers"), nullptr);
  // Triton's Windows distribution is a member of the PyTorch stack as triton is.
  ASSERT_NE(packages.stack_of("triton-windows"), nullptr);
  EXPECT_EQ(packages.stack_of("triton-windows"), packages.stack_of("triton"));
  // By file name, whatever folder or auditwheel suffix.
  ASSERT_NE(packages.feature_of("nvidia/cusparselt/lib/libcusparseLt.so.0"), nullptr);
  ASSERT_NE(packages.feature_of("torch/lib/libcusparseLt-294d6944.so.0"), nullptr);
  EXPECT_NE(packages.feature_of("nvidia/cufft/lib/libcufftw.so.11"), nullptr);
  EXPECT_EQ(packages.feature_of("nvidia/cufft/lib/libcufft.so.11"), nullptr);
  // By path where the pattern has a folder.
  EXPECT_NE(packages.feature_of("xformers/flash_attn_3/_C.so"), nullptr);
  EXPECT_EQ(packages.feature_of("xformers/_C.so"), nullptr);
  EXPECT_EQ(packages.opened_by("libcudnn.so.9"), (std::vector<std::string>{"libcudnn_*.so.*"}));
  EXPECT_TRUE(packages.opened_by("libcudnn_ops.so.9").empty());
}

TEST(KnowledgeBase, FindsTheOldestTorchWithAnImageForADevice) {
  const auto& kb = real_kb();
  const auto rtx50 = oldest(kb, cc(12, 0));
  ASSERT_TRUE(rtx50);
  EXPECT_EQ(rtx50->version->version + "+" + rtx50->tag->tag, "2.7.0+cu128");
  EXPECT_FALSE(rtx50->via_ptx);
  EXPECT_EQ(rtx50->arch, 120u);
  EXPECT_FALSE(rtx50->on_pypi);                           // PyPI's 2.7.0 is the cu126 build
  EXPECT_EQ(rtx50->min_driver.to_string(), "525.60.13");  // cu128's minor-version floor
  ASSERT_TRUE(rtx50->needed_driver);
  // …but no driver before CUDA 12.8's knows an sm_120 GPU.
  EXPECT_EQ(rtx50->needed_driver->to_string(), "570.26");
  EXPECT_EQ(kb.first_driver_for(cc(12, 0))->to_string(), "570.26");

  // DGX Spark runs the sm_120 cubin (same major, higher minor).
  const auto spark = oldest(kb, cc(12, 1));
  ASSERT_TRUE(spark);
  EXPECT_EQ(spark->version->version, "2.7.0");
  EXPECT_EQ(spark->arch, 120u);

  const auto b300 = oldest(kb, cc(10, 3));
  ASSERT_TRUE(b300);
  EXPECT_EQ(b300->arch, 100u);

  const auto ada = oldest(kb, cc(8, 9));
  ASSERT_TRUE(ada);
  EXPECT_EQ(ada->version->version + "+" + ada->tag->tag, "2.4.0+cu118");
  EXPECT_EQ(ada->arch, 86u);

  // A future 13.0 device: only PTX, which the driver must JIT.
  const auto future = oldest(kb, cc(13, 0));
  ASSERT_TRUE(future);
  EXPECT_TRUE(future->via_ptx);
  EXPECT_EQ(future->version->version + "+" + future->tag->tag, "2.7.0+cu128");
  ASSERT_TRUE(future->needed_driver);
  EXPECT_EQ(future->needed_driver->to_string(), "570.26");
}

TEST(KnowledgeBase, KnowsTheFirstDriverOfEachArchitecture) {
  const auto& kb = real_kb();
  const auto first = [&](const char* gpu) {
    const auto driver = kb.first_driver_for(kb.resolve_gpu(gpu).cc);
    return driver ? driver->to_string() : std::string("none");
  };
  EXPECT_EQ(first("RTX 4090"), "520.61.05");  // CUDA 11.8 brought sm_89
  EXPECT_EQ(first("H100"), "520.61.05");
  EXPECT_EQ(first("RTX 5090"), "570.26");  // CUDA 12.8 brought sm_120
  EXPECT_EQ(first("B200"), "570.26");
  EXPECT_EQ(first("DGX Spark"), "575.51.03");  // CUDA 12.9 brought sm_121
  EXPECT_EQ(first("B300"), "575.51.03");
  EXPECT_EQ(first("A100"), "450.51.05");  // CUDA 11.0.2 GA
  EXPECT_EQ(first("RTX 3090"), "455.23");
  EXPECT_EQ(first("T4"), "410.48");
  EXPECT_EQ(first("V100"), "384.81");
  EXPECT_EQ(first("GTX 1080"), "367.48");
  EXPECT_EQ(first("sm_130"), "none");  // newer than the table: unknown, not guessed

  const auto* orin = kb.architecture(cc(8, 7));
  ASSERT_NE(orin, nullptr);
  EXPECT_EQ(orin->first_cuda, "11.4");
  EXPECT_EQ(orin->platform, archfit::kb::DriverPlatform::jetson);
  EXPECT_EQ(first("Orin"), "none");  // the driver comes with JetPack, not a driver release
  const auto* thor = kb.architecture(cc(11, 0));
  ASSERT_NE(thor, nullptr);
  EXPECT_EQ(thor->first_cuda, "13.0");
  EXPECT_EQ(thor->platform, archfit::kb::DriverPlatform::jetson);
  EXPECT_EQ(thor->provenance.confidence, archfit::kb::Confidence::inferred);
  const auto* ada = kb.architecture(cc(8, 9));
  ASSERT_NE(ada, nullptr);
  EXPECT_EQ(ada->first_cuda, "11.8");
  // A list of sources reads as one, each part kept.
  EXPECT_NE(ada->provenance.source.find("ada-compatibility-guide"), std::string::npos);
  EXPECT_NE(ada->provenance.source.find("cuda-toolkit-release-notes"), std::string::npos);
  EXPECT_TRUE(ada->provenance.file.ends_with("gpus.yaml"));

  // Every GPU the knowledge base names has its architecture's first toolkit.
  for (const auto& gpu : kb.gpus())
    EXPECT_NE(kb.architecture(gpu.cc), nullptr) << gpu.name << " (" << gpu.cc.to_string() << ")";
  const auto& all = kb.architectures();
  EXPECT_TRUE(std::is_sorted(all.begin(), all.end(),
                             [](const auto& a, const auto& b) { return a.cc < b.cc; }));
}

TEST(KnowledgeBase, AdvisesTheDriverThatFirstKnewTheDevice) {
  const auto& kb = real_kb();
  // An RTX 4090 runs cu118's sm_86 cubin, but no driver before CUDA 11.8's knows sm_89.
  const auto ada = oldest(kb, cc(8, 9));
  ASSERT_TRUE(ada && ada->needed_driver);
  EXPECT_EQ(ada->needed_driver->to_string(), "520.61.05");
  // DGX Spark: cu128's sm_120 cubin, on a driver that knows sm_121 (CUDA 12.9).
  const auto spark = oldest(kb, cc(12, 1));
  ASSERT_TRUE(spark && spark->needed_driver);
  EXPECT_EQ(spark->needed_driver->to_string(), "575.51.03");
  // A T4 was known long before cu118: the tag's CUDA 11 floor is what binds.
  const auto turing = oldest(kb, cc(7, 5));
  ASSERT_TRUE(turing && turing->needed_driver);
  EXPECT_EQ(turing->needed_driver->to_string(), "450.80.02");
}

// NVIDIA's toolkit/driver table (CUDA release notes, Table 3) has a Windows
// column: a Windows driver of the same release carries another number, and
// WSL2's driver is the Windows one.
TEST(KnowledgeBase, KnowsWindowsDriverNumbers) {
  const auto& kb = real_kb();
  const auto windows = archfit::kb::DriverFamily::windows_driver;
  const auto linux_ = archfit::kb::DriverFamily::linux_driver;
  EXPECT_EQ(kb.toolkit_driver("12.8", windows)->to_string(), "570.65");
  EXPECT_EQ(kb.toolkit_driver("12.8", linux_)->to_string(), "570.26");
  EXPECT_EQ(kb.toolkit_driver("12.9", windows)->to_string(), "576.02");
  EXPECT_EQ(kb.toolkit_driver("11.8", windows)->to_string(), "520.06");
  EXPECT_EQ(kb.toolkit_driver("12.7", windows), std::nullopt);  // never released
  // CUDA 13.x has no published Windows number: the branch stands for it.
  EXPECT_EQ(kb.toolkit_driver("13.0", windows)->to_string(), "580");
  EXPECT_EQ(kb.cuda_floor_for_major(12, windows)->to_string(), "528.33");
  EXPECT_EQ(kb.cuda_floor_for_major(11, windows)->to_string(), "452.39");
  EXPECT_EQ(kb.cuda_floor_for_major(13, windows)->to_string(), "580");
  EXPECT_EQ(kb.first_driver_for(kb.resolve_gpu("RTX 5090").cc, windows)->to_string(), "570.65");
  EXPECT_EQ(kb.first_driver_for(kb.resolve_gpu("RTX 4090").cc, windows)->to_string(), "520.06");
  EXPECT_EQ(kb.first_driver_for(kb.resolve_gpu("Orin").cc, windows), std::nullopt);  // JetPack
  // 570.26 is CUDA 12.8 on Linux; on Windows it is older than 12.8's 570.65.
  EXPECT_EQ(kb.max_ptx_isa_for_driver("570.26", windows), (PtxIsa{8, 5}));
  EXPECT_EQ(kb.max_ptx_isa_for_driver("572.16", windows), (PtxIsa{8, 7}));
  EXPECT_EQ(kb.max_ptx_isa_for_driver("581.57", windows), (PtxIsa{9, 0}));
  EXPECT_EQ(kb.min_driver_for_ptx_isa({8, 7}, windows)->to_string(), "570.65");
  EXPECT_EQ(kb.min_driver_for_ptx_isa({8, 6}, windows)->to_string(), "570.65");  // 12.7: none
  // Each row's Linux number is the one the other files give its release.
  for (const auto& release : kb.toolkit_drivers()) {
    for (const auto& isa : kb.ptx_isa()) {
      if (isa.cuda == release.cuda && isa.min_driver)
        EXPECT_EQ(*isa.min_driver, release.linux_driver) << release.cuda;
    }
  }
}

TEST(KnowledgeBase, BoundsADriverByTheCudaReleaseItReports) {
  const auto& kb = real_kb();
  const auto windows = archfit::kb::DriverFamily::windows_driver;
  const auto linux_ = archfit::kb::DriverFamily::linux_driver;
  EXPECT_EQ(kb.driver_reporting_cuda("12.8", windows)->to_string(), "570.65");
  EXPECT_EQ(kb.driver_reporting_cuda("12.8", linux_)->to_string(), "570.26");
  // 12.7 was never released: a driver reporting it is at least 12.6's.
  EXPECT_EQ(kb.driver_reporting_cuda("12.7", windows)->to_string(), "560.76");
  EXPECT_EQ(kb.driver_reporting_cuda("13.1", windows)->to_string(), "590");
  EXPECT_EQ(kb.driver_reporting_cuda("7.5", windows), std::nullopt);  // older than the table
  EXPECT_EQ(kb.driver_reporting_cuda("twelve", windows), std::nullopt);
}

TEST(KnowledgeBase, WindowsWheelsOfCuda13CarryNoPtx) {
  const auto& kb = real_kb();
  const archfit::kb::TorchPlatform windows{true, archfit::kb::DriverFamily::windows_driver};
  const auto tags = [&](ComputeCapability device, archfit::kb::TorchPlatform platform) {
    std::set<std::string> out;
    for (const auto& image : kb.torch_images_for(device, platform)) out.insert(image.tag->tag);
    return out;
  };
  // A GPU newer than every cubin runs only by PTX: cu13x's is Linux-only.
  const auto future = cc(13, 0);
  EXPECT_TRUE(tags(future, {}).contains("cu130"));
  EXPECT_FALSE(tags(future, windows).contains("cu130"));
  EXPECT_FALSE(tags(future, windows).contains("cu132"));
  EXPECT_TRUE(tags(future, windows).contains("cu128"));  // 12.x Windows wheels keep their PTX
  // Windows drivers: an RTX 5090 needs 12.8's Windows driver for cu128.
  for (const auto& image : kb.torch_images_for(kb.resolve_gpu("RTX 5090").cc, windows)) {
    if (image.tag->tag != "cu128") continue;
    ASSERT_TRUE(image.needed_driver);
    EXPECT_EQ(image.needed_driver->to_string(), "570.65");
  }
}

TEST(KnowledgeBase, EveryEntryNamesItsSource) {
  const auto& kb = real_kb();
  std::vector<const archfit::kb::Provenance*> all;
  for (const auto& x : kb.gpus()) all.push_back(&x.provenance);
  for (const auto& x : kb.architectures()) all.push_back(&x.provenance);
  for (const auto& x : kb.ptx_isa()) all.push_back(&x.provenance);
  for (const auto& x : kb.cuda_floors()) all.push_back(&x.provenance);
  for (const auto& x : kb.cuda_tags()) all.push_back(&x.provenance);
  for (const auto& r : kb.torch_releases()) {
    for (const auto& b : r.builds) all.push_back(&b.provenance);
  }
  for (const auto& c : kb.components()) {
    all.push_back(&c.provenance);
    for (const auto& f : c.fixes) all.push_back(&f.provenance);
  }
  ASSERT_GT(all.size(), 100u);
  for (const auto* p : all) {
    EXPECT_FALSE(p->source.empty()) << p->file << ":" << p->line;
    EXPECT_GT(p->line, 0);
    if (p->confidence == archfit::kb::Confidence::inferred) {
      EXPECT_FALSE(p->basis.empty()) << p->file << ":" << p->line;
    }
  }
}

TEST(KbTypes, ParsesDriverVersionsAndKeepsTheirSpelling) {
  const auto v = parse_driver_version("580.65.06");
  ASSERT_TRUE(v);
  EXPECT_EQ(v->to_string(), "580.65.06");
  EXPECT_LT(*parse_driver_version("570.26"), *parse_driver_version("570.124.06"));
  EXPECT_EQ(*parse_driver_version("570"), *parse_driver_version("570.0.0"));
  EXPECT_FALSE(parse_driver_version("570.86.16.1"));
  EXPECT_FALSE(parse_driver_version("570..1"));
  EXPECT_FALSE(parse_driver_version(""));
}

// --- malformed files -------------------------------------------------------------

TEST(KbLoader, MissingFieldNamesFileLineAndField) {
  const auto e = format_error("gpus.yaml",
                              "schema: archfit.kb.gpus/1\n"
                              "gpus:\n"
                              "  - name: GPU A\n"
                              "    cc: \"8.0\"\n"
                              "    source: test\n"
                              "  - name: GPU B\n"
                              "    source: test\n");
  EXPECT_TRUE(e.file().ends_with("gpus.yaml")) << e.file();
  EXPECT_EQ(e.line(), 6);
  EXPECT_EQ(e.field(), "gpus[1].cc");
  const std::string what = e.what();
  EXPECT_NE(what.find("gpus.yaml:6:"), std::string::npos) << what;
  EXPECT_NE(what.find("gpus[1].cc"), std::string::npos) << what;
  EXPECT_NE(what.find("missing"), std::string::npos) << what;
}

TEST(KbLoader, WrongTypeNamesFileLineAndField) {
  const auto aliases = format_error("gpus.yaml",
                                    "schema: archfit.kb.gpus/1\n"
                                    "gpus:\n"
                                    "  - name: GPU A\n"
                                    "    cc: \"8.0\"\n"
                                    "    aliases: {short: A}\n"
                                    "    source: test\n");
  EXPECT_EQ(aliases.line(), 5);
  EXPECT_EQ(aliases.field(), "gpus[0].aliases");
  EXPECT_NE(aliases.problem().find("expected a list"), std::string::npos) << aliases.what();

  const auto sass =
      format_error("torch.yaml",
                   "schema: archfit.kb.torch/1\n"
                   "cuda_tags:\n"
                   "  - {tag: cu128, cuda: \"12.8\", index_url: \"https://x/cu128\", source: t}\n"
                   "releases:\n"
                   "  - release: \"2.7\"\n"
                   "    versions: [\"2.7.0\"]\n"
                   "    builds:\n"
                   "      - tag: cu128\n"
                   "        sass: [75, eighty]\n"
                   "        source: t\n");
  EXPECT_TRUE(sass.file().ends_with("torch.yaml"));
  EXPECT_EQ(sass.line(), 9);
  EXPECT_EQ(sass.field(), "releases[0].builds[0].sass[1]");
}

TEST(KbLoader, BadComputeCapabilityNamesFileLineAndField) {
  for (const char* bad : {"twelve", "120", "12.10", "sm_120"}) {
    const auto e = format_error("gpus.yaml", std::string("schema: archfit.kb.gpus/1\n"
                                                         "gpus:\n"
                                                         "  - name: GPU A\n"
                                                         "    source: test\n"
                                                         "    cc: \"") +
                                                 bad + "\"\n");
    EXPECT_EQ(e.line(), 5) << bad;
    EXPECT_EQ(e.field(), "gpus[0].cc") << bad;
    EXPECT_NE(e.problem().find(bad), std::string::npos) << e.what();
  }
}

TEST(KbLoader, DuplicateGpuNameNamesFileLineAndField) {
  const auto e = format_error("gpus.yaml",
                              "schema: archfit.kb.gpus/1\n"
                              "gpus:\n"
                              "  - {name: GeForce RTX 5090, cc: \"12.0\", source: t}\n"
                              "  - name: Other\n"
                              "    cc: \"8.9\"\n"
                              "    aliases: [Other GPU, NVIDIA rtx-5090]\n"
                              "    source: t\n");
  EXPECT_EQ(e.line(), 6);
  EXPECT_EQ(e.field(), "gpus[1].aliases[1]");
  EXPECT_NE(e.problem().find("duplicate"), std::string::npos) << e.what();
  EXPECT_NE(e.problem().find("GeForce RTX 5090"), std::string::npos) << e.what();
}

TEST(KbLoader, RejectsOtherInconsistencies) {
  // An inferred entry must say from what.
  EXPECT_EQ(format_error("gpus.yaml",
                         "schema: archfit.kb.gpus/1\ngpus:\n"
                         "  - {name: A, cc: \"8.0\", source: t, confidence: inferred}\n")
                .field(),
            "gpus[0].basis");
  // An alias that reads as a capability would hide it.
  EXPECT_EQ(format_error("gpus.yaml",
                         "schema: archfit.kb.gpus/1\ngpus:\n"
                         "  - {name: A, cc: \"8.0\", aliases: [\"80\"], source: t}\n")
                .field(),
            "gpus[0].aliases[0]");
  // A build names a tag that torch.yaml does not define.
  const auto tag = format_error("torch.yaml",
                                "schema: archfit.kb.torch/1\ncuda_tags: []\nreleases:\n"
                                "  - release: \"2.7\"\n    versions: [\"2.7.0\"]\n    builds:\n"
                                "      - {tag: cu999, sass: [75], source: t}\n");
  EXPECT_EQ(tag.line(), 7);
  EXPECT_EQ(tag.field(), "releases[0].builds[0].tag");
  // A newer PTX ISA with an older driver is a typo.
  const auto driver =
      format_error("ptx_isa.yaml",
                   "schema: archfit.kb.ptx_isa/1\nptx_isa:\n"
                   "  - {isa: \"8.0\", cuda: \"12.0\", min_driver: \"525.60.13\", source: t}\n"
                   "  - {isa: \"8.1\", cuda: \"12.1\", min_driver: \"503.30.02\", source: t}\n"
                   "cuda_major_floors: []\n");
  EXPECT_EQ(driver.line(), 4);
  EXPECT_NE(driver.problem().find("503.30.02"), std::string::npos) << driver.what();
  // The wrong schema, and broken YAML.
  EXPECT_EQ(format_error("gpus.yaml", "schema: archfit.kb.gpus/2\ngpus: []\n").field(), "schema");
  const auto syntax =
      format_error("gpus.yaml", "schema: archfit.kb.gpus/1\ngpus:\n  - [unclosed\n");
  EXPECT_GT(syntax.line(), 2);
  EXPECT_NE(std::string(syntax.what()).find("YAML syntax"), std::string::npos);
}

TEST(KbLoader, ErrorFixStepsAreTextOrStepsWithAConditionItKnows) {
  const std::string signature =
      "schema: archfit.kb.errors/1\nsignatures:\n"
      "  - category: no-kernel-image\n    patterns: [x]\n    title: t\n    explanation: e\n    "
      "source: t\n"
      "    fix:\n";
  ScratchKb kb;
  kb.write("errors.yaml", signature +
                              "      - plain\n"
                              "      - {step: for torch, about: torch}\n"
                              "      - {step: run a check, unless: checked}\n");
  const auto loaded = load_knowledge_base(kb.dir());
  ASSERT_EQ(loaded.error_signatures().size(), 1u);
  const auto& fix = loaded.error_signatures()[0].fix;
  ASSERT_EQ(fix.size(), 3u);
  EXPECT_EQ(fix[0].text, "plain");
  EXPECT_EQ(fix[1].about, "torch");
  EXPECT_FALSE(fix[1].unless_checked);
  EXPECT_TRUE(fix[2].unless_checked);
  const auto unknown =
      format_error("errors.yaml", signature + "      - {step: s, unless: rainy}\n");
  EXPECT_EQ(unknown.field(), "signatures[0].fix[0].unless");
  EXPECT_NE(unknown.problem().find("rainy"), std::string::npos);
  EXPECT_EQ(format_error("errors.yaml", signature + "      - {about: torch}\n").field(),
            "signatures[0].fix[0].step");
}

// The error of a gpus.yaml with one GPU and these `architectures` entries,
// the first of them on line 5.
KbFormatError architecture_error(const std::string& entries) {
  return format_error("gpus.yaml",
                      "schema: archfit.kb.gpus/1\n"
                      "gpus:\n"
                      "  - {name: GPU A, cc: \"8.9\", source: t}\n"
                      "architectures:\n" +
                          entries);
}

TEST(KbLoader, MalformedArchitectureNamesFileLineAndField) {
  const auto driver = architecture_error(
      "  - cc: \"8.9\"\n"
      "    first_cuda: \"11.8\"\n"
      "    min_driver: \"five-twenty\"\n"
      "    source: t\n");
  EXPECT_TRUE(driver.file().ends_with("gpus.yaml")) << driver.file();
  EXPECT_EQ(driver.line(), 7);
  EXPECT_EQ(driver.field(), "architectures[0].min_driver");
  EXPECT_NE(std::string(driver.what()).find("gpus.yaml:7:"), std::string::npos) << driver.what();
  EXPECT_NE(driver.problem().find("five-twenty"), std::string::npos) << driver.what();

  const auto cuda = architecture_error(
      "  - {cc: \"8.9\", first_cuda: \"11\", min_driver: \"520.61.05\", source: t}\n");
  EXPECT_EQ(cuda.line(), 5);
  EXPECT_EQ(cuda.field(), "architectures[0].first_cuda");
  // A standard entry needs its driver; only a Jetson module may leave it out.
  EXPECT_EQ(architecture_error("  - {cc: \"8.9\", first_cuda: \"11.8\", source: t}\n").field(),
            "architectures[0].min_driver");
  EXPECT_EQ(
      architecture_error("  - {cc: \"8.7\", first_cuda: \"11.4\", platform: tegra, source: t}\n")
          .field(),
      "architectures[0].platform");
  EXPECT_EQ(architecture_error("  - {cc: \"8.9\", first_cuda: \"11.8\", min_driver: \"520.61.05\", "
                               "source: []}\n")
                .field(),
            "architectures[0].source");
  const auto twice = architecture_error(
      "  - {cc: \"8.9\", first_cuda: \"11.8\", min_driver: \"520.61.05\", source: t}\n"
      "  - {cc: \"8.9\", first_cuda: \"12.0\", min_driver: \"525.60.13\", source: t}\n");
  EXPECT_EQ(twice.line(), 6);
  EXPECT_EQ(twice.field(), "architectures[1].cc");
}

TEST(KbLoader, ArchitectureDriversAgreeWithTheOtherFiles) {
  // ptx_isa.yaml and torch.yaml say CUDA 12.8 is 570.26.
  const auto other = architecture_error(
      "  - {cc: \"12.0\", first_cuda: \"12.8\", min_driver: \"570.62\", source: t}\n");
  EXPECT_EQ(other.line(), 5);
  EXPECT_EQ(other.field(), "architectures[0].min_driver");
  EXPECT_NE(other.problem().find("570.26"), std::string::npos) << other.what();
  // A later toolkit with an older driver is a typo.
  const auto older = architecture_error(
      "  - {cc: \"8.6\", first_cuda: \"11.1\", min_driver: \"455.23\", source: t}\n"
      "  - {cc: \"8.0\", first_cuda: \"11.0\", min_driver: \"465.51.05\", source: t}\n");
  EXPECT_EQ(older.line(), 5);
  EXPECT_NE(older.problem().find("455.23"), std::string::npos) << older.what();
  // Without the list a knowledge base still loads; it then knows no first drivers.
  ScratchKb scratch;
  scratch.write("gpus.yaml",
                "schema: archfit.kb.gpus/1\ngpus:\n"
                "  - {name: GPU A, cc: \"8.9\", source: t}\n");
  const auto kb = load_knowledge_base(scratch.dir());
  EXPECT_TRUE(kb.architectures().empty());
  EXPECT_EQ(kb.first_driver_for(cc(8, 9)), std::nullopt);
}

TEST(KbLoader, DriverTableAgreesWithTheOtherFilesAndRunsInOrder) {
  const auto drivers = [](const std::string& rows) {
    return format_error("drivers.yaml", "schema: archfit.kb.drivers/1\ntoolkit_drivers:\n" + rows +
                                            "cuda_major_floors: []\n");
  };
  // ptx_isa.yaml says CUDA 12.8 is 570.26 on Linux.
  const auto other =
      drivers("  - {cuda: \"12.8\", linux: \"570.62\", windows: \"570.65\", source: t}\n");
  EXPECT_EQ(other.line(), 3);
  EXPECT_EQ(other.field(), "toolkit_drivers[0].linux");
  EXPECT_NE(other.problem().find("570.26"), std::string::npos) << other.what();
  // A later release with an older Windows driver is a typo.
  const auto older = drivers(
      "  - {cuda: \"12.6\", linux: \"560.28.03\", windows: \"560.76\", source: t}\n"
      "  - {cuda: \"12.8\", linux: \"570.26\", windows: \"507.65\", source: t}\n");
  EXPECT_EQ(older.field(), "toolkit_drivers[1].windows");
  EXPECT_NE(older.problem().find("507.65"), std::string::npos) << older.what();
  const auto order = drivers(
      "  - {cuda: \"12.8\", linux: \"570.26\", windows: \"570.65\", source: t}\n"
      "  - {cuda: \"12.6\", linux: \"560.28.03\", windows: \"560.76\", source: t}\n");
  EXPECT_NE(order.problem().find("out of order"), std::string::npos) << order.what();
  EXPECT_EQ(drivers("  - {cuda: \"12.8\", linux: \"570.26\", source: t}\n").field(),
            "toolkit_drivers[0].windows");
  // A floor's Linux number is ptx_isa.yaml's.
  const auto floor =
      format_error("drivers.yaml",
                   "schema: archfit.kb.drivers/1\ntoolkit_drivers: []\ncuda_major_floors:\n"
                   "  - {cuda_major: 12, linux: \"525.60.31\", windows: \"528.33\", source: t}\n");
  EXPECT_EQ(floor.field(), "cuda_major_floors[0].linux");
  // windows_ptx is true or false.
  EXPECT_EQ(format_error("torch.yaml",
                         "schema: archfit.kb.torch/1\ncuda_tags:\n"
                         "  - {tag: cu128, cuda: \"12.8\", index_url: \"https://x/cu128\", "
                         "windows_ptx: sometimes, source: t}\nreleases: []\n")
                .field(),
            "cuda_tags[0].windows_ptx");
}

TEST(KbLoader, MissingFileIsAnErrorNamingIt) {
  ScratchKb kb;
  fs::remove(kb.dir() / "torch.yaml");
  try {
    load_knowledge_base(kb.dir());
    FAIL() << "loaded without torch.yaml";
  } catch (const KbError& e) {
    EXPECT_NE(std::string(e.what()).find("torch.yaml"), std::string::npos) << e.what();
  }
}

// --- where the knowledge base is -------------------------------------------------

TEST(KbDir, EnvironmentOverridesTheBuiltInDirectory) {
  ScratchKb scratch;
  scratch.write("gpus.yaml",
                "schema: archfit.kb.gpus/1\ngpus:\n"
                "  - {name: Test GPU 9000, cc: \"9.9\", source: kb_test}\n");
  {
    const auto dir = archfit::kb::resolve_kb_dir(std::nullopt, scratch.dir());
    EXPECT_EQ(dir, scratch.dir());
    const auto kb = load_knowledge_base(dir);
    EXPECT_EQ(kb.resolve_gpu("Test GPU 9000").cc, cc(9, 9));
    EXPECT_THROW(kb.resolve_gpu("RTX 5090"), UnknownGpuError);
    // An explicit --kb beats the environment.
    EXPECT_TRUE(fs::equivalent(archfit::kb::resolve_kb_dir(kSourceKb, scratch.dir()), kSourceKb));
  }
  try {
    archfit::kb::resolve_kb_dir(std::nullopt, scratch.dir() / "nowhere");
    ADD_FAILURE() << "a folder without gpus.yaml was taken";
  } catch (const KbError& error) {
    EXPECT_NE(
        std::string(error.what()).find("ARCHFIT_KB_DIR=" + (scratch.dir() / "nowhere").string()),
        std::string::npos)
        << error.what();
  }
  EXPECT_THROW(archfit::kb::resolve_kb_dir(scratch.dir() / "nowhere"), KbError);
}

TEST(KbDir, FindsTheSourceTreeWithoutAnOverride) {
  // The kb module reads no variable itself: this one is not heard.
  ScopedEnv env("ARCHFIT_KB_DIR", "/nowhere");
  const auto dir = archfit::kb::resolve_kb_dir();
  EXPECT_TRUE(fs::equivalent(dir, kSourceKb)) << dir;
}

TEST(KnowledgeBase, GivesComponentRecipesForADevice) {
  const auto& kb = real_kb();
  const auto xformers = kb.component_advice("xformers", cc(12, 0));
  ASSERT_TRUE(xformers);
  ASSERT_EQ(xformers->fixes.size(), 1u);
  ASSERT_FALSE(xformers->commands.empty());
  EXPECT_NE(xformers->commands[0].find("TORCH_CUDA_ARCH_LIST=\"12.0\""), std::string::npos)
      << xformers->commands[0];
  EXPECT_EQ(xformers->commands[0].find("{arch_list}"), std::string::npos);
  // An Ada card gets no Blackwell fix, but still the source build.
  const auto ada = kb.component_advice("xformers", cc(8, 9));
  ASSERT_TRUE(ada);
  EXPECT_TRUE(ada->fixes.empty());
  EXPECT_NE(ada->rebuild_command.find("\"8.9\""), std::string::npos) << ada->rebuild_command;
  EXPECT_EQ(kb.component_advice("flash_attn", cc(12, 0))->component->name, "flash-attn");
  EXPECT_FALSE(kb.component_advice("numpy", cc(12, 0)));
  // bitsandbytes keeps one library per CUDA release, and says which variable picks another.
  ASSERT_TRUE(kb.component_for("bitsandbytes"));
  EXPECT_EQ(kb.component_for("bitsandbytes")->library_per_cuda, "libbitsandbytes_cuda{cuda}");
  EXPECT_EQ(kb.component_for("bitsandbytes")->cuda_override_env, "BNB_CUDA_VERSION");
}

TEST(KbLoader, ALibraryPerCudaPatternNeedsItsPlaceholderOnce) {
  const auto error = format_error("components.yaml",
                                  "schema: archfit.kb.components/1\ncomponents:\n"
                                  "  - {name: bnb, distributions: [bnb], rebuild: x,\n"
                                  "     library_per_cuda: libbnb_cuda, source: t}\n");
  EXPECT_EQ(error.field(), "components[0].library_per_cuda");
  EXPECT_NE(error.problem().find("{cuda} exactly once"), std::string::npos) << error.what();
}

TEST(KbLoader, ErrorPatternsNameTheirLibraryAndMessageFactsTheirForm) {
  const std::string head =
      "schema: archfit.kb.errors/1\nsignatures:\n"
      "  - category: library-arch-mismatch\n    patterns:\n"
      "      - plain relayed text\n"
      "      - {text: 'No operator found', library: xformers, versions: '0.0.16-current', "
      "source: dispatch.py}\n"
      "    title: t\n    explanation: e\n    source: s\n    fix: [f]\n";
  ScratchKb kb;
  kb.write("errors.yaml", head +
                              "gpu_arch:\n  - {pattern: 'capability \\(([0-9]+), ([0-9])\\)', "
                              "form: tuple}\n"
                              "gpu_name:\n  - '(NVIDIA [^\\n]*?) with'\n");
  const auto loaded = load_knowledge_base(kb.dir());
  const auto& origins = loaded.error_signatures()[0].origins;
  ASSERT_EQ(origins.size(), 2u);
  EXPECT_EQ(origins[0].library, "");
  EXPECT_EQ(origins[1].library, "xformers");
  EXPECT_EQ(origins[1].versions, "0.0.16-current");
  ASSERT_EQ(loaded.gpu_arch_patterns().size(), 1u);
  EXPECT_EQ(loaded.gpu_name_patterns().size(), 1u);
  // A form it does not know, or a group count the form does not have, names the entry.
  const auto form = format_error("errors.yaml", head +
                                                    "gpu_arch:\n  - {pattern: 'sm_([0-9]+)', "
                                                    "form: hex}\n");
  EXPECT_EQ(form.field(), "gpu_arch[0].form");
  EXPECT_NE(form.problem().find("hex"), std::string::npos);
  EXPECT_EQ(format_error("errors.yaml", head + "built_for:\n  - {pattern: 'sm_([0-9]+)', form: "
                                               "range, library: torch, source: s}\n")
                .field(),
            "built_for[0].pattern");
  // A library's message without its source is refused.
  EXPECT_EQ(format_error("errors.yaml",
                         "schema: archfit.kb.errors/1\nsignatures:\n"
                         "  - category: no-kernel-image\n    patterns:\n"
                         "      - {text: x, library: torch}\n"
                         "    title: t\n    explanation: e\n    source: s\n    fix: [f]\n")
                .field(),
            "signatures[0].patterns[0].source");
}

// The error categories are one table (issue 32), as the verdicts are: each
// once, read back from its name, and errors.yaml uses nothing else; the
// JSON reference lists exactly these.
TEST(ErrorCategories, OneTableHoldsEachCategoryOnceAndTheDocsAndKnowledgeBaseUseIt) {
  using archfit::kb::ErrorCategory;
  const auto table = archfit::kb::error_category_table();
  ASSERT_EQ(table.front().category, ErrorCategory::not_recognised);
  std::set<std::string_view> names;
  for (const auto& facts : table) {
    EXPECT_TRUE(names.insert(facts.name).second) << facts.name;
    EXPECT_EQ(archfit::kb::to_string(facts.category), facts.name);
    EXPECT_EQ(archfit::kb::error_category_from_string(facts.name), facts.category);
    EXPECT_FALSE(facts.meaning.empty()) << facts.name;
  }
  EXPECT_FALSE(archfit::kb::error_category_from_string("no-such-category"));
  EXPECT_TRUE(archfit::kb::is_about_architecture(ErrorCategory::invalid_device_function));
  EXPECT_FALSE(archfit::kb::is_about_architecture(ErrorCategory::out_of_memory));
  std::set<ErrorCategory> used;
  for (const auto& signature : real_kb().error_signatures()) {
    EXPECT_NE(signature.category, ErrorCategory::not_recognised);
    used.insert(signature.category);
  }
  EXPECT_EQ(used.size(), table.size() - 1) << "a category no errors.yaml signature gives";
  std::ifstream reference(fs::path(__FILE__).parent_path() / "../../docs/diagnosis-json.md");
  const std::string text((std::istreambuf_iterator<char>(reference)), {});
  for (const auto& facts : table)
    EXPECT_NE(text.find(std::string(facts.name)), std::string::npos) << facts.name;
}
