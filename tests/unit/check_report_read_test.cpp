// check/report_read: the inverse of report_json. A real check of a
// site-packages built from the nvcc fixtures (torch with SASS sm_86/sm_89,
// xformers with SASS sm_80, fastops with compute_90 PTX only), written as
// archfit.check/1 and read back, gives compat's own types with the values
// the CheckReport held; bad documents are refused naming the field.
#include "check/report_read.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <set>

#include "check/check.hpp"
#include "check/report_json.hpp"
#include "check_resources.hpp"
#include "fixture_site.hpp"

namespace fs = std::filesystem;
using archfit::check::read_report;
using archfit::check::ReportReadError;
using archfit::compat::Verdict;

namespace {

class CheckReportRead : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const auto missing = archfit::testing::missing_three_build_fixture(); !missing.empty())
      GTEST_SKIP() << "nvcc fixture not built: " << missing;
    site_ = std::make_unique<archfit::testing::FixtureSite>("report_read");
    archfit::testing::install_three_builds(*site_);
  }

  archfit::check::CheckReport checked(std::vector<std::string> gpus, const std::string& driver) {
    archfit::check::CheckRequest options;
    options.gpus = std::move(gpus);
    options.driver = driver;
    options.site_packages = {site_->root()};
    const auto resources = archfit::testing::check_resources(
        site_->root() / "no-driver-here" / "libcuda.so.1", fs::path(ARCHFIT_KB_SOURCE_DIR));
    return archfit::check::run_check(options, resources);
  }

  std::unique_ptr<archfit::testing::FixtureSite> site_;
};

std::vector<std::string> names(const std::vector<archfit::compat::Target>& targets) {
  std::vector<std::string> out;
  for (const auto& target : targets) out.push_back(target.to_string());
  return out;
}

}  // namespace

TEST_F(CheckReportRead, WhatReportJsonWritesReadsBackAsTheReportHeldIt) {
  // On an RTX 4090 (sm_89): torch and xformers run natively, fastops's
  // compute_90 PTX cannot be JIT-compiled down to sm_89 (no-image).
  const auto report = checked({"RTX 4090"}, "570.86");
  const auto read = read_report(archfit::check::check_document(report), "archfit check");
  EXPECT_EQ(read.source, "archfit check");

  ASSERT_EQ(read.devices.size(), report.devices.size());
  for (size_t i = 0; i < read.devices.size(); ++i) {
    EXPECT_EQ(read.devices[i].name, report.devices[i].name);
    EXPECT_EQ(read.devices[i].cc, report.devices[i].cc);
    EXPECT_EQ(read.devices[i].simulated, report.devices[i].simulated);
  }
  EXPECT_EQ(read.devices[0].sm(), "sm_89");
  EXPECT_EQ(read.torch, report.torch.value_or(""));

  ASSERT_EQ(read.components.size(), report.components.size());
  for (size_t i = 0; i < read.components.size(); ++i) {
    const auto& mine = read.components[i];
    const auto& theirs = report.components[i];
    SCOPED_TRACE(theirs.component.name);
    EXPECT_EQ(mine.name, theirs.component.name);
    EXPECT_EQ(mine.verdict.verdict, theirs.verdict);
    EXPECT_EQ(mine.blocks, theirs.blocks());
    EXPECT_EQ(mine.runs(), archfit::compat::runs(theirs.verdict));
    EXPECT_EQ(mine.device, theirs.device);
    ASSERT_EQ(mine.binaries.size(), theirs.binaries.size());
    for (size_t b = 0; b < mine.binaries.size(); ++b) {
      EXPECT_EQ(mine.binaries[b].verdict.verdict, theirs.binaries[b].judgement.verdict);
      EXPECT_EQ(names(mine.binaries[b].sass), theirs.binaries[b].judgement.sass);
      EXPECT_EQ(names(mine.binaries[b].ptx), theirs.binaries[b].judgement.ptx);
    }
  }
  const auto* fastops = read.component("FastOps");  // as pip compares names
  ASSERT_NE(fastops, nullptr);
  ASSERT_EQ(fastops->binaries.size(), 1u);
  ASSERT_EQ(fastops->binaries[0].ptx.size(), 1u);
  EXPECT_TRUE(fastops->binaries[0].ptx[0].ptx);
  EXPECT_EQ(fastops->binaries[0].ptx[0].arch.cc, (archfit::compat::ComputeCapability{9, 0}));

  ASSERT_EQ(read.stacks.size(), report.stacks.size());
  for (size_t i = 0; i < read.stacks.size(); ++i) {
    EXPECT_EQ(read.stacks[i].name, report.stacks[i].name);
    EXPECT_EQ(read.stacks[i].verdict.verdict, report.stacks[i].verdict);
  }
  // Each component's verdict is one compat knows, and more than one occurs.
  std::set<Verdict> seen;
  for (const auto& component : read.components) {
    ASSERT_TRUE(component.verdict.verdict) << component.verdict.name;
    seen.insert(*component.verdict.verdict);
  }
  EXPECT_GE(seen.size(), 2u);
}

TEST(CheckReportReadDocument, AVerdictThisArchfitDoesNotKnowIsKeptByNameAndBlocksNothing) {
  const nlohmann::json document = {
      {"schema", "archfit.check/1"},
      {"devices", {{{"name", "B300"}, {"sm", 103}}}},
      {"components",
       {{{"name", "newlib"},
         {"verdict", "needs-a-newer-rule"},
         {"binaries", {{{"verdict", "needs-a-newer-rule"}, {"sass", {"sm_103", "sm_5"}}}}}}}}};
  const auto read = read_report(document, "saved.json");
  ASSERT_EQ(read.components.size(), 1u);
  EXPECT_FALSE(read.components[0].verdict.verdict);
  EXPECT_EQ(read.components[0].verdict.name, "needs-a-newer-rule");
  EXPECT_FALSE(read.components[0].blocks);
  EXPECT_FALSE(read.components[0].runs());
  // "sm_5" (what a damaged image's arch field makes) is no target: left out.
  EXPECT_EQ(names(read.components[0].binaries[0].sass), std::vector<std::string>{"sm_103"});
  EXPECT_EQ(read.devices[0].cc, (archfit::compat::ComputeCapability{10, 3}));
}

TEST(CheckReportReadDocument, ADocumentThatIsNotACheckReportIsRefusedNamingTheField) {
  const auto message = [](const nlohmann::json& document) -> std::string {
    try {
      read_report(document, "x");
    } catch (const ReportReadError& error) {
      return error.what();
    }
    return "(read)";
  };
  EXPECT_EQ(message(nlohmann::json::array()), "the report is not a JSON object");
  EXPECT_NE(message({{"schema", "archfit.scan/1"}}).find("archfit.scan/1"), std::string::npos);
  EXPECT_EQ(message({{"schema", "archfit.check/1"}, {"devices", {{{"sm", "120"}}}}}),
            "devices[0].sm is string, not number");
}
