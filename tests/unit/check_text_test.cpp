// The checklist's words (render/check_text): a feature that cannot run is
// said with what that means for the rest of its stack.
#include "render/check_text.hpp"

#include <gtest/gtest.h>

#include <sstream>

#include "report_by_hand.hpp"

using archfit::check::CheckReport;
using archfit::check::FeatureNote;
using archfit::check::StackResult;
using archfit::compat::Verdict;

namespace {

// An H100 with a PyTorch whose cuSPARSELt has sm_80 SASS only (the 2:4
// sparsity kernels), its stack running or not.
CheckReport report_with_a_feature_note(Verdict stack_verdict) {
  CheckReport report = archfit::testing::report_on_device("NVIDIA H100", {9, 0});
  StackResult torch = archfit::testing::pytorch_stack("2.5.1+cu124", stack_verdict);
  torch.per_device = {stack_verdict};
  torch.device = "NVIDIA H100";
  torch.notes.push_back(FeatureNote{"2:4 semi-structured sparsity", "nvidia-cusparselt-cu12",
                                    "/venv/nvidia/cusparselt/lib/libcusparseLt.so.0",
                                    Verdict::no_image, "NVIDIA H100", "SASS sm_80 only"});
  report.stacks = {torch};
  return report;
}

// The note's line as the checklist prints it for a stack with `verdict`.
std::string note_line(Verdict stack_verdict) {
  std::ostringstream out;
  archfit::render::print_check_text(out, report_with_a_feature_note(stack_verdict), false);
  const std::string text = out.str();
  const auto at = text.find("feature: ");
  return at == std::string::npos ? "(no feature line in: " + text + ")"
                                 : text.substr(at, text.find('\n', at) - at);
}

constexpr const char* kNoteWords =
    "feature: 2:4 semi-structured sparsity — will not work on NVIDIA H100 "
    "(libcusparseLt.so.0: no-image)";

}  // namespace

TEST(CheckText, AFeatureThatCannotRunBesideAStackThatRunsSaysTheRestRuns) {
  EXPECT_EQ(note_line(Verdict::native), std::string(kNoteWords) + "; the rest runs");
}

// Issue 36, item 6: "the rest runs" was said of a stack that does not run.
TEST(CheckText, AFeatureThatCannotRunInAStackThatFailsDoesNotSayTheRestRuns) {
  EXPECT_EQ(note_line(Verdict::no_image), kNoteWords);
}
