// jit/nvrtc: discovery, loading, compiling and target planning, against the
// real NVRTC of the toolkit this was built with (docs/design.md, decision 8).
#include "jit/nvrtc/nvrtc.hpp"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <link.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <future>
#include <sstream>
#include <thread>

#include "binary/scanner.hpp"
#include "jit/nvrtc/cuda_headers.hpp"
#include "jit/nvrtc/nvrtc_discovery.hpp"
#include "jit/nvrtc/target_plan.hpp"
#include "kb/knowledge_base.hpp"
#include "saved_env.hpp"

namespace fs = std::filesystem;
using archfit::compat::ComputeCapability;
using namespace archfit::jit;

namespace {

const fs::path kKernelDir = ARCHFIT_KERNELS_DIR;
const fs::path kToolkit = fs::path(ARCHFIT_CUDA_LIB_DIR).parent_path();
const fs::path kSourceKb = fs::path(__FILE__).parent_path() / "../../sdk/data/kb";

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// Only the toolkit this was built with.
NvrtcSearch toolkit_only() {
  NvrtcSearch search;
  search.default_toolkit = kToolkit;
  return search;
}

// The toolkit's NVRTC, loaded once per process; the test skips without one.
const Nvrtc* toolkit_nvrtc() {
  static const std::optional<Nvrtc> nvrtc = []() -> std::optional<Nvrtc> {
    try {
      return Nvrtc::discover(toolkit_only());
    } catch (const NvrtcError&) {
      return std::nullopt;
    }
  }();
  return nvrtc ? &*nvrtc : nullptr;
}

#define REQUIRE_NVRTC(name)                                                                   \
  const Nvrtc* name##_ptr = toolkit_nvrtc();                                                  \
  if (!name##_ptr) GTEST_SKIP() << "no libnvrtc under " << kToolkit << "/lib64 to test with"; \
  const Nvrtc& name = *name##_ptr

// The file a library of this soname is loaded from in this process.
fs::path loaded_from(const std::string& soname) {
  void* handle = ::dlopen(soname.c_str(), RTLD_LAZY | RTLD_NOLOAD);
  if (!handle) return {};
  link_map* map = nullptr;
  fs::path path;
  if (::dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map) path = map->l_name;
  ::dlclose(handle);
  return path;
}

bool contains(std::span<const std::byte> bytes, std::string_view text) {
  const auto* begin = reinterpret_cast<const char*>(bytes.data());
  return std::string_view(begin, bytes.size()).find(text) != std::string_view::npos;
}

CompileRequest rmsnorm_request(const std::string& target) {
  CompileRequest request;
  request.source = read_text(kKernelDir / "rmsnorm.cu");
  request.source_name = "rmsnorm.cu";
  request.target = target;
  return request;
}

// A scratch directory tree, removed at the end of the test.
struct Tree {
  Tree() {
    root = fs::temp_directory_path() / ("archfit_nvrtc_" + std::to_string(::getpid()));
    fs::remove_all(root);
    fs::create_directories(root);
  }
  ~Tree() { fs::remove_all(root); }
  fs::path text(const std::string& relative, const std::string& content = "not a library\n") {
    fs::create_directories((root / relative).parent_path());
    std::ofstream(root / relative) << content;
    return root / relative;
  }
  fs::path link(const std::string& relative, const fs::path& target) {
    fs::create_directories((root / relative).parent_path());
    fs::create_symlink(target, root / relative);
    return root / relative;
  }
  fs::path dir(const std::string& relative) {
    fs::create_directories(root / relative);
    return root / relative;
  }
  fs::path root;
};

fs::path real_libnvrtc() {
  const Nvrtc* nvrtc = toolkit_nvrtc();
  return nvrtc ? fs::canonical(nvrtc->info().path) : fs::path();
}

std::vector<std::string> origins(const std::vector<NvrtcCandidate>& found) {
  std::vector<std::string> out;
  for (const auto& candidate : found) out.push_back(candidate.origin);
  return out;
}

}  // namespace

// --- loading ------------------------------------------------------------------

TEST(NvrtcLoad, ReportsVersionBuildPathArchsAndHeaders) {
  REQUIRE_NVRTC(nvrtc);
  const NvrtcInfo& info = nvrtc.info();
  EXPECT_GE(info.version.major, 12);
  EXPECT_TRUE(fs::exists(info.path));
  EXPECT_EQ(info.origin, kToolkit.string());
  // The precise release: three parts, agreeing with nvrtcVersion.
  EXPECT_TRUE(nvrtc.build().starts_with(info.version.to_string() + "."))
      << nvrtc.build() << " from " << nvrtc.build_source();
  EXPECT_EQ(std::count(nvrtc.build().begin(), nvrtc.build().end(), '.'), 2) << nvrtc.build();
  EXPECT_NE(nvrtc.describe().find(nvrtc.build()), std::string::npos) << nvrtc.describe();
  EXPECT_FALSE(info.supported_archs.empty());
  EXPECT_TRUE(std::is_sorted(info.supported_archs.begin(), info.supported_archs.end()));
  ASSERT_FALSE(info.include_dirs.empty()) << "the toolkit's include/ holds cuda_fp16.h";
  EXPECT_TRUE(fs::exists(info.include_dirs.front() / "cuda_fp16.h"));
  EXPECT_TRUE(info.skipped.empty());
}

TEST(NvrtcLoad, BuiltinsComeFromBesideTheLibrary) {
  REQUIRE_NVRTC(nvrtc);
  const NvrtcInfo& info = nvrtc.info();
  ASSERT_FALSE(info.builtins.empty()) << (info.warnings.empty() ? "" : info.warnings.front());
  EXPECT_EQ(fs::canonical(info.builtins).parent_path(), fs::canonical(info.path).parent_path());
  CompileRequest request;
  request.source = "extern \"C\" __global__ void k(int* x) { *x = 1; }";
  request.target = "compute_" + std::to_string(info.supported_archs.back());
  nvrtc.compile(request);
  // What NVRTC's own dlopen("libnvrtc-builtins.so.M.m") resolved to.
  const fs::path used = loaded_from("libnvrtc-builtins.so." + info.version.to_string());
  ASSERT_FALSE(used.empty());
  EXPECT_TRUE(fs::equivalent(used, info.builtins)) << used;
}

TEST(NvrtcLoad, AFileThatIsNotALibraryIsSkippedWithAReason) {
  Tree tree;
  const fs::path fake = tree.text("only/libnvrtc.so.12");
  NvrtcSearch search;
  search.default_toolkit.clear();
  search.ld_library_path = {fake.parent_path()};
  try {
    Nvrtc::discover(search);
    FAIL() << "a text file loaded as NVRTC";
  } catch (const NvrtcError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find(fake.string() + " could not be loaded"), std::string::npos) << message;
    EXPECT_NE(message.find("pip install nvidia-cuda-nvrtc"), std::string::npos) << message;
  }

  // Ranked above a real one (a newer version), it is passed over with its reason.
  if (real_libnvrtc().empty()) GTEST_SKIP() << "no real libnvrtc to fall back to";
  const fs::path newer = tree.text("archfit/libnvrtc.so.99");
  search.archfit_nvrtc = newer.parent_path();
  search.default_toolkit = kToolkit;
  const Nvrtc nvrtc = Nvrtc::discover(search);
  EXPECT_TRUE(fs::equivalent(nvrtc.info().path, real_libnvrtc()));
  ASSERT_EQ(nvrtc.info().skipped.size(), 1u);
  EXPECT_EQ(nvrtc.info().skipped[0].candidate.path, newer);
  EXPECT_EQ(nvrtc.info().skipped[0].candidate.origin, "ARCHFIT_NVRTC");
  EXPECT_NE(nvrtc.info().skipped[0].reason.find("could not be loaded"), std::string::npos)
      << nvrtc.info().skipped[0].reason;
}

// Found in issue 24: ARCHFIT_NVRTC or CUDA_HOME pointing into a folder
// anyone can write to was loaded without a question, unlike a plugin. The
// real library, reached through a link in such a folder, is refused with
// the folder and the fix, and discovery goes on to the toolkit's.
TEST(NvrtcLoad, ALibraryFromTheEnvironmentInAFolderAnyoneCanWriteToIsNotLoaded) {
  if (real_libnvrtc().empty()) GTEST_SKIP() << "no real libnvrtc";
  Tree tree;
  const fs::path open = tree.dir("open");
  ::chmod(tree.root.c_str(), 0755);
  ::chmod(open.c_str(), 0777);
  const fs::path planted = tree.link("open/libnvrtc.so.13", real_libnvrtc());
  for (const char* origin : {"ARCHFIT_NVRTC", "CUDA_HOME", "LD_LIBRARY_PATH"}) {
    try {
      Nvrtc::load(NvrtcCandidate{planted, "", "", origin});
      FAIL() << "loaded from a folder anyone can write to, via " << origin;
    } catch (const NvrtcError& error) {
      EXPECT_EQ(std::string(error.what()),
                planted.string() + " (from " + origin + ") is not loaded: " + open.string() +
                    ": it is writable by others (mode 0777), so someone else could plant "
                    "libraries there; make it owner-only (chmod go-w " +
                    open.string() + ").");
    }
  }
  // Discovery takes each real file once, so the refused link also stands for
  // the toolkit's copy it leads to: the user is told why and what fixes it.
  NvrtcSearch search;
  search.archfit_nvrtc = planted;
  search.default_toolkit = kToolkit;
  try {
    Nvrtc::discover(search);
    FAIL() << "discovered through a folder anyone can write to";
  } catch (const NvrtcError& error) {
    EXPECT_NE(std::string(error.what()).find("(chmod go-w " + open.string() + ")"),
              std::string::npos)
        << error.what();
  }
  // Owner-only, the same link loads.
  ::chmod(open.c_str(), 0755);
  EXPECT_NO_THROW(Nvrtc::load(NvrtcCandidate{planted, "", "", "ARCHFIT_NVRTC"}));
}

TEST(NvrtcLoad, MissingFileAndMissingEntryPointsAreErrors) {
  EXPECT_THROW(Nvrtc::load(fs::path("/nonexistent/libnvrtc.so.13")), NvrtcError);
  // A real library that is not NVRTC: libarchfit.so.
  try {
    Nvrtc::load(fs::path(ARCHFIT_NOT_A_DRIVER));
    FAIL() << "libarchfit loaded as NVRTC";
  } catch (const NvrtcError& error) {
    EXPECT_NE(std::string(error.what()).find("lacks nvrtcVersion"), std::string::npos)
        << error.what();
  }
}

// --- discovery ----------------------------------------------------------------

TEST(NvrtcDiscovery, SearchOrderEachRealFileOnceNewestWins) {
  const fs::path real = real_libnvrtc();
  if (real.empty()) GTEST_SKIP() << "no real libnvrtc";
  Tree tree;
  // Every place holds a copy of "13"; the real file is reached three times.
  tree.link("archfit/libnvrtc.so.13", real);
  tree.text("home/lib64/libnvrtc.so.13");
  tree.text("home/lib/libnvrtc.so.13");
  tree.text("ld/libnvrtc.so.13");
  tree.text("loader/libnvrtc.so.13");
  tree.link("site/nvidia/cu13/lib/libnvrtc.so.13", real);  // the same file again
  tree.text("site/nvidia/cuda_nvrtc/lib/libnvrtc.so.13");
  tree.link("toolkit/lib64/libnvrtc.so", real);  // and again, by another name
  tree.text("ld/libnvrtc.alt.so.13");            // not NVRTC: never listed
  tree.text("ld/libnvrtc-builtins.so.13.0");

  NvrtcSearch search;
  search.archfit_nvrtc = tree.root / "archfit";
  search.cuda_home = tree.root / "home";
  search.ld_library_path = {tree.root / "ld"};
  search.loader_dirs = {tree.root / "loader"};
  search.site_packages = {tree.root / "site"};
  search.default_toolkit = tree.root / "toolkit";
  auto found = find_nvrtc(search);
  EXPECT_EQ(origins(found),
            (std::vector<std::string>{"ARCHFIT_NVRTC", "CUDA_HOME", "CUDA_HOME", "LD_LIBRARY_PATH",
                                      "loader path", "wheel nvidia/cuda_nvrtc"}));
  // The real library's own identification string makes its "13" precise;
  // the text files keep their file names' "13" and tie, in search order.
  ASSERT_FALSE(found.empty());
  EXPECT_TRUE(found[0].version.starts_with("13.")) << found[0].version;
  EXPECT_EQ(found[0].version_source, "library");
  for (size_t i = 1; i < found.size(); ++i) EXPECT_EQ(found[i].version, "13") << found[i].path;

  // A newer version wins wherever it is; ties keep the search order.
  tree.text("loader/libnvrtc.so.13.1.80");
  tree.text("site/nvidia/cuda_nvrtc/lib/libnvrtc.so.14");
  found = find_nvrtc(search);
  ASSERT_GE(found.size(), 3u);
  EXPECT_EQ(found[0].path, tree.root / "site/nvidia/cuda_nvrtc/lib/libnvrtc.so.14");
  EXPECT_EQ(found[1].path, tree.root / "loader/libnvrtc.so.13.1.80");
  EXPECT_EQ(found[1].version_source, "file name");
  EXPECT_EQ(found[2].origin, "ARCHFIT_NVRTC");
}

TEST(NvrtcDiscovery, WheelVersionFromDistInfoOutranksTheFileName) {
  Tree tree;
  tree.text("site/nvidia/cuda_nvrtc/lib/libnvrtc.so.12");
  tree.text("site/nvidia_cuda_nvrtc_cu12-12.9.86.dist-info/METADATA",
            "Metadata-Version: 2.1\nName: nvidia-cuda-nvrtc-cu12\nVersion: 12.9.86\n\n");
  tree.text("site/nvidia_cuda_nvrtc_cu12-12.9.86.dist-info/RECORD",
            "nvidia/cuda_nvrtc/lib/libnvrtc.so.12,sha256=x,1\n"
            "nvidia_cuda_nvrtc_cu12-12.9.86.dist-info/RECORD,,\n");
  tree.text("home/lib64/libnvrtc.so.12.4.127");
  NvrtcSearch search;
  search.default_toolkit.clear();
  search.cuda_home = tree.root / "home";
  search.site_packages = {tree.root / "site"};
  const auto found = find_nvrtc(search);
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].version, "12.9.86");
  EXPECT_EQ(found[0].version_source, "dist-info");
  EXPECT_EQ(found[0].origin, "wheel nvidia/cuda_nvrtc");
  EXPECT_EQ(found[1].version, "12.4.127");
}

TEST(NvrtcDiscovery, ArchfitNvrtcMayNameAFileOfAnyName) {
  const fs::path real = real_libnvrtc();
  if (real.empty()) GTEST_SKIP() << "no real libnvrtc";
  Tree tree;
  const fs::path custom = tree.link("mine/custom-nvrtc.so", real);
  NvrtcSearch search;
  search.default_toolkit.clear();
  search.archfit_nvrtc = custom;
  const auto found = find_nvrtc(search);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].path, custom);
  EXPECT_EQ(found[0].origin, "ARCHFIT_NVRTC");
  const Nvrtc nvrtc = Nvrtc::discover(search);
  EXPECT_EQ(nvrtc.info().path, custom);
  // Builtins and headers are found beside the file the link resolves to.
  EXPECT_FALSE(nvrtc.info().builtins.empty());
  EXPECT_FALSE(nvrtc.info().include_dirs.empty());
}

TEST(NvrtcDiscovery, TheSearchIsTheVariableOverTheLoadersPlaces) {
  archfit::env::CudaLibrarySearch loader;
  loader.cuda_home = "/opt/cuda";
  loader.ld_library_path = {"/a", "/b"};
  loader.loader_dirs = {"/lib"};
  loader.site_packages = {"/site"};
  const auto search = nvrtc_search_over("/opt/nvrtc/libnvrtc.so.13", loader);
  EXPECT_EQ(search.archfit_nvrtc, "/opt/nvrtc/libnvrtc.so.13");
  EXPECT_EQ(search.cuda_home, "/opt/cuda");
  EXPECT_EQ(search.ld_library_path, (std::vector<fs::path>{"/a", "/b"}));
  EXPECT_EQ(search.loader_dirs, (std::vector<fs::path>{"/lib"}));
  EXPECT_EQ(search.site_packages, (std::vector<fs::path>{"/site"}));
  EXPECT_EQ(search.default_toolkit, "/usr/local/cuda");
}

TEST(NvrtcDiscovery, ReleaseIsReadFromTheLibrarysOwnString) {
  const fs::path real = real_libnvrtc();
  if (real.empty()) GTEST_SKIP() << "no real libnvrtc";
  const Nvrtc* nvrtc = toolkit_nvrtc();
  EXPECT_TRUE(read_nvrtc_release(real).starts_with(nvrtc->info().version.to_string() + "."))
      << read_nvrtc_release(real);
  Tree tree;
  EXPECT_EQ(read_nvrtc_release(tree.text("libnvrtc.so.13")), "");
  EXPECT_EQ(read_nvrtc_release(fs::path(ARCHFIT_NOT_A_DRIVER)), "");  // an ELF without it
  EXPECT_EQ(read_nvrtc_release(tree.root / "missing.so"), "");
}

TEST(NvrtcDiscovery, VersionsCompareByNumber) {
  EXPECT_GT(compare_versions("12.10", "12.9"), 0);
  EXPECT_LT(compare_versions("13", "13.0.88"), 0);
  EXPECT_EQ(compare_versions("13.0", "13.0.0"), 0);
  EXPECT_GT(compare_versions("12", ""), 0);
}

TEST(NvrtcHeaders, WheelsUseTheirOwnAndTheRuntimeWheelsInclude) {
  Tree tree;
  tree.text("site/nvidia/cuda_nvrtc/include/nvrtc.h");  // all an nvrtc wheel ships
  const fs::path lib = tree.text("site/nvidia/cuda_nvrtc/lib/libnvrtc.so.12");
  EXPECT_TRUE(cuda_include_dirs(lib).empty());
  tree.text("site/nvidia/cuda_runtime/include/cuda_fp16.h");
  EXPECT_EQ(cuda_include_dirs(lib),
            (std::vector<fs::path>{tree.root / "site/nvidia/cuda_runtime/include"}));
  // CUDA 13 wheels share nvidia/cu13/include, CCCL in its cccl/.
  tree.text("site/nvidia/cu13/include/cuda_fp16.h");
  tree.text("site/nvidia/cu13/include/cccl/nv/target");
  const fs::path lib13 = tree.text("site/nvidia/cu13/lib/libnvrtc.so.13");
  EXPECT_EQ(cuda_include_dirs(lib13),
            (std::vector<fs::path>{tree.root / "site/nvidia/cu13/include",
                                   tree.root / "site/nvidia/cu13/include/cccl",
                                   tree.root / "site/nvidia/cuda_runtime/include"}));
  // A toolkit: <root>/include or <root>/targets/<triple>/include.
  tree.text("cuda/targets/x86_64-linux/include/cuda_fp16.h");
  const fs::path tk = tree.text("cuda/targets/x86_64-linux/lib/libnvrtc.so.13");
  EXPECT_EQ(cuda_include_dirs(tk),
            (std::vector<fs::path>{tree.root / "cuda/targets/x86_64-linux/include"}));
}

// Windows layouts: a wheel's nvidia\cu13\bin\x86_64 and nvidia\cuda_nvrtc\bin,
// a CUDA 12 toolkit's bin and a CUDA 13 toolkit's bin\x64.
TEST(NvrtcHeaders, WindowsWheelsAndToolkitsUseTheirIncludeFolders) {
  Tree tree;
  tree.text("site/nvidia/cu13/include/cuda_fp16.h");
  const fs::path wheel13 = tree.text("site/nvidia/cu13/bin/x86_64/nvrtc64_130_0.dll");
  EXPECT_EQ(cuda_include_dirs(wheel13),
            (std::vector<fs::path>{tree.root / "site/nvidia/cu13/include"}));
  tree.text("site/nvidia/cuda_runtime/include/cuda_fp16.h");
  const fs::path wheel12 = tree.text("site/nvidia/cuda_nvrtc/bin/nvrtc64_120_0.dll");
  EXPECT_EQ(cuda_include_dirs(wheel12),
            (std::vector<fs::path>{tree.root / "site/nvidia/cuda_runtime/include"}));
  tree.text("v12.8/include/cuda_fp16.h");
  const fs::path toolkit12 = tree.text("v12.8/bin/nvrtc64_120_0.dll");
  EXPECT_EQ(cuda_include_dirs(toolkit12), (std::vector<fs::path>{tree.root / "v12.8/include"}));
  tree.text("v13.0/include/cuda_fp16.h");
  const fs::path toolkit13 = tree.text("v13.0/bin/x64/nvrtc64_130_0.dll");
  EXPECT_EQ(cuda_include_dirs(toolkit13), (std::vector<fs::path>{tree.root / "v13.0/include"}));
}

// --- compiling ----------------------------------------------------------------

// Every kernel under kernels/, for every arch this NVRTC supports, as CUBIN
// and as PTX; the scanner confirms each image's arch. Two threads compile
// at once, as `jit bundle` will.
TEST(NvrtcCompile, EveryKernelForEverySupportedArchScansAsThatArch) {
  REQUIRE_NVRTC(nvrtc);
  std::vector<fs::path> kernels;
  for (const auto& entry : fs::directory_iterator(kKernelDir)) {
    if (entry.path().extension() == ".cu") kernels.push_back(entry.path());
  }
  ASSERT_FALSE(kernels.empty()) << kKernelDir;
  struct Job {
    fs::path kernel;
    std::string target;
    int sm;
  };
  std::vector<Job> jobs;
  for (const auto& kernel : kernels) {
    for (const int sm : nvrtc.info().supported_archs) {
      jobs.push_back({kernel, "sm_" + std::to_string(sm), sm});
      jobs.push_back({kernel, "compute_" + std::to_string(sm), sm});
    }
  }
  std::atomic<size_t> next{0};
  std::vector<std::string> failures(jobs.size());
  const auto worker = [&] {
    for (size_t i; (i = next++) < jobs.size();) {
      const Job& job = jobs[i];
      CompileRequest request;
      request.source = read_text(job.kernel);
      request.source_name = job.kernel.filename().string();
      request.target = job.target;
      try {
        const CompileResult result = nvrtc.compile(request);
        const auto scan =
            archfit::binary::scan_bytes(result.bytes(), job.kernel.string() + "@" + job.target);
        const bool ptx = job.target.starts_with("compute_");
        std::ostringstream problem;
        if (!scan.ok()) problem << "scan problems: " << scan.problems.front().message << "; ";
        if (scan.format !=
            (ptx ? archfit::binary::FileFormat::ptx : archfit::binary::FileFormat::cubin))
          problem << "format " << archfit::binary::to_string(scan.format) << "; ";
        if (scan.images.size() != 1) {
          problem << scan.images.size() << " images; ";
        } else {
          const auto& image = scan.images.front();
          if (image.sm != static_cast<uint32_t>(job.sm)) problem << "sm " << image.sm << "; ";
          if (image.kind !=
              (ptx ? archfit::binary::ImageKind::ptx : archfit::binary::ImageKind::sass))
            problem << "kind " << archfit::binary::to_string(image.kind) << "; ";
        }
        if (result.format != (ptx ? ImageFormat::ptx : ImageFormat::cubin))
          problem << "result format; ";
        failures[i] = problem.str();
      } catch (const std::exception& error) {
        failures[i] = error.what();
      }
    }
  };
  std::thread other(worker);
  worker();
  other.join();
  for (size_t i = 0; i < jobs.size(); ++i)
    EXPECT_EQ(failures[i], "") << jobs[i].kernel.filename() << " for " << jobs[i].target;
}

TEST(NvrtcCompile, RmsnormEntryPointsAndNameExpressions) {
  REQUIRE_NVRTC(nvrtc);
  auto request = rmsnorm_request("sm_" + std::to_string(nvrtc.info().supported_archs.back()));
  request.name_expressions = {"rmsnorm<float>", "rmsnorm<__half>", "rmsnorm<__nv_bfloat16>"};
  const CompileResult result = nvrtc.compile(request);
  ASSERT_EQ(result.lowered_names.size(), 3u);
  EXPECT_EQ(result.lowered("rmsnorm<float>"), "_Z7rmsnormIfEvPKT_S2_PS0_if");
  EXPECT_EQ(result.lowered("rmsnorm<__half>"), "_Z7rmsnormI6__halfEvPKT_S3_PS1_if");
  EXPECT_EQ(result.lowered("rmsnorm<__nv_bfloat16>"), "_Z7rmsnormI13__nv_bfloat16EvPKT_S3_PS1_if");
  EXPECT_EQ(result.lowered("rmsnorm<double>"), "");
  for (const auto& [expression, lowered] : result.lowered_names)
    EXPECT_TRUE(contains(result.bytes(), lowered)) << expression;
  for (const char* entry : {"rmsnorm_f32", "rmsnorm_f16", "rmsnorm_bf16"})
    EXPECT_TRUE(contains(result.bytes(), entry)) << entry;
  // cuda_fp16.h came from the toolkit's include/, put there by archfit.
  EXPECT_NE(std::find(result.options.begin(), result.options.end(),
                      "-I" + nvrtc.info().include_dirs.front().string()),
            result.options.end());
  EXPECT_EQ(result.options.front(), "--gpu-architecture=" + request.target);
  EXPECT_GT(result.milliseconds, 0);
}

TEST(NvrtcCompile, SyntaxErrorGivesTheWholeLogTheOptionsAndTheSourceName) {
  REQUIRE_NVRTC(nvrtc);
  CompileRequest request;
  request.source_name = "broken_op.cu";
  // Many errors, so that the log is long: all of it must come back.
  for (int i = 0; i < 40; ++i)
    request.source += "__global__ void k" + std::to_string(i) + "(int* x) { x[0] = ; }\n";
  request.options = {"-DARCHFIT_MARKER=1", "--std=c++17"};
  request.target = "sm_" + std::to_string(nvrtc.info().supported_archs.front());
  try {
    nvrtc.compile(request);
    FAIL() << "a syntax error compiled";
  } catch (const NvrtcCompileError& error) {
    const std::string message = error.what();
    EXPECT_EQ(error.source_name, "broken_op.cu");
    EXPECT_EQ(error.target, request.target);
    EXPECT_EQ(error.result, 6);  // NVRTC_ERROR_COMPILATION
    EXPECT_NE(error.log.find("broken_op.cu(1)"), std::string::npos) << error.log;
    EXPECT_NE(error.log.find("broken_op.cu(40)"), std::string::npos) << "the log is cut";
    EXPECT_NE(message.find(error.log), std::string::npos) << "the message lacks the whole log";
    EXPECT_NE(message.find("broken_op.cu for " + request.target), std::string::npos) << message;
    EXPECT_NE(message.find("-DARCHFIT_MARKER=1 --std=c++17"), std::string::npos) << message;
    EXPECT_NE(message.find(nvrtc.info().path.string()), std::string::npos) << message;
    EXPECT_EQ(error.options.front(), "--gpu-architecture=" + request.target);
    EXPECT_TRUE(error.missing_headers.empty());
  }
}

TEST(NvrtcCompile, AMissingHeaderIsNamed) {
  REQUIRE_NVRTC(nvrtc);
  CompileRequest request;
  request.source_name = "needs_header.cu";
  request.source = "#include \"archfit_op_config.h\"\n__global__ void k() {}\n";
  request.target = "compute_" + std::to_string(nvrtc.info().supported_archs.front());
  try {
    nvrtc.compile(request);
    FAIL() << "compiled without its header";
  } catch (const NvrtcCompileError& error) {
    EXPECT_EQ(error.missing_headers, std::vector<std::string>{"archfit_op_config.h"});
    const std::string message = error.what();
    EXPECT_NE(message.find("could not open archfit_op_config.h"), std::string::npos) << message;
    EXPECT_NE(message.find("needs_header.cu"), std::string::npos) << message;
  }
  // Given in the request, it is found.
  request.headers["archfit_op_config.h"] = "#define ARCHFIT_BLOCK 128\n";
  request.source += "static_assert(ARCHFIT_BLOCK == 128, \"header content\");\n";
  EXPECT_NO_THROW(nvrtc.compile(request));
}

TEST(NvrtcCompile, MalformedTargetsAndArchOptionsAreRefused) {
  REQUIRE_NVRTC(nvrtc);
  CompileRequest request;
  request.source = "__global__ void k() {}";
  for (const char* target : {"", "sm_", "sm90", "lto_90", "sm_90x", "compute_90 "}) {
    request.target = target;
    EXPECT_THROW(nvrtc.compile(request), NvrtcError) << target;
  }
  request.target = "sm_90";
  request.options = {"-arch=sm_80"};
  EXPECT_THROW(nvrtc.compile(request), NvrtcError);
  // An arch NVRTC does not know comes back with NVRTC's words.
  request.options.clear();
  request.target = "sm_52";
  if (std::count(nvrtc.info().supported_archs.begin(), nvrtc.info().supported_archs.end(), 52))
    GTEST_SKIP() << "this NVRTC still knows sm_52";
  try {
    nvrtc.compile(request);
    FAIL() << "sm_52 compiled";
  } catch (const NvrtcCompileError& error) {
    EXPECT_EQ(error.result, 5);  // NVRTC_ERROR_INVALID_OPTION
    EXPECT_NE(error.log.find("--gpu-architecture"), std::string::npos) << error.log;
  }
}

TEST(NvrtcCompile, ArchSpecificTargetsGiveArchSpecificCubins) {
  REQUIRE_NVRTC(nvrtc);
  const auto& archs = nvrtc.info().supported_archs;
  if (std::find(archs.begin(), archs.end(), 90) == archs.end()) GTEST_SKIP() << "no sm_90";
  CompileRequest request;
  request.source = "extern \"C\" __global__ void k(int* x) { *x = 1; }";
  request.target = "sm_90a";
  const auto result = nvrtc.compile(request);
  const auto scan = archfit::binary::scan_bytes(result.bytes(), "sm_90a");
  ASSERT_EQ(scan.images.size(), 1u);
  EXPECT_EQ(scan.images[0].arch_name(), "sm_90a");
}

// NVRTC names an internal-linkage variable in a program with no
// non-template external definition "_INTERNAL_<…>_cu_<hash>_<pid>…", so
// without -frandom-seed two processes produce different bytes; with it the
// tag is the seed's ("_cu_61726368"). The child is this test binary.
constexpr const char* kSeedSource =
    "namespace ns { struct F { int v; }; static constexpr F f{1}; }\n"
    "template <typename T> __global__ void k(const void** out) { out[0] = &ns::f; }\n"
    "template __global__ void k<int>(const void**);\n";

TEST(NvrtcSeedChild, DISABLED_WritesItsCompile) {
  const char* out = std::getenv("ARCHFIT_SEED_CHILD_OUT");
  REQUIRE_NVRTC(nvrtc);
  if (!out) GTEST_SKIP() << "run by NvrtcCompile.OutputIsReproducibleAcrossProcesses";
  CompileRequest request;
  request.source = kSeedSource;
  request.target = "compute_" + std::to_string(nvrtc.info().supported_archs.back());
  const auto result = nvrtc.compile(request);
  std::ofstream(out, std::ios::binary)
      .write(reinterpret_cast<const char*>(result.image.data()),
             static_cast<std::streamsize>(result.image.size()));
}

TEST(NvrtcCompile, OutputIsReproducibleAcrossProcesses) {
  REQUIRE_NVRTC(nvrtc);
  CompileRequest request;
  request.source = kSeedSource;
  request.target = "compute_" + std::to_string(nvrtc.info().supported_archs.back());
  const auto first = nvrtc.compile(request);
  const auto again = nvrtc.compile(request);
  EXPECT_EQ(first.image, again.image);
  ASSERT_TRUE(nvrtc.random_seed_supported()) << "NVRTC " << nvrtc.info().version.to_string();
  EXPECT_NE(std::find(first.options.begin(), first.options.end(), kRandomSeedOption),
            first.options.end());
  // The internal name carries the seed's tag, not one with this process's id.
  EXPECT_NE(first.ptx().find("_INTERNAL_"), std::string::npos) << first.ptx();
  EXPECT_NE(first.ptx().find("_cu_61726368"), std::string::npos) << first.ptx();
  EXPECT_EQ(first.ptx().find("_" + std::to_string(::getpid())), std::string::npos);

  Tree tree;
  const fs::path out = tree.root / "child.ptx";
  const std::string command = "ARCHFIT_SEED_CHILD_OUT='" + out.string() + "' '" +
                              fs::read_symlink("/proc/self/exe").string() +
                              "' --gtest_also_run_disabled_tests "
                              "--gtest_filter=NvrtcSeedChild.DISABLED_WritesItsCompile >/dev/null";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  const std::string child = read_text(out);
  EXPECT_EQ(child,
            std::string(reinterpret_cast<const char*>(first.image.data()), first.image.size()))
      << "another process compiled other bytes";
}

TEST(NvrtcCompile, PtxImageEndsWithItsNul) {
  REQUIRE_NVRTC(nvrtc);
  CompileRequest request;
  request.source = "extern \"C\" __global__ void k(int* x) { *x = 1; }";
  request.target = "compute_" + std::to_string(nvrtc.info().supported_archs.front());
  const auto result = nvrtc.compile(request);
  ASSERT_FALSE(result.image.empty());
  EXPECT_EQ(result.image.back(), std::byte{0});
  EXPECT_EQ(result.ptx().size() + 1, result.image.size());
  EXPECT_TRUE(result.ptx().starts_with("//"));
  EXPECT_TRUE(result.log.empty()) << result.log;
}

// --- target planning ------------------------------------------------------------

namespace {

const std::vector<int> kNvrtc130 = {75, 80, 86, 87, 88, 89, 90, 100, 103, 110, 120, 121};
const std::vector<int> kNvrtc124 = {50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 89, 90};
const std::vector<int> kNvrtc129 = {50, 52, 53, 60, 61,  62,  70,  72,  75, 80,
                                    86, 87, 89, 90, 100, 101, 103, 120, 121};

const archfit::kb::KnowledgeBase& real_kb() {
  static const auto kb = archfit::kb::load_knowledge_base(kSourceKb);
  return kb;
}

}  // namespace

TEST(PlanTarget, ExactArchWhenNvrtcKnowsIt) {
  const auto plan = plan_target({12, 0}, kNvrtc130, {{13, 0}});
  EXPECT_EQ(plan.target, "sm_120");
  EXPECT_EQ(plan.format, ImageFormat::cubin);
  EXPECT_TRUE(plan.exact);
  EXPECT_EQ(plan.arch, (ComputeCapability{12, 0}));
}

TEST(PlanTarget, PtxOfTheNewestArchWhenTheDeviceIsNewer) {
  TargetPlanOptions options{{12, 4}, &real_kb()};
  const auto plan = plan_target({12, 0}, kNvrtc124, options);
  EXPECT_EQ(plan.target, "compute_90");
  EXPECT_EQ(plan.format, ImageFormat::ptx);
  EXPECT_FALSE(plan.exact);
  EXPECT_EQ(plan.reason,
            "NVRTC 12.4 does not know sm_120; PTX for compute_90 is left to the driver to JIT "
            "(an NVRTC of CUDA 12.8 or newer for sm_120 would compile SASS).");
  // Without the knowledge base it still says why.
  const auto bare = plan_target({12, 0}, kNvrtc124, {{12, 4}});
  EXPECT_EQ(bare.target, "compute_90");
  EXPECT_NE(bare.reason.find("does not know sm_120"), std::string::npos);
}

TEST(PlanTarget, CompatibleSassBeforePtx) {
  // No sm_86 in the list: sm_80 SASS runs on 8.6 (the rule table).
  const auto plan = plan_target({8, 6}, std::vector<int>{75, 80, 90}, {{12, 0}});
  EXPECT_EQ(plan.target, "sm_80");
  EXPECT_EQ(plan.format, ImageFormat::cubin);
  EXPECT_FALSE(plan.exact);
  EXPECT_NE(plan.reason.find("sm_80 SASS runs on 8.6"), std::string::npos) << plan.reason;
  // A device between majors: NVRTC 12.9 has no sm_110; PTX for compute_103.
  const auto thor = plan_target({11, 0}, kNvrtc129, {{12, 9}});
  EXPECT_EQ(thor.target, "compute_103");
}

TEST(PlanTarget, OlderThanEverySupportedArchSaysWhatToInstall) {
  try {
    plan_target({7, 0}, kNvrtc130, {{13, 0}, &real_kb()});
    FAIL() << "sm_70 planned on NVRTC 13.0";
  } catch (const NoTargetError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("NVRTC 13.0 cannot compile for sm_70"), std::string::npos) << message;
    EXPECT_NE(message.find("oldest target is sm_75"), std::string::npos) << message;
    EXPECT_NE(message.find("an NVRTC older than CUDA 13.0 (and of CUDA 9.0 or newer)"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("pip install nvidia-cuda-nvrtc-cu12"), std::string::npos) << message;
  }
}

TEST(PlanTarget, NewerDeviceWithoutPtxSaysWhichNvrtcToInstall) {
  try {
    plan_target({12, 0}, kNvrtc124, {{12, 4}, &real_kb(), /*allow_ptx=*/false});
    FAIL() << "planned without PTX";
  } catch (const NoTargetError& error) {
    EXPECT_NE(std::string(error.what()).find("an NVRTC of CUDA 12.8 or newer for sm_120"),
              std::string::npos)
        << error.what();
  }
  EXPECT_THROW(plan_target({12, 0}, std::vector<int>{}, {}), NoTargetError);
}

TEST(PlanTarget, FromALoadedNvrtc) {
  REQUIRE_NVRTC(nvrtc);
  const int newest = nvrtc.info().supported_archs.back();
  const auto plan = plan_target(ComputeCapability::from_sm(static_cast<uint32_t>(newest)), nvrtc);
  EXPECT_TRUE(plan.exact);
  EXPECT_EQ(plan.target, "sm_" + std::to_string(newest));
  EXPECT_NE(plan.reason.find("NVRTC " + nvrtc.info().version.to_string()), std::string::npos);
}
