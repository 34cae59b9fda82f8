#pragma once
// `archfit check --confirm`: hand device code to the real driver
// (cuModuleLoadData) and record whether it loads, so a verdict can be checked
// against the driver's own answer. The driver is loaded at run time; a
// missing or broken one comes back as findings in plain sentences, never as
// an exception or a crash.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace archfit::env {

struct ModuleRequest {
  std::string label;  // what the bytes are, for messages: the file they came from
  // One CUDA container: a fatbin container (from its 0xBA55ED50 header on), a
  // cubin ELF, or PTX text (a NUL is added when the text lacks one).
  std::vector<uint8_t> image;
};

struct ModuleLoad {
  std::string label;
  bool asked = false;   // false: not handed to the driver; `problem` says why
  bool loaded = false;  // cuModuleLoadData succeeded (and the module was unloaded again)
  int result = 0;  // cuModuleLoadData's CUresult: 0, or 209 for CUDA_ERROR_NO_BINARY_FOR_GPU …
  std::string error_name;  // "CUDA_ERROR_NO_BINARY_FOR_GPU"; empty when loaded
  std::string error_text;  // the driver's own words, with the number: "… device (209)"
  std::string problem;     // why the bytes were not handed over (truncated, empty)
};

struct ModuleConfirmOptions {
  std::filesystem::path library;  // empty: "libcuda.so.1" through the loader path
  int device = 0;                 // ordinal, as cuDeviceGet counts
};

struct ModuleConfirmation {
  std::optional<std::filesystem::path> library;  // the libcuda that was loaded
  int cuda_version = 0;                          // cuDriverGetVersion: 12080 for CUDA 12.8
  std::string device_name;                       // of the device asked
  int cc_major = 0, cc_minor = 0;
  // One per request, in order, once the driver could be asked at all; empty
  // when it could not (the findings say why).
  std::vector<ModuleLoad> loads;
  std::vector<std::string> findings;  // what kept the driver from answering, in sentences

  // The driver was asked about the requests (false, too, when there were none).
  bool answered() const { return !loads.empty(); }
};

// cuInit, the device's primary context (retained and pushed, so a host such
// as PyTorch that shares it is undisturbed), one cuModuleLoadData per request
// (each module unloaded at once), then the context popped and released.
ModuleConfirmation confirm_modules(std::span<const ModuleRequest> requests,
                                   const ModuleConfirmOptions& options = {});

}  // namespace archfit::env
