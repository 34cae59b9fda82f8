// `archfit plugins list`: what it found, loaded and rejected, as a user runs
// it, over the purpose-built plugins of tests/plugins.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "run_archfit.hpp"

namespace {

const std::string kPlugins = ARCHFIT_TEST_PLUGIN_DIR;

}  // namespace

TEST(CliPlugins, ListsLoadedAndRejectedWithReasonsAndExitsOneWhenSomeAreRejected) {
  const auto result = run_archfit_with("ARCHFIT_PLUGIN_PATH= ", "plugins list --json --path '" +
                                                                   kPlugins + "'");
  EXPECT_EQ(result.exit_code, 1) << result.out;
  const auto json = nlohmann::json::parse(result.out);
  // The test plugins' good one, and the build's own (imagegen_ops) when built.
  nlohmann::json good;
  for (const auto& plugin : json["loaded"]) {
    if (plugin["name"] == "good") good = plugin;
    else EXPECT_EQ(plugin["name"], "imagegen_ops");
  }
  ASSERT_FALSE(good.is_null()) << result.out;
  EXPECT_EQ(good["modules"][0]["entry_points"][0], "scale");
  EXPECT_EQ(good["probe"]["answer"], 42);
  EXPECT_EQ(json["rejected"].size(), 8u);
  for (const auto& rejected : json["rejected"])
    EXPECT_FALSE(rejected["reason"].get<std::string>().empty()) << rejected["path"];
}

TEST(CliPlugins, OnlyGoodPluginsExitZero) {
  const auto result =
      run_archfit_with("ARCHFIT_PLUGIN_PATH= ", "plugins list --path '" + kPlugins + "/good'");
  EXPECT_EQ(result.exit_code, 0) << result.out;
  EXPECT_NE(result.out.find("loaded    good 1.2.3  (ABI 1, 1 kernel module, a probe"),
            std::string::npos)
      << result.out;
  // A folder that does not exist is not searched, and is no error.
  const auto none = run_archfit_with("ARCHFIT_PLUGIN_PATH= ", "plugins list --path /no/such/dir");
  EXPECT_EQ(none.exit_code, 0) << none.out;
  EXPECT_EQ(none.out.find("/no/such/dir"), std::string::npos) << none.out;
}
