#pragma once
// `archfit jit compile FILE.cu --arch sm_120`: compiles a CUDA source with the
// NVRTC archfit finds, through the kernel cache, and scans its own output to
// confirm the arch — what an op's fallback does at run time, by hand.
#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace archfit::cli {

class JitCommand {
 public:
  void add_to(CLI::App& app);
  bool chosen() const;
  int run() const;

 private:
  CLI::App* jit_ = nullptr;
  CLI::App* compile_ = nullptr;
  CLI::App* bundle_ = nullptr;
  int run_bundle() const;
  std::vector<std::string> bundle_archs_;
  unsigned jobs_ = 0;
  std::string source_;
  std::string arch_;
  std::vector<std::string> include_dirs_;
  std::vector<std::string> defines_;
  std::vector<std::string> options_;
  std::vector<std::string> name_expressions_;
  std::string output_;
  bool json_ = false;
};

}  // namespace archfit::cli
