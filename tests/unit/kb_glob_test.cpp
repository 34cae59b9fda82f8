// kb::glob_matches is fnmatch(3) with no flags, written out for Windows,
// which has none: on Linux every case is also asked of glibc's fnmatch,
// which is the reference, so the two can never drift apart.
#include <fnmatch.h>
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "kb/packages.hpp"

namespace {

using archfit::kb::glob_matches;

bool reference(const std::string& pattern, const std::string& text) {
  return ::fnmatch(pattern.c_str(), text.c_str(), 0) == 0;
}

TEST(KbGlob, TheKnowledgeBasesPatternsMatchAsFnmatchDoes) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"nvidia-*", "nvidia-cuda-nvrtc-cu12"},
      {"nvidia-*", "torch"},
      {"libcudart.so.[0-9]*", "libcudart.so.12"},
      {"libcudart.so.[0-9]*", "libcudart.so.x"},
      {"libbitsandbytes_cuda1[0-9][0-9].so", "libbitsandbytes_cuda128.so"},
      {"libbitsandbytes_cuda1[0-9][0-9].so", "libbitsandbytes_cpu.so"},
      {"*/torch/lib/libtorch_cuda.so", "/venv/lib/torch/lib/libtorch_cuda.so"},
      {"onnxruntime-gpu-*", "onnxruntime-gpu"},
      {"?orch", "torch"},
      {"[!t]orch", "torch"},
      {"[a-c]x", "bx"},
      {"a\\*b", "a*b"},
      {"a\\*b", "axb"},
      {"[]x]", "]"},
      {"[abc", "[abc"},
      {"*", ""},
      {"", ""},
      {"a*b*c", "aXbYbZc"},
      {"a*b*c", "aXbYbZ"},
  };
  for (const auto& [pattern, text] : cases)
    EXPECT_EQ(glob_matches(pattern, text), reference(pattern, text)) << pattern << " ~ " << text;
}

TEST(KbGlob, RandomPatternsOverAFewLettersMatchAsFnmatchDoes) {
  // Short words over a small alphabet with every special character, so
  // that stars, classes and escapes meet each other often.
  const std::string alphabet = "ab*?[]!-\\";
  std::mt19937 random(20261206);
  const auto word = [&](size_t max, const std::string& letters) {
    std::string out(random() % (max + 1), ' ');
    for (char& c : out) c = letters[random() % letters.size()];
    return out;
  };
  for (int i = 0; i < 20000; ++i) {
    const std::string pattern = word(6, alphabet);
    const std::string text = word(6, "ab]-[!");
    ASSERT_EQ(glob_matches(pattern, text), reference(pattern, text))
        << "pattern " << pattern << " text " << text;
  }
}

}  // namespace
