#pragma once
// What goes wrong with NVRTC, typed so that a caller can tell "no compiler"
// from "the source does not compile" from "no target can work on this GPU".
// Every message already says what to do about it.
#include <stdexcept>
#include <string>
#include <vector>

namespace archfit::jit {

// No usable NVRTC was found or loaded, or NVRTC failed outside a compile.
class NvrtcError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// nvrtcCompileProgram (or reading its output) failed. what() holds the
// source name, the target, the options and NVRTC's whole log; the fields hold
// them apart.
class NvrtcCompileError : public NvrtcError {
 public:
  NvrtcCompileError(std::string message, std::string source_name, std::string target,
                    std::vector<std::string> options, std::string log, int result,
                    std::vector<std::string> missing_headers)
      : NvrtcError(std::move(message)),
        source_name(std::move(source_name)),
        target(std::move(target)),
        options(std::move(options)),
        log(std::move(log)),
        result(result),
        missing_headers(std::move(missing_headers)) {}

  std::string source_name;
  std::string target;                        // "sm_120", "compute_90"
  std::vector<std::string> options;          // exactly as NVRTC got them
  std::string log;                           // NVRTC's program log, whole
  int result = 0;                            // the nvrtcResult
  std::vector<std::string> missing_headers;  // "cuda_fp16.h": #includes NVRTC could not open
};

// plan_target found no arch this NVRTC can compile that would run on the
// device; the message names the NVRTC to install.
class NoTargetError : public NvrtcError {
 public:
  using NvrtcError::NvrtcError;
};

}  // namespace archfit::jit
