// plugins/imagegen_ops through the plugin host: its four kernel modules
// carry the kernels' own source and, built by nvcc, SASS for sm_80, sm_86,
// sm_89 and sm_90 only; so an RTX 4090 (sm_89) runs the prebuilt image and
// an RTX 5090 (sm_120) gets the source compiled by NVRTC (test driver).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>

#include "binary/scanner.hpp"
#include "jit/cache/kernel_cache.hpp"
#include "jit/kernel_module.hpp"
#include "plugin/plugin_host.hpp"
#include "saved_env.hpp"

namespace fs = std::filesystem;
using archfit::jit::JitPath;

namespace {

const fs::path kManifest =
    fs::path(ARCHFIT_PLUGIN_BUILD_DIR) / "imagegen_ops" / "imagegen_ops.archfit-plugin.yaml";

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

const archfit::plugin::LoadedPlugin& plugin() {
  static const auto loaded = archfit::plugin::load_plugin(kManifest, 1, 1);
  return loaded;
}

}  // namespace

TEST(ImagegenOpsPlugin, OffersEachKernelWithItsOwnSource) {
  const auto& loaded = plugin();
  EXPECT_EQ(loaded.name, "imagegen_ops");
  std::set<std::string> names;
  for (const auto& module : loaded.modules) {
    names.insert(module.name);
    EXPECT_EQ(module.source, read_text(fs::path(ARCHFIT_KERNELS_DIR) / module.source_name))
        << module.name;
    EXPECT_FALSE(module.entry_points.empty());
  }
  EXPECT_EQ(names,
            (std::set<std::string>{"imagegen_ops.rmsnorm", "imagegen_ops.groupnorm_silu",
                                   "imagegen_ops.gguf_dequant", "imagegen_ops.fp8_to_bf16"}));
}

TEST(ImagegenOpsPlugin, PrebuiltImagesAreSassForTheOldArchSetAndNoPtx) {
  for (const auto& module : plugin().modules) {
    if (module.prebuilt.empty()) GTEST_SKIP() << "built without nvcc: source only";
    const auto scan = archfit::binary::scan_bytes(module.prebuilt, module.name);
    std::set<uint32_t> sass;
    for (const auto& image : scan.images) {
      EXPECT_EQ(image.kind, archfit::binary::ImageKind::sass) << module.name << " sm_" << image.sm;
      sass.insert(image.sm);
    }
    EXPECT_EQ(sass, (std::set<uint32_t>{80, 86, 89, 90})) << module.name;
  }
}

TEST(ImagegenOpsPlugin, AnAdaGpuRunsThePrebuiltImageABlackwellOneGetsNvrtc) {
  const auto& module = plugin().modules.front();
  if (module.prebuilt.empty()) GTEST_SKIP() << "built without nvcc: source only";
  archfit::testing::SavedEnv saved{"ARCHFIT_FAKE_CUDA_DEVICES", "ARCHFIT_FAKE_CUDA_VERSION",
                                   "ARCHFIT_NVRTC", "ARCHFIT_FAKE_CUDA_MODULE_LOAD"};
  archfit::testing::unset_env("ARCHFIT_FAKE_CUDA_MODULE_LOAD");
  archfit::testing::set_env("ARCHFIT_FAKE_CUDA_VERSION", "13000");
  archfit::testing::set_env("ARCHFIT_NVRTC",
                            (fs::path(ARCHFIT_CUDA_LIB_DIR) / "libnvrtc.so").c_str());
  const fs::path dir =
      fs::temp_directory_path() / ("archfit_imagegen_" + std::to_string(::getpid()));
  archfit::jit::JitSettings settings;
  settings.libcuda = ARCHFIT_FAKE_CUDA;
  settings.cache.emplace();
  settings.cache->dir = dir;
  settings.cache->on_warning = [](const std::string&) {};
  const auto runtime = std::make_shared<archfit::jit::JitRuntime>(settings);

  archfit::testing::set_env("ARCHFIT_FAKE_CUDA_DEVICES", "NVIDIA GeForce RTX 4090,8.9,1");
  const auto on_ada = archfit::jit::KernelModule(module, runtime).load(0)->report();
  EXPECT_EQ(on_ada.path, JitPath::prebuilt_sass) << on_ada.reason;
  EXPECT_EQ(on_ada.arch, "sm_89");

  archfit::testing::set_env("ARCHFIT_FAKE_CUDA_DEVICES", "NVIDIA GeForce RTX 5090,12.0,1");
  const auto on_blackwell = archfit::jit::KernelModule(module, runtime).load(0)->report();
  EXPECT_EQ(on_blackwell.path, JitPath::nvrtc) << on_blackwell.reason;
  EXPECT_EQ(on_blackwell.arch, "sm_120");
  fs::remove_all(dir);
}
