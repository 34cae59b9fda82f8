// diagnose/: the last error found in real-format texts, its category from
// the knowledge base's signatures, and the component its frames name. The
// corpus under tests/data/errors (corpus.yaml lists each file with its
// expected category and component) holds the exact formats PyTorch,
// ComfyUI, InvokeAI, cuBLAS, cuDNN, Triton and the attention libraries print.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <fstream>
#include <random>
#include <set>
#include <sstream>

#include "diagnose/diagnosis.hpp"
#include "kb/knowledge_base.hpp"
#include "render/diagnosis_text.hpp"

namespace fs = std::filesystem;
using namespace archfit::diagnose;

namespace {

const fs::path kCorpus = fs::path(ARCHFIT_TEST_DATA_DIR) / "errors";

const archfit::kb::KnowledgeBase& kb() {
  static const auto loaded = archfit::kb::load_knowledge_base(ARCHFIT_KB_SOURCE_DIR);
  return loaded;
}

std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(DiagnoseCorpus, EveryTextGetsItsCategoryAndComponent) {
  const YAML::Node corpus = YAML::LoadFile((kCorpus / "corpus.yaml").string());
  ASSERT_TRUE(corpus.IsSequence());
  ASSERT_GE(corpus.size(), 20u);
  std::map<std::string, int> per_category;
  for (const auto& entry : corpus) {
    const std::string file = entry["file"].as<std::string>();
    const std::string expected = entry["category"].as<std::string>();
    SCOPED_TRACE(file);
    const Diagnosis d = diagnose(kb(), read_bytes(kCorpus / file));
    EXPECT_EQ(archfit::kb::to_string(d.category), expected) << archfit::render::diagnosis_text(d);
    ++per_category[expected];
    if (entry["component"]) {
      EXPECT_TRUE(d.component.has_value()) << archfit::render::diagnosis_text(d);
      if (!d.component) continue;
      EXPECT_EQ(d.component->name, entry["component"].as<std::string>()) << d.component->why;
      if (entry["component_kind"])
        EXPECT_EQ(d.component->kind, entry["component_kind"].as<std::string>());
    }
    if (entry["arch"])
      EXPECT_EQ(d.sm, entry["arch"].as<std::string>()) << archfit::render::diagnosis_text(d);
    if (entry["printed_by"]) {
      EXPECT_TRUE(d.printed_by.has_value()) << archfit::render::diagnosis_text(d);
      if (d.printed_by) EXPECT_EQ(d.printed_by->library, entry["printed_by"].as<std::string>());
    }
    // Whatever the input, the JSON is valid UTF-8 and names the schema.
    const auto json = to_json(d);
    EXPECT_EQ(json["schema"], "archfit.diagnosis/1");
    EXPECT_NO_THROW(json.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  }
  for (const auto& signature : kb().error_signatures())
    EXPECT_GE(per_category[std::string(archfit::kb::to_string(signature.category))], 2)
        << "too few texts of " << archfit::kb::to_string(signature.category);
  EXPECT_GE(per_category["not-recognised"], 2);
}

// The knowledge base and the corpus stay together: a pattern no corpus text
// is diagnosed by (first, as the one that matched) is untested, and fails
// here; so does a `gpu_arch`, `gpu_name` or `built_for` expression no text
// holds.
TEST(DiagnoseCorpus, EveryPatternOfTheKnowledgeBaseHasATextItDiagnoses) {
  const YAML::Node corpus = YAML::LoadFile((kCorpus / "corpus.yaml").string());
  std::set<std::string> diagnosed_by;
  std::vector<std::string> texts;
  for (const auto& entry : corpus) {
    texts.push_back(read_bytes(kCorpus / entry["file"].as<std::string>()));
    diagnosed_by.insert(diagnose(kb(), texts.back()).pattern);
  }
  for (const auto& signature : kb().error_signatures())
    for (const auto& pattern : signature.patterns)
      EXPECT_TRUE(diagnosed_by.count(pattern))
          << archfit::kb::to_string(signature.category) << ": no corpus text is diagnosed by '"
          << pattern << "'";
  const auto held = [&](const archfit::util::Pattern& regex) {
    return std::any_of(texts.begin(), texts.end(),
                       [&](const std::string& text) { return regex.found_in(text); });
  };
  for (const auto& arch : kb().gpu_arch_patterns())
    EXPECT_TRUE(held(arch.regex)) << "gpu_arch: no corpus text holds '" << arch.pattern << "'";
  for (const auto& name : kb().gpu_name_patterns())
    EXPECT_TRUE(held(name)) << "gpu_name: a pattern no corpus text holds";
  for (const auto& built : kb().built_for_patterns())
    EXPECT_TRUE(held(built.regex)) << "built_for: no corpus text holds '" << built.pattern << "'";
}

TEST(DiagnoseText, TheLastOfTwoTracebacksIsTheError) {
  const std::string log =
      "Traceback (most recent call last):\n"
      "  File \"/x/site-packages/torch/cuda/__init__.py\", line 1, in f\n"
      "    g()\n"
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB\n\n"
      "got prompt\n"
      "Traceback (most recent call last):\n"
      "  File \"C:\\ComfyUI_windows_portable\\ComfyUI\\custom_nodes\\ComfyUI-KJNodes\\nodes.py\", "
      "line 12, in run\n"
      "    y = f(x)\n"
      "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
      "CUDA kernel errors might be asynchronously reported at some other API call, so the "
      "stacktrace below might be incorrect.\n\nPrompt executed in 1.00 seconds\n";
  const Diagnosis d = diagnose(kb(), log);
  EXPECT_EQ(archfit::kb::to_string(d.category), "no-kernel-image");
  EXPECT_EQ(archfit::diagnose::to_string(d.confidence), "high");
  EXPECT_EQ(d.error.exception_type, "RuntimeError");
  EXPECT_EQ(d.error.message.rfind("CUDA error: no kernel image", 0), 0u) << d.error.message;
  EXPECT_EQ(d.error.message.find("Prompt executed"), std::string::npos);
  ASSERT_EQ(d.error.frames.size(), 1u);
  EXPECT_EQ(d.error.frames[0].line, 12);
  ASSERT_TRUE(d.component);
  EXPECT_EQ(d.component->name, "ComfyUI-KJNodes");
  EXPECT_EQ(d.component->kind, "custom_node");
}

TEST(DiagnoseText, ALibraryWithItsOwnCudaCodeIsBlamedBeforeTheNodePackThatCalledIt) {
  const std::vector<Frame> frames = {
      {"/c/custom_nodes/pack/n.py", 1, "run"},
      {"/v/lib/python3.12/site-packages/flash_attn/flash_attn_interface.py", 2, "fwd"},
      {"/v/lib/python3.12/site-packages/torch/_ops.py", 3, "__call__"}};
  const auto culprit = attribute(frames, &kb());
  ASSERT_TRUE(culprit);
  EXPECT_EQ(culprit->name, "flash-attn");
  EXPECT_EQ(culprit->kind, "distribution");
  // Without such a library, torch alone is named.
  const auto torch_only = attribute({frames[2]}, &kb());
  ASSERT_TRUE(torch_only);
  EXPECT_EQ(torch_only->name, "torch");
}

TEST(DiagnoseText, TheGpuArchComesFromWhatTheMessageSaysOfTheGpu) {
  const Diagnosis warning = diagnose(
      kb(),
      "UserWarning: NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with "
      "the current PyTorch installation.\nThe current PyTorch install supports CUDA "
      "capabilities sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90.");
  EXPECT_EQ(archfit::kb::to_string(warning.category), "no-kernel-image");
  EXPECT_EQ(warning.sm, "sm_120");
  EXPECT_NE(warning.explanation.find("sm_120"), std::string::npos);
  // SageAttention names the kernel it wanted, not the GPU.
  const Diagnosis sage = diagnose(kb(),
                                  "Error running sage attention: SM89 kernel is not "
                                  "available, using pytorch attention instead");
  EXPECT_EQ(archfit::kb::to_string(sage.category), "library-arch-mismatch");
  EXPECT_EQ(sage.sm, "");
}

TEST(DiagnoseText, AnAsyncErrorSaysTheStackMayLieAndGivesTheRerunCommand) {
  const Diagnosis d = diagnose(
      kb(),
      "Traceback (most recent call last):\n"
      "  File \"C:\\ComfyUI_windows_portable\\python_embeded\\Lib\\site-packages\\torch\\x.py\", "
      "line 1, in f\n    g()\nRuntimeError: CUDA error: an illegal memory access was "
      "encountered\n");
  EXPECT_EQ(archfit::kb::to_string(d.category), "async-error");
  ASSERT_FALSE(d.fix.empty());
  EXPECT_NE(d.fix[0].line().find("set CUDA_LAUNCH_BLOCKING=1 && .\\python_embeded\\python.exe"),
            std::string::npos)
      << d.fix[0].line();
}

TEST(DiagnoseText, ACudaErrorNumberAloneIsRecognisedWithMediumConfidence) {
  DiagnoseOptions options;
  options.cuda_error = 209;
  const Diagnosis d = diagnose(kb(), "the op failed", options);
  EXPECT_EQ(archfit::kb::to_string(d.category), "no-kernel-image");
  EXPECT_EQ(archfit::diagnose::to_string(d.confidence), "medium");
}

TEST(DiagnoseText, ATracebackGivenApartNamesTheComponentOfTheMessage) {
  DiagnoseOptions options;
  options.traceback =
      "Traceback (most recent call last):\n"
      "  File \"/v/lib/python3.12/site-packages/bitsandbytes/functional.py\", line 9, in f\n"
      "    g()\n"
      "RuntimeError: CUDA error: no kernel image is available for execution on the device\n";
  const Diagnosis d = diagnose(kb(), "the op failed", options);
  EXPECT_EQ(archfit::kb::to_string(d.category), "no-kernel-image");
  ASSERT_TRUE(d.component);
  EXPECT_EQ(d.component->name, "bitsandbytes");
}

TEST(DiagnoseText, DockerComposePrefixesLeaveEveryLineOfTheMessage) {
  const std::string traceback =
      "comfyui-1  | Traceback (most recent call last):\n"
      "comfyui-1  |   File \"/opt/conda/lib/python3.11/site-packages/torch/nn/x.py\", line 5, "
      "in f\n"
      "comfyui-1  |     g()\n"
      "comfyui-1  | RuntimeError: CUDA error: no kernel image is available for execution on the "
      "device\n"
      "comfyui-1  | CUDA kernel errors might be asynchronously reported at some other API call\n"
      "comfyui-1 exited with code 1\n";
  const Diagnosis d = diagnose(kb(), traceback);
  EXPECT_EQ(archfit::kb::to_string(d.category), "no-kernel-image");
  EXPECT_EQ(d.error.exception_type, "RuntimeError");
  EXPECT_EQ(d.error.message,
            "CUDA error: no kernel image is available for execution on the device\n"
            "CUDA kernel errors might be asynchronously reported at some other API call");
  // A log line with no traceback: the prefix is not taken for an exception type.
  const Diagnosis line =
      diagnose(kb(),
               "comfyui-1  | starting\ncomfyui-1  | RuntimeError: CUDA error: no kernel image is "
               "available for execution on the device\ncomfyui-1  | Compile with "
               "`TORCH_USE_CUDA_DSA` to enable device-side assertions.\n");
  EXPECT_EQ(line.error.kind, "log");
  EXPECT_EQ(line.error.exception_type, "RuntimeError");
  EXPECT_EQ(line.error.message.find("comfyui-1"), std::string::npos) << line.error.message;
  EXPECT_NE(line.error.message.find("\nCompile with"), std::string::npos) << line.error.message;
}

TEST(DiagnoseText, PaddingBeforeTheErrorOnItsLineIsNotPartOfTheMessage) {
  // A megabyte of spaces or NUL bytes (a preallocated or truncated log),
  // or a terminal's overwritten progress ('\r'), before the error on the
  // same line: the message is the error alone, bounded, and recognised.
  const std::string error =
      "RuntimeError: CUDA error: no kernel image is available for execution on the device";
  for (const std::string& padding :
       {std::string(1 << 20, ' '), std::string(1 << 20, '\0'), std::string("45%|####  |\r"),
        std::string(1 << 20, '\0') + "  \t"}) {
    const Diagnosis d = diagnose(kb(), "got prompt\n" + padding + error + "\n");
    EXPECT_EQ(archfit::kb::to_string(d.category), "no-kernel-image") << padding.size();
    EXPECT_EQ(d.error.exception_type, "RuntimeError") << padding.size();
    EXPECT_EQ(d.error.message.rfind("CUDA error: no kernel image", 0), 0u) << padding.size();
  }
  // In a traceback: NULs before its exception line.
  const Diagnosis traced = diagnose(kb(),
                                    "Traceback (most recent call last):\n  File \"/x.py\", "
                                    "line 1, in f\n" +
                                        std::string(1 << 20, '\0') + error);
  EXPECT_EQ(archfit::kb::to_string(traced.category), "no-kernel-image");
  EXPECT_EQ(traced.error.exception_type, "RuntimeError");
  // A line longer than a message may be: its end is read, and bounded.
  const Diagnosis long_line = diagnose(kb(), std::string(4 << 20, 'x') + " " + error);
  EXPECT_EQ(archfit::kb::to_string(long_line.category), "no-kernel-image");
  EXPECT_LE(long_line.error.message.size(), kMaxErrorBytes);
}

TEST(DiagnoseText, EmptyBinaryHugeAndUnknownInputsAreNotRecognisedWithoutCrashing) {
  EXPECT_FALSE(diagnose(kb(), "").recognised());
  EXPECT_FALSE(diagnose(kb(), "\n\n  \n").recognised());
  std::mt19937 random(7);
  std::string garbage(1 << 16, '\0');
  for (auto& c : garbage) c = static_cast<char>(random());
  EXPECT_NO_THROW(to_json(diagnose(kb(), garbage))
                      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  const Diagnosis line = diagnose(kb(), std::string(4 << 20, 'x'));
  EXPECT_FALSE(line.recognised());
  EXPECT_LE(line.error.message.size(), kMaxErrorBytes);
  // One 1 MiB line of random words, no newline, no error (generated here
  // rather than kept in the corpus).
  std::string words;
  while (words.size() < (1u << 20)) words += std::to_string(random()) + (random() % 7 ? "x " : " ");
  const Diagnosis long_line = diagnose(kb(), words);
  EXPECT_FALSE(long_line.recognised());
  EXPECT_LE(long_line.error.message.size(), kMaxErrorBytes);
  const Diagnosis unknown = diagnose(kb(), "KeyError: 'model'");
  EXPECT_FALSE(unknown.recognised());
  EXPECT_EQ(archfit::diagnose::to_string(unknown.confidence), "none");
  EXPECT_EQ(unknown.error.exception_type, "KeyError");
  ASSERT_FALSE(unknown.notes.empty());
  // A truncated traceback: frames and no exception line.
  EXPECT_NO_THROW(diagnose(kb(), "Traceback (most recent call last):\n  File \"/a.py\", line"));
}

}  // namespace

namespace {

// A fix is steps, not strings (issue 32): what a step fixes is its `about`,
// never a "Name: " prefix read back; only steps made for the environment are
// commands a headline may offer.
TEST(DiagnoseFixSteps, AStepSaysWhatItFixesAndOnlyEnvironmentCommandsAreCommands) {
  const archfit::diagnose::FixStep sentence{
      .about = "xformers", .text = "upgrade it", .command = ""};
  const archfit::diagnose::FixStep command{.about = "xformers", .text = "", .command = "run this"};
  const archfit::diagnose::FixStep generic{
      .about = "", .text = "xformers: looks named", .command = ""};
  EXPECT_EQ(sentence.line(), "xformers: upgrade it");
  EXPECT_EQ(command.line(), "run this");
  EXPECT_EQ(generic.line(), "xformers: looks named");
  EXPECT_TRUE(sentence.names("xformers"));
  EXPECT_FALSE(command.names("xformers"));  // a command alone does not name what it fixes
  EXPECT_FALSE(generic.names("xformers"));  // words that look like a name are not one
  EXPECT_EQ(archfit::diagnose::fix_commands({sentence, command, generic}),
            std::vector<std::string>{"run this"});
  EXPECT_EQ(archfit::diagnose::fix_lines({sentence, command}),
            (std::vector<std::string>{"xformers: upgrade it", "run this"}));
}

// Whether an errors.yaml step belongs in a fix is decided on its fields
// (`about`, `unless: checked`) against the leading steps and the check's
// components and stacks: never on a step's words.
TEST(DiagnoseFixSteps, AKnowledgeBaseStepAppliesUnlessTheCheckOrALeadingStepCoversIt) {
  using archfit::compat::Verdict;
  const archfit::kb::FixStep any{.text = "update the driver", .about = "", .unless_checked = false};
  const archfit::kb::FixStep ask_check{
      .text = "run archfit check", .about = "", .unless_checked = true};
  const archfit::kb::FixStep about_torch{
      .text = "install a PyTorch built for {sm}", .about = "torch", .unless_checked = false};
  const FixStep torch_first{.about = "torch", .text = "pick the cu128 build", .command = ""};
  const FixStep stack_first{.about = "PyTorch", .text = "pick the cu128 build", .command = ""};
  const FixStep looks_named{.about = "", .text = "torch: looks named", .command = ""};

  // No check: only a leading step about the same component covers it.
  EXPECT_EQ(kb_step_applies(any, {}, nullptr), StepApplies::yes);
  EXPECT_EQ(kb_step_applies(ask_check, {}, nullptr), StepApplies::yes);
  EXPECT_EQ(kb_step_applies(about_torch, {}, nullptr), StepApplies::yes);
  EXPECT_EQ(kb_step_applies(about_torch, {torch_first}, nullptr), StepApplies::fixed_first);
  EXPECT_EQ(kb_step_applies(about_torch, {looks_named}, nullptr), StepApplies::yes);

  archfit::check::ReportedEnvironment checked;
  archfit::check::ReportedComponent torch;
  torch.name = "torch";
  torch.verdict = {Verdict::no_image, "no-image"};
  checked.components.push_back(torch);
  archfit::check::ReportedStack pytorch;
  pytorch.name = "PyTorch";
  pytorch.anchor = "torch";
  checked.stacks.push_back(pytorch);
  EXPECT_EQ(kb_step_applies(ask_check, {}, &checked), StepApplies::checked_already);
  EXPECT_EQ(kb_step_applies(any, {}, &checked), StepApplies::yes);
  EXPECT_EQ(kb_step_applies(about_torch, {}, &checked), StepApplies::yes);
  EXPECT_EQ(kb_step_applies(about_torch, {torch_first}, &checked), StepApplies::fixed_first);
  EXPECT_EQ(kb_step_applies(about_torch, {stack_first}, &checked), StepApplies::fixed_first);
  checked.components.front().verdict = {Verdict::native, "native"};
  EXPECT_EQ(kb_step_applies(about_torch, {}, &checked), StepApplies::component_runs);
  // A component the check did not judge: the step stands.
  const archfit::kb::FixStep about_xformers{
      .text = "upgrade xformers", .about = "xformers", .unless_checked = false};
  EXPECT_EQ(kb_step_applies(about_xformers, {}, &checked), StepApplies::yes);
}

}  // namespace
