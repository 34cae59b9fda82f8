#include "env/cuda_libraries.hpp"
#include "saved_env.hpp"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <tuple>

namespace fs = std::filesystem;
using archfit::env::CudaLibrary;
using archfit::env::CudaLibrarySearch;
using archfit::env::find_cuda_libraries;

namespace {

struct Tree {
  Tree() {
    root = fs::temp_directory_path() / ("archfit_cudalibs_" + std::to_string(::getpid()));
    fs::remove_all(root);
  }
  ~Tree() { fs::remove_all(root); }
  fs::path file(const std::string& relative) {
    fs::create_directories((root / relative).parent_path());
    std::ofstream(root / relative) << "x";
    return root / relative;
  }
  // A real shared library where the toolkit here has one (the scan never
  // loads it; a copy only makes the tree look like an installation).
  fs::path library(const std::string& relative) {
    fs::create_directories((root / relative).parent_path());
    const fs::path real = "/usr/local/cuda/lib64/libcudart.so.13";
    std::error_code error;
    if (!fs::copy_file(real, root / relative, error))
      std::ofstream(root / relative) << "\x7f"
                                        "ELF";
    return root / relative;
  }
  // <site>/<name>-<version>.dist-info with METADATA and a RECORD listing `files`.
  void dist_info(const std::string& site, const std::string& name, const std::string& version,
                 const std::vector<std::string>& files) {
    std::string normalized = name;  // nvidia-cuda-runtime-cu12 -> nvidia_cuda_runtime_cu12
    std::replace(normalized.begin(), normalized.end(), '-', '_');
    const std::string directory = normalized + "-" + version + ".dist-info";
    const fs::path dir = root / site / directory;
    fs::create_directories(dir);
    std::ofstream(dir / "METADATA")
        << "Metadata-Version: 2.1\nName: " << name << "\nVersion: " << version << "\n\nA wheel.\n";
    std::ofstream record(dir / "RECORD");
    for (const auto& file : files) record << file << ",sha256=x,1\n";
    record << directory << "/RECORD,,\n";
  }
  fs::path root;
};

// "12.4.127 (dist-info)": the version of the copy at `path` and where it came from.
std::string version_of(const std::vector<CudaLibrary>& found, const fs::path& path) {
  const auto it = std::find_if(found.begin(), found.end(),
                               [&](const CudaLibrary& library) { return library.path == path; });
  if (it == found.end()) return "not found: " + path.string();
  return it->version + " (" + it->version_source + ")";
}

// A search of nothing but what a test adds.
CudaLibrarySearch nothing_else() {
  CudaLibrarySearch search;
  search.default_toolkit.clear();
  return search;
}

}  // namespace

TEST(CudaLibraries, FindsWheelAndToolkitCopiesWithTheirVersionsAndOrigins) {
  Tree tree;
  const auto wheel = tree.file("site/nvidia/cuda_runtime/lib/libcudart.so.12");
  tree.file("site/nvidia/cuda_nvrtc/lib/libnvrtc.so.12");
  const auto toolkit = tree.file("cuda/lib64/libcudart.so.13.0.88");
  fs::create_symlink("libcudart.so.13.0.88", tree.root / "cuda/lib64/libcudart.so.13");
  fs::create_symlink("libcudart.so.13", tree.root / "cuda/lib64/libcudart.so");
  tree.file("cuda/lib64/libcudart_static.a");
  tree.file("cuda/lib64/libnvrtc.alt.so.13");
  CudaLibrarySearch search;
  search.site_packages = {tree.root / "site"};
  search.cuda_home = tree.root / "cuda";
  search.default_toolkit.clear();
  search.loader_dirs = {tree.root / "cuda/lib64"};  // the same files again: listed once
  const auto found = find_cuda_libraries(search);
  ASSERT_EQ(found.size(), 3u);
  EXPECT_EQ(found[0].name, "nvrtc");  // wheel parts in name order: cuda_nvrtc, cuda_runtime
  EXPECT_EQ(found[0].origin, "wheel nvidia/cuda_nvrtc");
  EXPECT_EQ(found[0].version, "12");  // no dist-info owns it: the file name tells
  EXPECT_EQ(found[0].version_source, "file name");
  EXPECT_EQ(found[1].name, "cudart");
  EXPECT_EQ(found[1].path, wheel);
  EXPECT_EQ(found[1].origin, "wheel nvidia/cuda_runtime");
  EXPECT_EQ(found[2].name, "cudart");
  EXPECT_EQ(found[2].path, toolkit);       // the real file, found through three names
  EXPECT_EQ(found[2].version, "13.0.88");  // no version.json beside lib64
  EXPECT_EQ(found[2].version_source, "file name");
  EXPECT_EQ(found[2].origin, "CUDA_HOME");
}

TEST(CudaLibraries, TheToolkitHereHasEachLibraryOnce) {
  if (!fs::exists("/usr/local/cuda/lib64/libcudart.so.13"))
    GTEST_SKIP() << "no CUDA 13 toolkit in /usr/local/cuda";
  CudaLibrarySearch search;
  const auto found = find_cuda_libraries(search);
  std::map<std::string, int> count;
  for (const auto& library : found) ++count[library.name];
  for (const char* name : {"cudart", "nvrtc", "cublas", "cublasLt", "cudnn"})
    EXPECT_EQ(count[name], 1) << name;
}

TEST(CudaLibraries, AWheelCopyTakesTheVersionOfTheDistributionThatInstalledIt) {
  Tree tree;
  // nvidia-cuda-runtime-cu12 12.4.127 as pip installs it.
  const auto cudart = tree.library("site/nvidia/cuda_runtime/lib/libcudart.so.12");
  tree.dist_info("site", "nvidia-cuda-runtime-cu12", "12.4.127",
                 {"nvidia/__init__.py", "nvidia/cuda_runtime/__init__.py",
                  "nvidia/cuda_runtime/lib/libcudart.so.12"});
  // The CUDA 13 wheels share nvidia/cu13/lib; each file has its own owner.
  const auto cublas = tree.library("site/nvidia/cu13/lib/libcublas.so.13");
  const auto runtime13 = tree.library("site/nvidia/cu13/lib/libcudart.so.13");
  tree.dist_info("site", "nvidia-cublas", "13.1.0.3", {"nvidia/cu13/lib/libcublas.so.13"});
  tree.dist_info("site", "nvidia-cuda-runtime", "13.0.96", {"nvidia/cu13/lib/libcudart.so.13"});
  // A copy no RECORD lists, and one whose owner has another major.
  const auto stray = tree.library("site/nvidia/cu13/lib/libnvrtc.so.13");
  const auto odd = tree.library("site/nvidia/cudnn/lib/libcudnn.so.9");
  tree.dist_info("site", "nvidia-cudnn-cu12", "8.9.2.26", {"nvidia/cudnn/lib/libcudnn.so.9"});

  auto search = nothing_else();
  search.site_packages = {tree.root / "site"};
  const auto found = find_cuda_libraries(search);
  ASSERT_EQ(found.size(), 5u);
  EXPECT_EQ(version_of(found, cudart), "12.4.127 (dist-info)");
  EXPECT_EQ(version_of(found, cublas), "13.1.0.3 (dist-info)");
  EXPECT_EQ(version_of(found, runtime13), "13.0.96 (dist-info)");
  EXPECT_EQ(version_of(found, stray), "13 (file name)");
  EXPECT_EQ(version_of(found, odd), "9 (file name)");  // not cuDNN 8.9.2.26

  // Site-packages already read give the same answer.
  const auto again =
      find_cuda_libraries(search, {archfit::env::read_site_packages(tree.root / "site")});
  ASSERT_EQ(again.size(), found.size());
  for (size_t i = 0; i < found.size(); ++i) {
    EXPECT_EQ(again[i].version, found[i].version) << found[i].path;
    EXPECT_EQ(again[i].version_source, found[i].version_source) << found[i].path;
  }
  // A wheel directory reached through LD_LIBRARY_PATH is still a wheel's.
  auto through_path = nothing_else();
  through_path.ld_library_path = {tree.root / "site/nvidia/cuda_runtime/lib"};
  const auto path_found = find_cuda_libraries(through_path);
  ASSERT_EQ(path_found.size(), 1u);
  EXPECT_EQ(path_found[0].origin, "LD_LIBRARY_PATH");
  EXPECT_EQ(version_of(path_found, cudart), "12.4.127 (dist-info)");
}

TEST(CudaLibraries, AToolkitCopyTakesItsComponentVersionFromVersionJson) {
  Tree tree;
  // version.json as the CUDA 12.4 Update 1 installer writes it.
  fs::create_directories(tree.root / "cuda-12.4");
  std::ofstream(tree.root / "cuda-12.4/version.json") << R"json({
   "cuda" : {"name" : "CUDA SDK", "version" : "12.4.1"},
   "cuda_cudart" : {"name" : "CUDA Runtime (cudart)", "version" : "12.4.127"},
   "cuda_nvrtc" : {"name" : "CUDA NVRTC", "version" : "12.4.127"},
   "libcublas" : {"name" : "CUDA cuBLAS", "version" : "12.4.5.8"}
})json";
  const auto cudart = tree.library("cuda-12.4/targets/x86_64-linux/lib/libcudart.so.12");
  fs::create_symlink("targets/x86_64-linux/lib", tree.root / "cuda-12.4/lib64");
  fs::create_symlink("cuda-12.4", tree.root / "cuda");
  const auto cublaslt = tree.library("cuda-12.4/targets/x86_64-linux/lib/libcublasLt.so.12");
  const auto nvrtc = tree.library("cuda-12.4/targets/x86_64-linux/lib/libnvrtc.so.12");
  // Not in version.json, and left over from another major.
  const auto cudnn = tree.library("cuda-12.4/targets/x86_64-linux/lib/libcudnn.so.9");
  const auto stale = tree.library("cuda-12.4/targets/x86_64-linux/lib/libcublas.so.11");

  auto search = nothing_else();
  search.cuda_home = tree.root / "cuda";  // lib64 -> targets/x86_64-linux/lib
  const auto found = find_cuda_libraries(search);
  ASSERT_EQ(found.size(), 5u);
  for (const auto& library : found) EXPECT_EQ(library.origin, "CUDA_HOME") << library.path;
  const fs::path home = tree.root / "cuda/lib64";
  EXPECT_EQ(version_of(found, home / "libcudart.so.12"), "12.4.127 (version.json)");
  EXPECT_EQ(version_of(found, home / "libcublasLt.so.12"), "12.4.5.8 (version.json)");
  EXPECT_EQ(version_of(found, home / "libcudnn.so.9"), "9 (file name)");
  // Not 12.4.5.8: that is the version of another copy.
  EXPECT_EQ(version_of(found, home / "libcublas.so.11"), "11 (file name)");

  // Any directory of the toolkit: the loader path names targets/<triple>/lib.
  auto loader = nothing_else();
  loader.loader_dirs = {tree.root / "cuda-12.4/targets/x86_64-linux/lib"};
  const auto direct = find_cuda_libraries(loader);
  EXPECT_EQ(version_of(direct, nvrtc), "12.4.127 (version.json)");
  EXPECT_EQ(version_of(direct, cudart), "12.4.127 (version.json)");
  EXPECT_EQ(version_of(direct, cublaslt), "12.4.5.8 (version.json)");
  EXPECT_EQ(version_of(direct, cudnn), "9 (file name)");
  EXPECT_EQ(version_of(direct, stale), "11 (file name)");

  // A broken version.json leaves the file name.
  std::ofstream(tree.root / "cuda-12.4/version.json") << "{\"cuda_cudart\": ";
  EXPECT_EQ(version_of(find_cuda_libraries(search), home / "libcudart.so.12"), "12 (file name)");
}

TEST(CudaLibraries, TheToolkitHereSaysWhereEachVersionCameFrom) {
  if (!fs::exists("/usr/local/cuda/lib64/libcudart.so.13"))
    GTEST_SKIP() << "no CUDA 13 toolkit in /usr/local/cuda";
  const bool has_version_json = fs::exists("/usr/local/cuda/version.json");
  const auto found = find_cuda_libraries(CudaLibrarySearch{});
  ASSERT_FALSE(found.empty());
  for (const auto& library : found) {
    ASSERT_FALSE(library.version.empty()) << library.path;
    if (library.name == "cudart") {
      EXPECT_TRUE(library.version.starts_with("13")) << library.version;
      EXPECT_EQ(library.version_source, has_version_json ? "version.json" : "file name");
    }
    if (library.name == "cudnn") EXPECT_EQ(library.version_source, "file name");
  }
}

// Windows names, as PyPI's win_amd64 wheels and NVIDIA's installers lay them
// out (measured: nvidia-cuda-nvrtc-cu12 12.8.93 installs
// nvidia/cuda_nvrtc/bin/nvrtc64_120_0.dll, nvrtc64_120_0.alt.dll and
// nvrtc-builtins64_128.dll; nvidia-cuda-nvrtc 13.0.88 installs
// nvidia/cu13/bin/x86_64/nvrtc64_130_0.dll; CUDA 13 toolkits moved their
// DLLs from bin to bin\x64).
TEST(CudaLibraries, ReadsWindowsFileNames) {
  using archfit::env::library_file_version;
  const std::vector<std::tuple<std::string, std::string, std::optional<std::string>>> cases = {
      {"nvrtc64_120_0.dll", "nvrtc", "12"},
      {"nvrtc64_130_0.dll", "nvrtc", "13"},
      {"nvrtc64_112_0.dll", "nvrtc", "11"},
      {"nvrtc64_120_0.alt.dll", "nvrtc", std::nullopt},
      {"nvrtc-builtins64_128.dll", "nvrtc", std::nullopt},
      {"cudart64_12.dll", "cudart", "12"},
      {"cudart64_13.dll", "cudart", "13"},
      {"cudart64_110.dll", "cudart", "11"},
      {"cudart32_110.dll", "cudart", std::nullopt},
      {"cublas64_12.dll", "cublas", "12"},
      {"cublasLt64_12.dll", "cublas", std::nullopt},  // cublasLt's, not cublas'
      {"cublasLt64_12.dll", "cublasLt", "12"},
      {"cudnn64_9.dll", "cudnn", "9"},
      {"cudnn_ops64_9.dll", "cudnn", std::nullopt},
      {"cudart64_1234.dll", "cudart", std::nullopt},
      {"cudart64_.dll", "cudart", std::nullopt},
      {"cudart64_12.dll.bak", "cudart", std::nullopt},
      {"libcudart.so.12", "cudart", "12"},
      {"libnvrtc.so", "nvrtc", ""},
  };
  for (const auto& [file, name, expected] : cases)
    EXPECT_EQ(library_file_version(file, name), expected) << file << " as " << name;
}

TEST(CudaLibraries, FindsWindowsWheelTorchAndToolkitCopies) {
  Tree tree;
  const auto nvrtc12 = tree.file("site/nvidia/cuda_nvrtc/bin/nvrtc64_120_0.dll");
  tree.file("site/nvidia/cuda_nvrtc/bin/nvrtc64_120_0.alt.dll");
  tree.file("site/nvidia/cuda_nvrtc/bin/nvrtc-builtins64_128.dll");
  tree.dist_info("site", "nvidia-cuda-nvrtc-cu12", "12.8.93",
                 {"nvidia/cuda_nvrtc/bin/nvrtc64_120_0.dll",
                  "nvidia/cuda_nvrtc/bin/nvrtc-builtins64_128.dll"});
  const auto nvrtc13 = tree.file("site/nvidia/cu13/bin/x86_64/nvrtc64_130_0.dll");
  tree.dist_info("site", "nvidia-cuda-nvrtc", "13.0.88",
                 {"nvidia/cu13/bin/x86_64/nvrtc64_130_0.dll"});
  const auto torch_nvrtc = tree.file("site/torch/lib/nvrtc64_120_0.dll");
  const auto torch_cudart = tree.file("site/torch/lib/cudart64_12.dll");
  tree.file("site/torch/lib/torch_cuda.dll");
  // A CUDA 13 toolkit: DLLs in bin\x64, its versions in version.json.
  fs::create_directories(tree.root / "cuda13");
  std::ofstream(tree.root / "cuda13/version.json")
      << R"json({"cuda_cudart": {"version": "13.0.96"}, "cuda_nvrtc": {"version": "13.0.88"}})json";
  const auto toolkit_cudart = tree.file("cuda13/bin/x64/cudart64_13.dll");
  tree.file("cuda13/bin/nvcc.exe");

  auto search = nothing_else();
  search.site_packages = {tree.root / "site"};
  search.cuda_home = tree.root / "cuda13";
  const auto found = find_cuda_libraries(search);
  ASSERT_EQ(found.size(), 5u);
  EXPECT_EQ(version_of(found, nvrtc13), "13.0.88 (dist-info)");
  EXPECT_EQ(found[0].origin, "wheel nvidia/cu13");  // parts in name order: cu13, cuda_nvrtc
  EXPECT_EQ(version_of(found, nvrtc12), "12.8.93 (dist-info)");
  EXPECT_EQ(found[1].origin, "wheel nvidia/cuda_nvrtc");
  EXPECT_EQ(version_of(found, torch_nvrtc), "12 (file name)");
  EXPECT_EQ(version_of(found, torch_cudart), "12 (file name)");
  EXPECT_EQ(found[2].origin, "wheel torch");
  EXPECT_EQ(version_of(found, toolkit_cudart), "13.0.96 (version.json)");
  EXPECT_EQ(found[4].origin, "CUDA_HOME");
}

TEST(CudaLibraries, SplitsAWheelLibraryFolderIntoItsSiteAndPart) {
  using archfit::env::wheel_library_dir;
  for (const char* folder : {"site/nvidia/cu13/lib", "site/nvidia/cu13/bin",
                             "site/nvidia/cu13/bin/x86_64", "site/nvidia/cu13/lib/"}) {
    const auto wheel = wheel_library_dir(folder);
    ASSERT_TRUE(wheel) << folder;
    EXPECT_EQ(wheel->site, fs::path("site")) << folder;
    EXPECT_EQ(wheel->part, fs::path("site/nvidia/cu13")) << folder;
  }
  for (const char* folder : {"site/torch/lib", "cuda/bin/x64", "site/nvidia/lib", "lib"})
    EXPECT_FALSE(wheel_library_dir(folder)) << folder;
}

// A Windows CUDA installer sets CUDA_PATH only: the copies found there say
// so, rather than naming a variable the user never set.
TEST(CudaLibraries, ACopyFoundThroughCudaPathSaysCudaPath) {
  Tree tree;
  const auto cudart = tree.file("v12.8/bin/cudart64_12.dll");
  const char* home = std::getenv("CUDA_HOME");
  const std::string saved_home = home ? home : "";
  const char* path = std::getenv("CUDA_PATH");
  const std::string saved_path = path ? path : "";
  archfit::testing::unset_env("CUDA_HOME");
  archfit::testing::set_env("CUDA_PATH", (tree.root / "v12.8").c_str());
  auto search = archfit::env::default_cuda_library_search({});
  if (home) archfit::testing::set_env("CUDA_HOME", saved_home.c_str());
  if (path)
    archfit::testing::set_env("CUDA_PATH", saved_path.c_str());
  else
    archfit::testing::unset_env("CUDA_PATH");
  EXPECT_EQ(search.cuda_home, tree.root / "v12.8");
  EXPECT_EQ(search.cuda_home_variable, "CUDA_PATH");
  search.default_toolkit.clear();
  search.ld_library_path.clear();
  search.loader_dirs.clear();
  const auto found = find_cuda_libraries(search);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].path, cudart);
  EXPECT_EQ(found[0].origin, "CUDA_PATH");
}

// An op inside ComfyUI finds the NVRTC its torch brought: the site-packages
// is the one whose torch/lib the loaded c10 library came from. Loaded here
// from a copy in a site-packages of the test's own, and kept loaded (the
// process ends soon after).
TEST(CudaLibraries, TheSitePackagesOfTheLoadedTorchIsWhereItsC10CameFrom) {
  EXPECT_TRUE(archfit::env::site_packages_of_loaded_torch().empty()) << "no torch loaded yet";
  Tree tree;
  const fs::path c10 = tree.root / "site" / "torch" / "lib" / "libc10.so";
  fs::create_directories(c10.parent_path());
  fs::copy_file(ARCHFIT_FAKE_C10, c10);
  void* handle = ::dlopen(c10.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr) << ::dlerror();
  const auto sites = archfit::env::site_packages_of_loaded_torch();
  ASSERT_EQ(sites.size(), 1u);
  EXPECT_TRUE(fs::equivalent(sites[0], tree.root / "site")) << sites[0];
  ::dlclose(handle);
}
