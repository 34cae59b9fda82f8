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
  ASSERT_EQ(json["loaded"].size(), 1u) << result.out;
  EXPECT_EQ(json["loaded"][0]["name"], "good");
  EXPECT_EQ(json["loaded"][0]["modules"][0]["entry_points"][0], "scale");
  EXPECT_EQ(json["loaded"][0]["probe"]["answer"], 42);
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
  const auto none = run_archfit_with("ARCHFIT_PLUGIN_PATH= ", "plugins list --path /no/such/dir");
  EXPECT_EQ(none.exit_code, 0) << none.out;
  EXPECT_NE(none.out.find("no plugin folder exists"), std::string::npos) << none.out;
}
