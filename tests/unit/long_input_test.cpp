// Text archfit did not write, as long as it comes, on a thread with a small
// stack (issue 34): an error line padded to megabytes, a torch/version.py
// whose one line is megabytes long. std::regex recursed once per character
// and killed the host on a 40 KB line; the patterns now run on RE2
// (util/pattern.hpp), in linear time and without recursion.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include "diagnose/diagnosis.hpp"
#include "env/cuda_driver.hpp"
#include "env/python_env.hpp"
#include "env/requirement.hpp"
#include "kb/knowledge_base.hpp"
#include "plugin/manifest.hpp"
#include "small_stack.hpp"
#include "util/pattern.hpp"

namespace {

using archfit::testing::kSmallStack;
constexpr size_t kLongLine = 16u << 20;  // 16 MB on one line

const archfit::kb::KnowledgeBase& kb() {
  static const auto loaded = archfit::kb::load_knowledge_base(ARCHFIT_KB_SOURCE_DIR);
  return loaded;
}

void on_small_stack(const std::function<void()>& work) {
  ASSERT_TRUE(archfit::testing::on_small_stack(work)) << "cannot make a thread with a small stack";
}

double megabytes_per_second(size_t bytes, std::chrono::steady_clock::duration took) {
  const double seconds = std::chrono::duration<double>(took).count();
  return static_cast<double>(bytes) / (1 << 20) / (seconds > 0 ? seconds : 1e-9);
}

TEST(LongInput, AnErrorPaddedToMegabytesIsDiagnosedOnASmallStack) {
  const std::string error =
      "RuntimeError: CUDA error: no kernel image is available for "
      "execution on the device";
  // The error, then a long tail on its own line; and a long head before it.
  const std::string tail = error + std::string(kLongLine, 'x');
  const std::string head = std::string(kLongLine, ' ') + "\n" + error;
  archfit::diagnose::Diagnosis with_tail;
  archfit::diagnose::Diagnosis with_head;
  std::chrono::steady_clock::duration took{};
  on_small_stack([&] {
    const auto start = std::chrono::steady_clock::now();
    with_tail = archfit::diagnose::diagnose(kb(), tail);
    took = std::chrono::steady_clock::now() - start;
    with_head = archfit::diagnose::diagnose(kb(), head);
  });
  EXPECT_EQ(with_tail.category, archfit::kb::ErrorCategory::no_kernel_image);
  EXPECT_EQ(with_head.category, archfit::kb::ErrorCategory::no_kernel_image);
  std::cout << "[ figure ] diagnose of a " << (kLongLine >> 20)
            << " MB line: " << megabytes_per_second(tail.size(), took) << " MB/s on a "
            << (kSmallStack >> 10) << " KB stack\n";
}

TEST(LongInput, WhitespaceDigitsAndTextAsAReportAreNotACrash) {
  std::string report;
  while (report.size() < kLongLine) report += "   1234567890 sm_ 12 . ( ) , text\t";
  on_small_stack([&] { (void)archfit::diagnose::diagnose(kb(), report); });
  SUCCEED();
}

TEST(LongInput, AVersionFileWithAMegabyteLineIsReadOnASmallStack) {
  const std::string version_py = "__version__ = '" + std::string(kLongLine, '9') +
                                 "'\ncuda: Optional[str] = '12.8'\n" + std::string(kLongLine, '#') +
                                 "\n";
  std::optional<archfit::env::TorchBuild> build;
  on_small_stack([&] { build = archfit::env::parse_torch_version_py(version_py); });
  ASSERT_TRUE(build);
  EXPECT_EQ(build->version.size(), kLongLine);
  EXPECT_EQ(build->cuda, "12.8");
}

TEST(LongInput, TheDriversVersionTextIsReadOnASmallStack) {
  const std::string text = std::string(kLongLine, 'K') +
                           " NVRM version: NVIDIA UNIX x86_64 Kernel Module  570.86.16  Thu";
  std::string release;
  on_small_stack([&] { release = archfit::env::parse_nvrm_release(text); });
  EXPECT_EQ(release, "570.86.16");
}

// A dist-info's METADATA and RECORD, as a package writes them: one header
// or row megabytes long, the fields after it still read.
TEST(LongInput, MetadataAndRecordWithAMegabyteLineAreReadOnASmallStack) {
  const std::string metadata =
      "Metadata-Version: 2.1\nSummary: " + std::string(kLongLine, 's') +
      "\nName: torch\nVersion: 2.8.0\nRequires-Dist: nvidia-cublas-cu12 (" +
      std::string(kLongLine, '=') + ")\n\n" + std::string(kLongLine, 'b');
  const std::string row =
      "torch/lib/libtorch_cuda.so,sha256=" + std::string(kLongLine, 'h') + ",42";
  std::string name;
  std::string version;
  std::vector<std::string> requires_dist;
  std::vector<std::string> fields;
  std::optional<archfit::env::Requirement> requirement;
  on_small_stack([&] {
    name = archfit::env::metadata_field(metadata, "Name");
    version = archfit::env::metadata_field(metadata, "Version");
    requires_dist = archfit::env::metadata_fields(metadata, "Requires-Dist");
    fields = archfit::env::parse_csv_line(row);
    requirement = archfit::env::parse_requirement(requires_dist.empty() ? "" : requires_dist[0]);
  });
  EXPECT_EQ(name, "torch");
  EXPECT_EQ(version, "2.8.0");
  ASSERT_EQ(requires_dist.size(), 1u);
  EXPECT_GT(requires_dist[0].size(), kLongLine);
  ASSERT_EQ(fields.size(), 3u);
  EXPECT_EQ(fields[2], "42");
  // A specifier of megabytes is nothing a command may carry: either refused
  // or read as written, never a crash.
  if (requirement) EXPECT_EQ(requirement->name, "nvidia-cublas-cu12");
}

// Why read_manifest refuses `text`, read on a small stack; "" when it takes it.
std::string manifest_refusal(const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("archfit_long_manifest_" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(path, std::ios::trunc) << text;
  std::string refused;
  on_small_stack([&] {
    try {
      (void)archfit::plugin::read_manifest(path);
    } catch (const archfit::plugin::PluginError& error) {
      refused = error.what();
    }
  });
  std::filesystem::remove(path);
  return refused;
}

// A plugin manifest (YAML, yaml-cpp) whose one value is megabytes long.
TEST(LongInput, APluginManifestWithAMegabyteLineIsRefusedOnASmallStack) {
  const std::string refused =
      manifest_refusal("schema: archfit.plugin/1\nname: " + std::string(kLongLine, 'n') +
                       "\nlibrary: lib.so\nabi: 1\n");
  EXPECT_NE(refused.find("name"), std::string::npos) << refused.substr(0, 200);
}

// yaml-cpp recurses once per level of nesting, not per character: Debian's
// 0.7.0 refuses a document nested more than about 500 deep ("bad file"),
// so a manifest nested 100,000 deep, flow or block style, is refused on a
// small stack, not a crash (the host reads a manifest before it judges who
// may write it).
TEST(LongInput, APluginManifestNestedDeeplyIsRefusedOnASmallStack) {
  std::string block = "schema: archfit.plugin/1\nname:\n";
  for (size_t level = 0; level < 3000; ++level) block += std::string(level + 2, ' ') + "- \n";
  const std::string flow = "schema: archfit.plugin/1\nname: " + std::string(100000, '[') +
                           std::string(100000, ']') + "\nlibrary: l.so\nabi: 1\n";
  EXPECT_FALSE(manifest_refusal(flow).empty());
  EXPECT_FALSE(manifest_refusal(block).empty());
}

TEST(LongInput, APatternFindsEveryMatchInALongTextInLinearTime) {
  const archfit::util::Pattern name(R"((?:sm|compute)_[0-9]+[af]?)");
  std::string list;
  for (int i = 0; i < 100000; ++i) list += "sm_90a, compute_120, ";
  std::vector<std::string> found;
  on_small_stack([&] { found = name.find_all(list); });
  ASSERT_EQ(found.size(), 200000u);
  EXPECT_EQ(found.front(), "sm_90a");
  EXPECT_EQ(found.back(), "compute_120");
  // A pattern RE2 cannot run (a backreference) says so instead of running.
  const archfit::util::Pattern backreference(R"((a)\1)");
  EXPECT_FALSE(backreference.ok());
  EXPECT_FALSE(backreference.error().empty());
  EXPECT_FALSE(backreference.found_in("aa"));
}

}  // namespace
