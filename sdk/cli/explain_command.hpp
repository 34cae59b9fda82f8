#pragma once
// `archfit explain [TEXT…] [--file LOG] [--cuda-error N] [--json]`: the cause
// of a CUDA failure, the component behind it and the fix, from an error
// message, a traceback, or a whole ComfyUI/InvokeAI log (its last error).
// Reads stdin when given neither text nor a file. With check's probe options
// (--gpu, --venv, --comfyui, …) or a saved check (--report), the error is
// weighed against that environment (diagnose/explain.hpp, the flow the C ABI
// runs too). Exit 0 when the error is recognised, 1 when it is not, 2 when
// archfit could not run.
#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "probe_options.hpp"

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
  std::optional<int> cuda_error_;
  ProbeOptions probe_;
  std::string report_;
  bool json_ = false;
  bool progress_ = false;
  bool no_progress_ = false;
};

}  // namespace archfit::cli
