// NVRTC discovery with the real NVRTC wheels from PyPI (issue 4): each is
// installed into a throwaway site-packages, found there with its version,
// loaded, and made to compile. NVRTC 12.4 cannot target sm_120, so for a 12.0
// device it makes PTX for its newest arch and says why.
//
// The wheels come from $ARCHFIT_REALWORLD_CACHE/wheels (default
// ~/.cache/archfit-realworld/wheels), else `python3 -m pip download` puts
// them there; where neither works the tests skip and say so.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include "binary/scanner.hpp"
#include "binary/zip_archive.hpp"
#include "jit/nvrtc/nvrtc.hpp"
#include "jit/nvrtc/target_plan.hpp"
#include "kb/knowledge_base.hpp"

namespace fs = std::filesystem;
using namespace archfit::jit;

namespace {

const fs::path kKernelDir = ARCHFIT_KERNELS_DIR;
const fs::path kSourceKb = fs::path(__FILE__).parent_path() / "../../sdk/data/kb";

struct WheelSpec {
  std::string requirement;  // for pip: "nvidia-cuda-nvrtc-cu12==12.4.127"
  std::string prefix;       // its file name's start: "nvidia_cuda_nvrtc_cu12-12.4.127-"
};
const WheelSpec kNvrtc124{"nvidia-cuda-nvrtc-cu12==12.4.127", "nvidia_cuda_nvrtc_cu12-12.4.127-"};
const WheelSpec kRuntime124{"nvidia-cuda-runtime-cu12==12.4.127",
                            "nvidia_cuda_runtime_cu12-12.4.127-"};
const WheelSpec kNvrtc129{"nvidia-cuda-nvrtc-cu12==12.9.86", "nvidia_cuda_nvrtc_cu12-12.9.86-"};
const WheelSpec kNvrtc130{"nvidia-cuda-nvrtc==13.0.88", "nvidia_cuda_nvrtc-13.0.88-"};

fs::path wheel_cache() {
  if (const char* cache = std::getenv("ARCHFIT_REALWORLD_CACHE"); cache && *cache)
    return fs::path(cache) / "wheels";
  const char* home = std::getenv("HOME");
  return fs::path(home ? home : "/root") / ".cache/archfit-realworld/wheels";
}

fs::path cached_wheel(const WheelSpec& spec) {
  std::error_code error;
  for (fs::directory_iterator it(wheel_cache(), error), end; !error && it != end;
       it.increment(error)) {
    const std::string name = it->path().filename().string();
    // The cache holds the Windows wheels of the same versions too
    // (fetch_wheels.py WINDOWS_WHEELS): only a Linux one loads here.
    if (name.starts_with(spec.prefix) && name.ends_with(".whl") &&
        name.find("manylinux") != std::string::npos)
      return it->path();
  }
  return {};
}

// The wheel's path, downloaded into the cache first if need be; empty and
// `why` set when it cannot be had. pip downloads into a directory of this
// process's own, and the wheel is renamed into the cache whole, so that a
// test running beside this one never sees half a file.
fs::path wheel(const WheelSpec& spec, std::string& why) {
  if (auto path = cached_wheel(spec); !path.empty()) return path;
  std::error_code error;
  const fs::path partial = wheel_cache() / (".download-" + std::to_string(::getpid()));
  fs::create_directories(partial, error);
  const std::string command = "timeout 300 python3 -m pip download --quiet --no-deps -d '" +
                              partial.string() + "' '" + spec.requirement + "' >/dev/null 2>&1";
  const int status = std::system(command.c_str());
  for (fs::directory_iterator it(partial, error), end; !error && it != end; it.increment(error))
    fs::rename(it->path(), wheel_cache() / it->path().filename(), error);
  fs::remove_all(partial, error);
  if (auto path = cached_wheel(spec); !path.empty()) return path;
  why = spec.requirement + " is not in " + wheel_cache().string() +
        " and `python3 -m pip download` could not fetch it (exit status " +
        std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : status) +
        "); run tests/realworld/fetch_wheels.py or set ARCHFIT_REALWORLD_CACHE";
  return {};
}

// A wheel is a zip: installing one without its scripts is unpacking it.
// The libnvrtc*.alt.so* variants (12.9 and 13.0 ship one beside each
// library, 100 MB more per wheel) are left out: archfit never loads them.
void unpack(const fs::path& wheel, const fs::path& site) {
  archfit::binary::ZipArchive archive(wheel);
  for (const auto& member : archive.members()) {
    if (member.name.find(".alt.so") != std::string::npos) continue;
    const fs::path relative = fs::path(member.name).lexically_normal();
    if (relative.is_absolute() || relative.string().starts_with(".."))
      throw std::runtime_error("unsafe member " + member.name + " in " + wheel.string());
    fs::create_directories((site / relative).parent_path());
    const auto bytes = archive.read(member, uint64_t{1} << 31);
    std::ofstream(site / relative, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data.get()),
               static_cast<std::streamsize>(bytes.size));
  }
}

// Throwaway site-packages, one per set of wheels, removed when the process ends.
class Sites {
 public:
  ~Sites() {
    std::error_code error;
    fs::remove_all(root_, error);
  }
  // The site-packages holding exactly `specs`; empty and `why` set when a
  // wheel cannot be had.
  fs::path get(const std::vector<WheelSpec>& specs, std::string& why) {
    std::string key;
    for (const auto& spec : specs) key += spec.prefix;
    if (auto it = sites_.find(key); it != sites_.end()) return it->second;
    const fs::path site = root_ / ("site" + std::to_string(sites_.size())) / "site-packages";
    for (const auto& spec : specs) {
      const fs::path file = wheel(spec, why);
      if (file.empty()) return {};
      unpack(file, site);
    }
    return sites_[key] = site;
  }

 private:
  fs::path root_ =
      fs::temp_directory_path() / ("archfit_nvrtc_wheels_" + std::to_string(::getpid()));
  std::map<std::string, fs::path> sites_;
};

Sites& sites() {
  static Sites instance;
  return instance;
}

#define SITE_WITH(site, ...)                                    \
  std::string site##_why;                                       \
  const fs::path site = sites().get({__VA_ARGS__}, site##_why); \
  if (site.empty()) GTEST_SKIP() << site##_why

NvrtcSearch only(const std::vector<fs::path>& site_packages) {
  NvrtcSearch search;
  search.site_packages = site_packages;
  search.default_toolkit.clear();
  return search;
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

const archfit::kb::KnowledgeBase& real_kb() {
  static const auto kb = archfit::kb::load_knowledge_base(kSourceKb);
  return kb;
}

CompileRequest plain_kernel(const std::string& target) {
  CompileRequest request;
  request.source =
      "extern \"C\" __global__ void scale(float* x, float by) { x[threadIdx.x] *= by; }\n";
  request.source_name = "scale.cu";
  request.target = target;
  return request;
}

uint32_t scanned_sm(const CompileResult& result, archfit::binary::ImageKind kind) {
  const auto scan = archfit::binary::scan_bytes(result.bytes(), result.target);
  EXPECT_EQ(scan.images.size(), 1u);
  if (scan.images.size() != 1) return 0;
  EXPECT_EQ(scan.images[0].kind, kind);
  return scan.images[0].sm;
}

}  // namespace

TEST(NvrtcWheels, Cu12_12_4_CannotTargetSm120AndMakesPtxForItsNewestArch) {
  SITE_WITH(site, kNvrtc124, kRuntime124);
  const auto found = find_nvrtc(only({site}));
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].version, "12.4.127");
  EXPECT_EQ(found[0].version_source, "dist-info");
  EXPECT_EQ(found[0].origin, "wheel nvidia/cuda_nvrtc");

  const Nvrtc nvrtc = Nvrtc::discover(only({site}));
  const NvrtcInfo& info = nvrtc.info();
  EXPECT_EQ(info.version, (NvrtcVersion{12, 4}));
  EXPECT_EQ(nvrtc.build(), "12.4.127");
  EXPECT_EQ(nvrtc.build_source(), "dist-info");
  EXPECT_EQ(std::count(info.supported_archs.begin(), info.supported_archs.end(), 120), 0);
  EXPECT_EQ(info.supported_archs.back(), 90);
  EXPECT_EQ(info.builtins, site / "nvidia/cuda_nvrtc/lib/libnvrtc-builtins.so.12.4");
  // The nvrtc wheel ships only nvrtc.h; cuda_fp16.h is the runtime wheel's.
  EXPECT_EQ(info.include_dirs, std::vector<fs::path>{site / "nvidia/cuda_runtime/include"});

  const TargetPlan plan = plan_target({12, 0}, nvrtc, &real_kb());
  EXPECT_EQ(plan.target, "compute_90");
  EXPECT_EQ(plan.reason,
            "NVRTC 12.4 does not know sm_120; PTX for compute_90 is left to the driver to JIT "
            "(an NVRTC of CUDA 12.8 or newer for sm_120 would compile SASS).");

  CompileRequest request;
  request.source = read_text(kKernelDir / "rmsnorm.cu");
  request.source_name = "rmsnorm.cu";
  request.name_expressions = {"rmsnorm<float>", "rmsnorm<__half>", "rmsnorm<__nv_bfloat16>"};
  request.target = plan.target;
  const CompileResult result = nvrtc.compile(request);
  EXPECT_EQ(result.format, ImageFormat::ptx);
  EXPECT_EQ(scanned_sm(result, archfit::binary::ImageKind::ptx), 90u);
  EXPECT_EQ(result.lowered("rmsnorm<__half>"), "_Z7rmsnormI6__halfEvPKT_S3_PS1_if");
  // NVRTC 12.4 rejects -frandom-seed ("unrecognized option"); archfit leaves
  // it out, and this kernel's output is the same every time regardless.
  EXPECT_FALSE(nvrtc.random_seed_supported());
  for (const auto& option : result.options)
    EXPECT_FALSE(option.starts_with("-frandom-seed")) << option;
  EXPECT_EQ(nvrtc.compile(request).image, result.image);
}

TEST(NvrtcWheels, Cu12_12_9_TargetsSm120AndNamesTheHeadersItLacks) {
  SITE_WITH(site, kNvrtc129);
  const auto found = find_nvrtc(only({site}));
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].version, "12.9.86");
  const Nvrtc nvrtc = Nvrtc::discover(only({site}));
  EXPECT_EQ(nvrtc.info().version, (NvrtcVersion{12, 9}));
  EXPECT_EQ(nvrtc.build(), "12.9.86");
  EXPECT_EQ(nvrtc.info().builtins, site / "nvidia/cuda_nvrtc/lib/libnvrtc-builtins.so.12.9");
  EXPECT_TRUE(nvrtc.info().include_dirs.empty());

  const TargetPlan plan = plan_target({12, 0}, nvrtc, &real_kb());
  EXPECT_EQ(plan.target, "sm_120");
  EXPECT_TRUE(plan.exact);
  const CompileResult result = nvrtc.compile(plain_kernel(plan.target));
  EXPECT_EQ(scanned_sm(result, archfit::binary::ImageKind::sass), 120u);
  EXPECT_TRUE(nvrtc.random_seed_supported());

  // Without nvidia-cuda-runtime-cu12 beside it there is no cuda_fp16.h.
  CompileRequest rmsnorm;
  rmsnorm.source = read_text(kKernelDir / "rmsnorm.cu");
  rmsnorm.source_name = "rmsnorm.cu";
  rmsnorm.target = plan.target;
  try {
    nvrtc.compile(rmsnorm);
    FAIL() << "rmsnorm compiled without the CUDA headers";
  } catch (const NvrtcCompileError& error) {
    ASSERT_FALSE(error.missing_headers.empty());
    EXPECT_TRUE(error.missing_headers[0] == "cuda_bf16.h" ||
                error.missing_headers[0] == "cuda_fp16.h");
    EXPECT_NE(std::string(error.what()).find("pip install nvidia-cuda-runtime-cu12==12.9.*"),
              std::string::npos)
        << error.what();
  }
}

TEST(NvrtcWheels, Cu13_13_0_IsFoundInNvidiaCu13AndUsesItsOwnBuiltins) {
  SITE_WITH(site, kNvrtc130);
  const auto found = find_nvrtc(only({site}));
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].version, "13.0.88");
  EXPECT_EQ(found[0].origin, "wheel nvidia/cu13");
  const Nvrtc nvrtc = Nvrtc::discover(only({site}));
  EXPECT_EQ(nvrtc.info().version, (NvrtcVersion{13, 0}));
  EXPECT_EQ(nvrtc.build(), "13.0.88");
  EXPECT_EQ(
      std::count(nvrtc.info().supported_archs.begin(), nvrtc.info().supported_archs.end(), 120), 1);
  // NVRTC 13.0 has no RUNPATH: left alone it would take libnvrtc-builtins
  // from the loader path (another toolkit's) or fail. archfit loads the
  // wheel's first; only a copy already in the process can pre-empt it.
  const fs::path own = site / "nvidia/cu13/lib/libnvrtc-builtins.so.13.0";
  if (nvrtc.info().builtins != own) {
    ASSERT_FALSE(nvrtc.info().warnings.empty());
    EXPECT_NE(nvrtc.info().warnings.front().find("already loaded"), std::string::npos);
  }
  const CompileResult result = nvrtc.compile(plain_kernel("sm_120"));
  EXPECT_EQ(scanned_sm(result, archfit::binary::ImageKind::sass), 120u);
}

// The child of the next test: compiles with the NVRTC of the site-packages
// named in ARCHFIT_WHEEL_SITE.
TEST(NvrtcWheelsChild, DISABLED_CompilesWithTheWheel) {
  const char* site = std::getenv("ARCHFIT_WHEEL_SITE");
  if (!site)
    GTEST_SKIP() << "run by NvrtcWheels.Cu13_13_0_CompilesWhereTheLoaderCannotFindItsBuiltins";
  const Nvrtc nvrtc = Nvrtc::discover(only({site}));
  const CompileResult result = nvrtc.compile(plain_kernel("sm_120"));
  EXPECT_EQ(scanned_sm(result, archfit::binary::ImageKind::sass), 120u);
}

// NVRTC 13.0 dlopens libnvrtc-builtins.so.13.0 by name and has no RUNPATH:
// run by a loader that ignores /etc/ld.so.cache (where this machine's
// toolkit is), the wheel's NVRTC alone fails every compile with "failed to
// open libnvrtc-builtins.so.13.0". archfit loads the copy beside it first.
TEST(NvrtcWheels, Cu13_13_0_CompilesWhereTheLoaderCannotFindItsBuiltins) {
  SITE_WITH(site, kNvrtc130);
  const fs::path loader = "/lib64/ld-linux-x86-64.so.2";
  if (!fs::exists(loader)) GTEST_SKIP() << "no " << loader;
  const std::string command = "ARCHFIT_WHEEL_SITE='" + site.string() + "' " + loader.string() +
                              " --inhibit-cache '" + fs::read_symlink("/proc/self/exe").string() +
                              "' --gtest_also_run_disabled_tests "
                              "--gtest_filter=NvrtcWheelsChild.DISABLED_CompilesWithTheWheel"
                              " >/dev/null 2>&1";
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
}

TEST(NvrtcWheels, TheNewestOfSeveralSitePackagesWins) {
  SITE_WITH(old_site, kNvrtc124, kRuntime124);
  SITE_WITH(mid_site, kNvrtc129);
  SITE_WITH(new_site, kNvrtc130);
  const auto found = find_nvrtc(only({old_site, new_site, mid_site}));
  ASSERT_EQ(found.size(), 3u);
  EXPECT_EQ(found[0].version, "13.0.88");
  EXPECT_EQ(found[1].version, "12.9.86");
  EXPECT_EQ(found[2].version, "12.4.127");
  // Against a toolkit's copy of the same or an older release, the wheel
  // ranks first: newer, or equal and earlier in the search order.
  auto search = only({old_site, new_site});
  search.default_toolkit = "/usr/local/cuda";
  const auto with_toolkit = find_nvrtc(search);
  ASSERT_FALSE(with_toolkit.empty());
  const auto toolkit = std::find_if(with_toolkit.begin(), with_toolkit.end(),
                                    [](const auto& c) { return c.origin == "/usr/local/cuda"; });
  if (toolkit != with_toolkit.end() && compare_versions(toolkit->version, "13.0.88") <= 0)
    EXPECT_EQ(with_toolkit[0].path, new_site / "nvidia/cu13/lib/libnvrtc.so.13");
}
