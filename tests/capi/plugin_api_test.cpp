// The plugin C ABI (archfit_plugins_load and the set's accessors) as a host
// sees it: the bundled imagegen_ops plugin and the purpose-built bad plugins
// of tests/plugins found, the bad ones rejected with path and reason, and a
// kernel module made from a plugin's module by name, loaded on a simulated
// RTX 4090 through the test driver.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "archfit/archfit.h"

namespace fs = std::filesystem;

namespace {

class PluginApi : public ::testing::Test {
 protected:
  void SetUp() override {
    cache_ = fs::temp_directory_path() / ("archfit_plugin_api_" + std::to_string(::getpid()));
    ::setenv("ARCHFIT_CACHE_DIR", cache_.c_str(), 1);
    ::setenv("ARCHFIT_FAKE_CUDA_DEVICES", "NVIDIA GeForce RTX 4090,8.9,1", 1);
    archfit_context_options options{};
    options.struct_size = sizeof options;
    options.libcuda = ARCHFIT_FAKE_CUDA;
    ASSERT_EQ(archfit_context_create(&options, &context_), ARCHFIT_OK) << archfit_last_error();
  }
  void TearDown() override {
    archfit_plugin_set_destroy(set_);
    archfit_context_destroy(context_);
    fs::remove_all(cache_);
    ::unsetenv("ARCHFIT_CACHE_DIR");
    ::unsetenv("ARCHFIT_FAKE_CUDA_DEVICES");
  }
  // Only the folders given: not ARCHFIT_PLUGIN_PATH, not the install's.
  void load(std::initializer_list<const char*> folders) {
    const std::vector<const char*> paths(folders);
    archfit_plugin_search search{};
    search.struct_size = sizeof search;
    search.paths = paths.data();
    search.path_count = paths.size();
    search.skip_environment = 1;
    search.skip_install_dir = 1;
    ASSERT_EQ(archfit_plugins_load(context_, &search, &set_), ARCHFIT_OK) << archfit_last_error();
  }
  archfit_context* context_ = nullptr;
  archfit_plugin_set* set_ = nullptr;
  fs::path cache_;
};

TEST_F(PluginApi, TheBundledPluginIsListedWithItsModules) {
  load({ARCHFIT_PLUGIN_BUILD_DIR});
  std::size_t imagegen = archfit_plugin_set_count(set_);
  for (std::size_t i = 0; i < archfit_plugin_set_count(set_); ++i) {
    archfit_plugin_entry entry{};
    entry.struct_size = sizeof entry;
    ASSERT_EQ(archfit_plugin_set_get(set_, i, &entry), ARCHFIT_OK) << archfit_last_error();
    if (std::string(entry.name) == "imagegen_ops") imagegen = i;
  }
  ASSERT_LT(imagegen, archfit_plugin_set_count(set_)) << "imagegen_ops was not loaded";
  archfit_plugin_entry entry{};
  entry.struct_size = sizeof entry;
  ASSERT_EQ(archfit_plugin_set_get(set_, imagegen, &entry), ARCHFIT_OK);
  EXPECT_EQ(entry.abi, 1u);
  EXPECT_EQ(entry.module_count, 4u);
  EXPECT_EQ(entry.probe_json, nullptr);
  EXPECT_TRUE(fs::exists(entry.manifest)) << entry.manifest;
  EXPECT_GT(entry.milliseconds, 0.0);
  EXPECT_STREQ(archfit_plugin_set_module_name(set_, imagegen, 0), "imagegen_ops.rmsnorm");
  EXPECT_EQ(archfit_plugin_set_module_name(set_, imagegen, 4), nullptr);
  EXPECT_EQ(archfit_plugin_set_module_name(set_, 99, 0), nullptr);
}

TEST_F(PluginApi, BadPluginsAreRejectedWithPathAndReasonAndTheGoodOneLoads) {
  load({ARCHFIT_TEST_PLUGIN_DIR});
  ASSERT_EQ(archfit_plugin_set_count(set_), 1u);
  archfit_plugin_entry entry{};
  entry.struct_size = sizeof entry;
  ASSERT_EQ(archfit_plugin_set_get(set_, 0, &entry), ARCHFIT_OK);
  EXPECT_STREQ(entry.name, "good");
  ASSERT_EQ(archfit_plugin_set_rejected_count(set_), 8u);
  bool saw_throwing = false;
  for (std::size_t i = 0; i < archfit_plugin_set_rejected_count(set_); ++i) {
    const std::string path = archfit_plugin_set_rejected_path(set_, i);
    const std::string reason = archfit_plugin_set_rejected_reason(set_, i);
    EXPECT_EQ(path.rfind(ARCHFIT_TEST_PLUGIN_DIR, 0), 0u) << path;
    EXPECT_FALSE(reason.empty()) << path;
    if (path.find("/throwing/") != std::string::npos) {
      saw_throwing = true;
      EXPECT_NE(reason.find("threw"), std::string::npos) << reason;
    }
  }
  EXPECT_TRUE(saw_throwing);
  EXPECT_EQ(archfit_plugin_set_rejected_path(set_, 8), nullptr);
  EXPECT_EQ(archfit_plugin_set_rejected_reason(set_, 8), nullptr);

  const char* text = nullptr;
  ASSERT_EQ(archfit_plugin_set_json(set_, &text), ARCHFIT_OK);
  const auto document = nlohmann::json::parse(text);
  EXPECT_EQ(document["loaded"].size(), 1u);
  EXPECT_EQ(document["rejected"].size(), 8u);
  EXPECT_EQ(document["searched"][0], ARCHFIT_TEST_PLUGIN_DIR);
}

TEST_F(PluginApi, AModuleMadeByNameLoadsItsPrebuiltImageOnAnAda) {
  load({ARCHFIT_PLUGIN_BUILD_DIR});
  archfit_module* module = nullptr;
  ASSERT_EQ(archfit_plugin_set_module_create(context_, set_, "imagegen_ops.rmsnorm", &module),
            ARCHFIT_OK)
      << archfit_last_error();
  // The set may go first: the module holds its own copy of what the plugin gave.
  archfit_plugin_set_destroy(set_);
  set_ = nullptr;
  archfit_loaded_module* loaded = nullptr;
  ASSERT_EQ(archfit_module_load(module, 0, &loaded), ARCHFIT_OK) << archfit_last_error();
  archfit_load_info info{};
  info.struct_size = sizeof info;
  ASSERT_EQ(archfit_loaded_module_info(loaded, &info), ARCHFIT_OK);
  EXPECT_STREQ(info.path, "prebuilt-sass");
  EXPECT_STREQ(info.arch, "sm_89");
  void* kernel = nullptr;
  EXPECT_EQ(archfit_loaded_module_function(loaded, "rmsnorm_f32", &kernel), ARCHFIT_OK)
      << archfit_last_error();
  EXPECT_NE(kernel, nullptr);
  archfit_loaded_module_destroy(loaded);
  archfit_module_destroy(module);
}

TEST_F(PluginApi, AnUnknownModuleNameListsWhatIsOffered) {
  load({ARCHFIT_PLUGIN_BUILD_DIR});
  archfit_module* module = reinterpret_cast<archfit_module*>(0x1);
  EXPECT_EQ(archfit_plugin_set_module_create(context_, set_, "imagegen_ops.softmax", &module),
            ARCHFIT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(module, reinterpret_cast<archfit_module*>(0x1));  // untouched on failure
  const std::string error = archfit_last_error();
  EXPECT_NE(error.find("\"imagegen_ops.softmax\""), std::string::npos) << error;
  EXPECT_NE(error.find("imagegen_ops.rmsnorm"), std::string::npos) << error;
}

TEST_F(PluginApi, BadArgumentsAreRefusedByName) {
  archfit_plugin_set* set = nullptr;
  EXPECT_EQ(archfit_plugins_load(nullptr, nullptr, &set), ARCHFIT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(archfit_last_error()).find("context"), std::string::npos);
  archfit_plugin_search search{};
  search.struct_size = sizeof search;
  search.path_count = 2;  // and no paths
  EXPECT_EQ(archfit_plugins_load(context_, &search, &set), ARCHFIT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(archfit_last_error()).find("paths"), std::string::npos);
  EXPECT_EQ(set, nullptr);

  load({ARCHFIT_TEST_PLUGIN_DIR});
  archfit_plugin_entry entry{};
  entry.struct_size = 8;  // an old or uninitialised struct
  EXPECT_EQ(archfit_plugin_set_get(set_, 0, &entry), ARCHFIT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(archfit_last_error()).find("struct_size"), std::string::npos);
  entry.struct_size = sizeof entry;
  EXPECT_EQ(archfit_plugin_set_get(set_, 5, &entry), ARCHFIT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(archfit_last_error()).find("out of range"), std::string::npos);
  EXPECT_EQ(archfit_plugin_set_count(nullptr), 0u);
  EXPECT_EQ(archfit_plugin_set_rejected_count(nullptr), 0u);
  archfit_plugin_set_destroy(nullptr);  // a no-op, as free(NULL)
}

}  // namespace

// archfit_plugin_set_create is the consistent name (docs/c-abi.md, "Names");
// archfit_plugins_load, the first release's, is kept as the same call.
TEST_F(PluginApi, PluginSetCreateIsTheCallPluginsLoadWas) {
  load({ARCHFIT_PLUGIN_BUILD_DIR});  // through archfit_plugins_load
  const char* paths[] = {ARCHFIT_PLUGIN_BUILD_DIR};
  archfit_plugin_search search{};
  search.struct_size = sizeof search;
  search.paths = paths;
  search.path_count = 1;
  search.skip_environment = 1;
  search.skip_install_dir = 1;
  archfit_plugin_set* created = nullptr;
  ASSERT_EQ(archfit_plugin_set_create(context_, &search, &created), ARCHFIT_OK)
      << archfit_last_error();
  ASSERT_EQ(archfit_plugin_set_count(created), archfit_plugin_set_count(set_));
  for (std::size_t i = 0; i < archfit_plugin_set_count(set_); ++i) {
    archfit_plugin_entry old_name{}, new_name{};
    old_name.struct_size = new_name.struct_size = sizeof old_name;
    ASSERT_EQ(archfit_plugin_set_get(set_, i, &old_name), ARCHFIT_OK);
    ASSERT_EQ(archfit_plugin_set_get(created, i, &new_name), ARCHFIT_OK);
    EXPECT_STREQ(old_name.name, new_name.name);
    EXPECT_EQ(old_name.module_count, new_name.module_count);
  }
  archfit_plugin_set_destroy(created);
  archfit_plugin_set* none = nullptr;
  EXPECT_EQ(archfit_plugin_set_create(nullptr, nullptr, &none), ARCHFIT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(std::string(archfit_last_error()).rfind("archfit_plugin_set_create: ", 0), 0u)
      << archfit_last_error();
}
