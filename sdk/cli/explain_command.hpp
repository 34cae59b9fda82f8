#pragma once
// `archfit explain [TEXT…] [--file LOG] [--cuda-error N] [--json]`: the cause
// of a CUDA failure, the component behind it and the fix, from an error
// message, a traceback, or a whole ComfyUI/InvokeAI log (its last error).
// Reads stdin when given neither text nor a file. Exit 0 when the error is
// recognised, 1 when it is not, 2 when archfit could not run.
#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

namespace archfit::cli {

class ExplainCommand {
 public:
  void add_to(CLI::App& app);
  bool chosen() const;
  int run() const;

 private:
  CLI::App* explain_ = nullptr;
  std::vector<std::string> words_;
  std::string file_;
  std::string kb_;
  std::optional<int> cuda_error_;
  bool json_ = false;
};

}  // namespace archfit::cli
