#include "binary/file_names.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "binary/tree_scan.hpp"

namespace fs = std::filesystem;
using archfit::binary::is_wheel;
using archfit::binary::may_hold_device_code;
using archfit::binary::never_device_code;

TEST(FileNames, SharedLibrariesCubinsFatbinsAndPtxMayHoldDeviceCodeInAWheel) {
  EXPECT_TRUE(may_hold_device_code("torch/lib/libtorch_cuda.so"));
  EXPECT_TRUE(may_hold_device_code("nvidia/cuda_nvrtc/lib/libnvrtc.so.12"));
  EXPECT_TRUE(may_hold_device_code("pkg/kernels/k.cubin"));
  EXPECT_TRUE(may_hold_device_code("pkg/kernels/k.FATBIN"));
  EXPECT_TRUE(may_hold_device_code("pkg/k.ptx"));
  EXPECT_FALSE(may_hold_device_code("torch/__init__.py"));
  // Windows wheels: PE libraries and extension modules (issue 33).
  EXPECT_TRUE(may_hold_device_code("torch/lib/torch_cuda.dll"));
  EXPECT_TRUE(may_hold_device_code("xformers/_C.pyd"));
  EXPECT_TRUE(may_hold_device_code("bitsandbytes/libbitsandbytes_cuda128.DLL"));
  EXPECT_FALSE(may_hold_device_code("torch/lib/torch_cuda.lib"));  // an import library
  EXPECT_FALSE(may_hold_device_code("pkg/sonnet.txt"));
  EXPECT_TRUE(is_wheel("a/Torch-2.5.1-cp311-cp311-linux_x86_64.WHL"));
  EXPECT_FALSE(is_wheel("a/torch.zip"));
}

TEST(FileNames, SourcesTextAndDistInfoNeverHoldDeviceCodeAndEverythingElseMay) {
  for (const char* name :
       {"__init__.py", "ops.pyi", "cache.cpython-311.pyc", "cudnn.h", "kernel.CUH", "reduce.cu",
        "top_level.txt", "config.json", "RECORD", "METADATA", "logo.png"})
    EXPECT_TRUE(never_device_code(name)) << name;
  // What a toolchain can put device code in, and what archfit cannot rule out by name.
  for (const char* name :
       {"libtorch_cuda.so", "libcublas.so.12", "k.cubin", "k.fatbin", "k.ptx", "ops.o", "libops.a",
        "ptxas", "kernels.bin", "_C.abi3.so", "setup.py.so", "h"})
    EXPECT_FALSE(never_device_code(name)) << name;
}

// A site-packages walk reads no Python or header file, however many there
// are; named on the command line, a file is read whatever its name.
TEST(FileNames, ATreeWalkPassesOverSourcesByNameButNotANamedFile) {
  const fs::path fixtures = ARCHFIT_FIXTURE_DIR;
  if (!fs::exists(fixtures / "sm_86_sm_89.so")) GTEST_SKIP() << "nvcc fixtures are not built";
  const fs::path root = fs::temp_directory_path() / ("archfit_names_" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root / "pkg" / "include");
  fs::copy_file(fixtures / "sm_86_sm_89.so", root / "pkg" / "_C.so");
  // A device-code library under a source file's name: a name says what a
  // tree holds, so inside a tree it is passed over ...
  fs::copy_file(fixtures / "sm_86_sm_89.so", root / "pkg" / "disguised.py");
  std::ofstream(root / "pkg" / "include" / "ops.h") << "#pragma once\n";
  std::ofstream(root / "pkg" / "tool") << "#!/bin/sh\n";
  const auto list = archfit::binary::list_files({root});
  std::vector<std::string> names;
  for (const auto& file : list.files) names.push_back(file.filename().string());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"_C.so", "tool"}));
  ASSERT_EQ(list.stamps.size(), list.files.size());
  EXPECT_EQ(list.stamps.front().size, fs::file_size(list.files.front()));
  EXPECT_NE(list.stamps.front().inode, 0u);

  // ... but named, it is read, and its images found.
  const auto named = archfit::binary::scan_tree({root / "pkg" / "disguised.py"});
  ASSERT_EQ(named.files.size(), 1u);
  EXPECT_TRUE(named.files[0].has_device_code());
  fs::remove_all(root);
}
