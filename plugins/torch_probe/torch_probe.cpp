// The torch_probe plugin: what only libtorch knows about itself, for
// `archfit check` — the arch flags torch's own kernels were compiled for,
// the CUDA and cuDNN it was built with, its version, and which library file
// answered. It provides no kernel modules.
//
// The probe describes the libtorch this plugin was linked against and that
// the loader found for it; in a host that already runs torch the host's own
// copy is usually the one already loaded.
#include <dlfcn.h>

#include <ATen/Context.h>
#include <ATen/Version.h>
#include <torch/version.h>
#include <exception>
#include <nlohmann/json.hpp>
#include <string>

#include "archfit/archfit_plugin.h"
#include "torch_build_config.hpp"

namespace {

// The file the dynamic loader took libtorch from: the facts are its facts.
std::string libtorch_file() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void*>(&at::show_config), &info) && info.dli_fname)
    return info.dli_fname;
  return {};
}

std::string probe_facts() {
  nlohmann::json facts{{"schema", "archfit.torch-probe/1"}};
  try {
    const std::string config_text = at::show_config();
    const auto config = archfit::torch_probe::read_show_config(config_text);
    facts["torch_version"] = config.torch_version.value_or(TORCH_VERSION);
    facts["library"] = libtorch_file();
    facts["cuda_build"] = config.cuda;
    facts["cuda_version"] = config.cuda_version ? nlohmann::json(*config.cuda_version) : nullptr;
    facts["cudnn_version"] = config.cudnn_version ? nlohmann::json(*config.cudnn_version) : nullptr;
    facts["cuda_archs"] = config.cuda_archs;
    // Whether a CUDA device is usable from this libtorch now (false for a
    // CPU-only build, or without a driver).
    facts["cuda_available"] = at::hasCUDA();
  } catch (const std::exception& error) {
    facts["error"] = std::string("libtorch failed while probed: ") + error.what();
  } catch (...) {
    facts["error"] = "libtorch failed while probed (an unknown exception)";
  }
  return facts.dump();
}

const char* probe() {
  // The host calls the probe once per load; the text lives as long as the
  // library, as archfit_plugin.h asks.
  static std::string text;
  try {
    text = probe_facts();
  } catch (...) {
    text = R"({"schema":"archfit.torch-probe/1","error":"the probe ran out of memory"})";
  }
  return text.c_str();
}

}  // namespace

extern "C" ARCHFIT_PLUGIN_EXPORT int archfit_plugin_negotiate(uint32_t host_min, uint32_t host_max,
                                                              uint32_t* out_abi,
                                                              archfit_plugin_info* out_info) {
  if (host_min > 1 || host_max < 1) return 0;
  *out_info = archfit_plugin_info{};
  out_info->struct_size = sizeof *out_info;
  out_info->name = "torch_probe";
  out_info->version = TORCH_PROBE_VERSION;
  out_info->description =
      "What libtorch knows of itself: the CUDA arch flags, CUDA and cuDNN it was built with";
  out_info->probe = probe;
  *out_abi = 1;
  return 1;
}
