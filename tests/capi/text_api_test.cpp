// archfit_report_text and archfit_diagnosis_text: the texts people read,
// through the C ABI, are the archfit command's (one renderer, sdk/src/render/),
// byte for byte: the same check of the demo environment as `archfit check`
// prints it, every error of the corpus (tests/data/errors) as `archfit
// explain` prints it. And the ABI's rules: NULL arguments, unknown flags,
// out-parameters untouched, borrowed strings that stay put.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "archfit/archfit.h"
#include "archfit/archfit.hpp"
#include "run_archfit.hpp"

namespace fs = std::filesystem;
using ::testing::HasSubstr;

namespace {

const std::string kDemoSite = ARCHFIT_DEMO_SITE;
const std::string kCorpus = std::string(ARCHFIT_TEST_DATA_DIR) + "/errors";

bool demo_built() { return fs::exists(fs::path(kDemoSite) / "torch"); }

std::string read_bytes(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// What the command passes to a terminal unchanged (cli/terminal_safe_output):
// UTF-8 with no control character but newline and tab. Texts with anything
// else are escaped on their way out, so only these compare byte for byte.
bool terminal_clean(const std::string& text) {
  for (size_t i = 0; i < text.size();) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte < 0x80) {
      if ((byte < 0x20 && byte != '\n' && byte != '\t') || byte == 0x7f) return false;
      ++i;
      continue;
    }
    const size_t length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc2 ? 2 : 0;
    if (length == 0 || i + length > text.size()) return false;
    for (size_t k = 1; k < length; ++k)
      if ((static_cast<unsigned char>(text[i + k]) & 0xc0) != 0x80) return false;
    if (byte == 0xc2 && static_cast<unsigned char>(text[i + 1]) < 0xa0) return false;  // C1
    i += length;
  }
  return true;
}

// The text with the command's colours (ESC [ digits ; m) taken out.
std::string without_colours(const std::string& text) {
  std::string plain;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\033' && i + 1 < text.size() && text[i + 1] == '[') {
      size_t end = i + 2;
      while (end < text.size() &&
             (std::isdigit(static_cast<unsigned char>(text[end])) || text[end] == ';'))
        ++end;
      if (end < text.size() && text[end] == 'm') {
        i = end;
        continue;
      }
    }
    plain += text[i];
  }
  return plain;
}

class TextApi : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(archfit_context_create(nullptr, &context_), ARCHFIT_OK) << archfit_last_error();
  }
  void TearDown() override {
    archfit_diagnosis_destroy(diagnosis_);
    archfit_report_destroy(report_);
    archfit_context_destroy(context_);
  }
  // The demo environment on an RTX 5090 with driver 575.51, as the C ABI checks it.
  void check_demo() {
    const char* sites[] = {kDemoSite.c_str()};
    archfit_check_options options{};
    options.struct_size = sizeof options;
    options.gpu = "RTX 5090";
    options.driver = "575.51";
    options.site_packages = sites;
    options.site_packages_count = 1;
    ASSERT_EQ(archfit_check_run(context_, &options, &report_), ARCHFIT_OK) << archfit_last_error();
  }
  // A file with no device code, judged for an RTX 5090: a report with nothing in it.
  void check_a_file() {
    const std::string file = kCorpus + "/comfyui_impact_pack_keyerror.txt";
    const char* paths[] = {file.c_str()};
    archfit_check_options options{};
    options.struct_size = sizeof options;
    options.gpu = "RTX 5090";
    options.paths = paths;
    options.paths_count = 1;
    ASSERT_EQ(archfit_check_run(context_, &options, &report_), ARCHFIT_OK) << archfit_last_error();
  }
  std::string report_text(uint32_t flags) {
    const char* text = nullptr;
    EXPECT_EQ(archfit_report_text(report_, flags, &text), ARCHFIT_OK) << archfit_last_error();
    return text ? text : "";
  }
  void diagnose(const std::string& text, const archfit_check_options* check = nullptr) {
    archfit_diagnosis_destroy(diagnosis_);
    diagnosis_ = nullptr;
    archfit_diagnose_options options{};
    options.struct_size = sizeof options;
    options.text = text.data();
    options.text_size = text.size();
    options.check = check;
    ASSERT_EQ(archfit_diagnose_run(context_, &options, &diagnosis_), ARCHFIT_OK)
        << archfit_last_error();
  }
  std::string diagnosis_text() {
    const char* text = nullptr;
    EXPECT_EQ(archfit_diagnosis_text(diagnosis_, ARCHFIT_TEXT_DEFAULT, &text), ARCHFIT_OK)
        << archfit_last_error();
    return text ? text : "";
  }

  archfit_context* context_ = nullptr;
  archfit_report* report_ = nullptr;
  archfit_diagnosis* diagnosis_ = nullptr;
};

const std::vector<std::string> kDemoCheckArguments = {"--gpu",  "RTX 5090",        "--driver",
                                                      "575.51", "--site-packages", kDemoSite};

// `command`, then its options, then kDemoCheckArguments, then `after`.
std::vector<std::string> demo_command(std::vector<std::string> command,
                                      const std::vector<std::string>& after = {}) {
  command.insert(command.end(), kDemoCheckArguments.begin(), kDemoCheckArguments.end());
  command.insert(command.end(), after.begin(), after.end());
  return command;
}

}  // namespace

TEST_F(TextApi, TheReportTextIsWhatArchfitCheckPrints) {
  if (!demo_built()) GTEST_SKIP() << "the demo environment needs nvcc: " << kDemoSite;
  check_demo();
  // Not a terminal: the command prints no colours. --no-index: it reads
  // every file, as archfit_check_run does with scan_index 0.
  const auto plain = run_archfit_apart(demo_command({"check", "--no-index"}));
  EXPECT_EQ(plain.exit_code, 1) << plain.err;
  EXPECT_EQ(report_text(ARCHFIT_TEXT_DEFAULT), plain.out);
  EXPECT_THAT(plain.out, HasSubstr("fails: "));
  const auto details = run_archfit_apart(demo_command({"check", "--no-index", "--details"}));
  EXPECT_EQ(report_text(ARCHFIT_TEXT_DETAILS), details.out);
  EXPECT_THAT(details.out, HasSubstr("\ncomponents:\n"));
}

TEST_F(TextApi, ColourIsTheCommandsColoursOverTheSameText) {
  if (!demo_built()) GTEST_SKIP() << "the demo environment needs nvcc: " << kDemoSite;
  check_demo();
  const std::string plain = report_text(ARCHFIT_TEXT_DEFAULT);
  const std::string coloured = report_text(ARCHFIT_TEXT_COLOR);
  EXPECT_THAT(coloured, HasSubstr("\033[31m"));  // what fails, in red
  EXPECT_EQ(plain.find('\033'), std::string::npos);
  EXPECT_EQ(without_colours(coloured), plain);
  EXPECT_EQ(without_colours(report_text(ARCHFIT_TEXT_COLOR | ARCHFIT_TEXT_DETAILS)),
            report_text(ARCHFIT_TEXT_DETAILS));
}

TEST_F(TextApi, TheTextIsMadeOnceAndBorrowedFromTheReport) {
  if (!demo_built()) GTEST_SKIP() << "the demo environment needs nvcc: " << kDemoSite;
  check_demo();
  const char* first = nullptr;
  const char* again = nullptr;
  ASSERT_EQ(archfit_report_text(report_, ARCHFIT_TEXT_DEFAULT, &first), ARCHFIT_OK);
  const char* details = nullptr;
  ASSERT_EQ(archfit_report_text(report_, ARCHFIT_TEXT_DETAILS, &details), ARCHFIT_OK);
  ASSERT_EQ(archfit_report_text(report_, ARCHFIT_TEXT_DEFAULT, &again), ARCHFIT_OK);
  EXPECT_EQ(first, again);  // the same borrowed string, not a new one
  EXPECT_NE(first, details);
}

TEST_F(TextApi, EveryErrorOfTheCorpusReadsAsArchfitExplainPrintsIt) {
  size_t compared = 0;
  for (const auto& entry : fs::directory_iterator(kCorpus)) {
    if (entry.path().extension() != ".txt") continue;
    SCOPED_TRACE(entry.path().filename().string());
    diagnose(read_bytes(entry.path()));
    const std::string text = diagnosis_text();
    if (!terminal_clean(text)) continue;  // the command escapes it on the way out
    const auto explained = run_archfit_apart({"explain", "--file", arg(entry.path())});
    EXPECT_EQ(text, explained.out) << explained.err;
    ++compared;
  }
  EXPECT_GE(compared, 20u);
}

TEST_F(TextApi, ADiagnosisWeighedAgainstACheckReadsAsArchfitExplainPrintsIt) {
  if (!demo_built()) GTEST_SKIP() << "the demo environment needs nvcc: " << kDemoSite;
  const std::string error =
      "torch.AcceleratorError: CUDA error: no kernel image is available for execution on the "
      "device";
  const char* sites[] = {kDemoSite.c_str()};
  archfit_check_options check{};
  check.struct_size = sizeof check;
  check.gpu = "RTX 5090";
  check.driver = "575.51";
  check.site_packages = sites;
  check.site_packages_count = 1;
  diagnose(error, &check);
  const std::string text = diagnosis_text();
  EXPECT_THAT(text, HasSubstr("checked    confirms (archfit check)"));
  const auto explained = run_archfit_apart(demo_command({"explain"}, {"--no-progress", error}));
  EXPECT_EQ(explained.exit_code, 0) << explained.err;
  EXPECT_EQ(text, explained.out) << explained.err;
}

TEST_F(TextApi, AnUnrecognisedErrorHasItsText) {
  diagnose("KeyError: 'model'");
  const std::string text = diagnosis_text();
  EXPECT_EQ(text.rfind("not recognised: archfit does not know this error as a CUDA failure\n"
                       "error      KeyError: 'model'\n",
                       0),
            0u)
      << text;
  EXPECT_THAT(text, HasSubstr("\nnote       the error is a KeyError"));
}

TEST_F(TextApi, NullArgumentsAreInvalidArgumentsNamingTheArgumentAndTheFunction) {
  check_a_file();
  diagnose("KeyError: 'model'");
  struct NullCase {
    const char* function;
    const char* argument;
    archfit_status (*call)(const archfit_report* report, const archfit_diagnosis* diagnosis);
  };
  const NullCase cases[] = {
      {"archfit_report_text", "report",
       [](const archfit_report*, const archfit_diagnosis*) {
         const char* text = nullptr;
         return archfit_report_text(nullptr, ARCHFIT_TEXT_DEFAULT, &text);
       }},
      {"archfit_report_text", "out_text",
       [](const archfit_report* report, const archfit_diagnosis*) {
         return archfit_report_text(report, ARCHFIT_TEXT_DEFAULT, nullptr);
       }},
      {"archfit_diagnosis_text", "diagnosis",
       [](const archfit_report*, const archfit_diagnosis*) {
         const char* text = nullptr;
         return archfit_diagnosis_text(nullptr, ARCHFIT_TEXT_DEFAULT, &text);
       }},
      {"archfit_diagnosis_text", "out_text",
       [](const archfit_report*, const archfit_diagnosis* diagnosis) {
         return archfit_diagnosis_text(diagnosis, ARCHFIT_TEXT_DEFAULT, nullptr);
       }},
  };
  for (const NullCase& c : cases) {
    SCOPED_TRACE(std::string(c.function) + "(" + c.argument + " = NULL)");
    EXPECT_EQ(c.call(report_, diagnosis_), ARCHFIT_ERROR_INVALID_ARGUMENT);
    const std::string message = archfit_last_error();
    EXPECT_THAT(message, HasSubstr(c.function));
    EXPECT_THAT(message, HasSubstr(std::string(c.argument) + " is NULL"));
  }
}

TEST_F(TextApi, AnUnknownFlagIsUnsupportedAndLeavesTheOutParameter) {
  diagnose("KeyError: 'model'");
  const char* untouched = "sentinel";
  const char* text = untouched;
  EXPECT_EQ(archfit_diagnosis_text(diagnosis_, 0x40, &text), ARCHFIT_ERROR_UNSUPPORTED);
  EXPECT_THAT(archfit_last_error(), HasSubstr("archfit_diagnosis_text: flags 64"));
  EXPECT_EQ(text, untouched);
  EXPECT_EQ(archfit_report_text(nullptr, 0, &text), ARCHFIT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(text, untouched);
  check_a_file();
  EXPECT_EQ(archfit_report_text(report_, ARCHFIT_TEXT_DETAILS << 1, &text),
            ARCHFIT_ERROR_UNSUPPORTED);
  EXPECT_THAT(archfit_last_error(), HasSubstr("archfit_report_text: flags 4"));
  EXPECT_EQ(text, untouched);
}

TEST_F(TextApi, AReportOfNothingReadsAsArchfitCheckPrintsIt) {
  check_a_file();
  const auto printed = run_archfit_apart(
      {"check", "--no-index", "--gpu", "RTX 5090", kCorpus + "/comfyui_impact_pack_keyerror.txt"});
  EXPECT_EQ(report_text(ARCHFIT_TEXT_DEFAULT), printed.out) << printed.err;
  EXPECT_THAT(printed.out, HasSubstr("no CUDA device code found"));
}

TEST_F(TextApi, TheDiagnosisTextHasNoColourYet) {
  diagnose("RuntimeError: CUDA error: no kernel image is available for execution on the device");
  const char* plain = nullptr;
  const char* coloured = nullptr;
  ASSERT_EQ(archfit_diagnosis_text(diagnosis_, ARCHFIT_TEXT_DEFAULT, &plain), ARCHFIT_OK);
  ASSERT_EQ(
      archfit_diagnosis_text(diagnosis_, ARCHFIT_TEXT_COLOR | ARCHFIT_TEXT_DETAILS, &coloured),
      ARCHFIT_OK);
  EXPECT_STREQ(plain, coloured);
  EXPECT_THAT(std::string(plain), HasSubstr("no-kernel-image (high confidence)\n"));
}

TEST(TextCppWrapper, ReportAndDiagnosisGiveTheSameTextsAsTheCAbi) {
  archfit::Context context;
  const std::string file = kCorpus + "/comfyui_impact_pack_keyerror.txt";
  const char* paths[] = {file.c_str()};
  archfit_check_options check{};
  check.struct_size = sizeof check;
  check.gpu = "RTX 5090";
  check.paths = paths;
  check.paths_count = 1;
  const archfit::Report report = context.check(check);
  const char* text = nullptr;
  ASSERT_EQ(archfit_report_text(report.get(), ARCHFIT_TEXT_DETAILS, &text), ARCHFIT_OK);
  EXPECT_EQ(report.text(ARCHFIT_TEXT_DETAILS), text);
  EXPECT_THAT(std::string(report.text()), HasSubstr("no CUDA device code found"));
  EXPECT_THROW((void)report.text(0x100), archfit::Error);

  const std::string error = "CUDA error: no kernel image is available for execution on the device";
  archfit_diagnose_options options{};
  options.struct_size = sizeof options;
  options.text = error.data();
  options.text_size = error.size();
  const archfit::Diagnosis diagnosis = context.diagnose(options);
  EXPECT_THAT(std::string(diagnosis.text()), HasSubstr("no-kernel-image (high confidence)\n"));
}
