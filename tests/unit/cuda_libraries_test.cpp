#include "env/cuda_libraries.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <map>

namespace fs = std::filesystem;
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
  fs::path root;
};

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
  EXPECT_EQ(found[0].version, "12");
  EXPECT_EQ(found[1].name, "cudart");
  EXPECT_EQ(found[1].path, wheel);
  EXPECT_EQ(found[1].origin, "wheel nvidia/cuda_runtime");
  EXPECT_EQ(found[2].name, "cudart");
  EXPECT_EQ(found[2].path, toolkit);  // the real file, found through three names
  EXPECT_EQ(found[2].version, "13.0.88");
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
