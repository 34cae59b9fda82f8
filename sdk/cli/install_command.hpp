#pragma once
// `archfit install comfyui PATH/TO/ComfyUI [--force]`: copies the archfit
// node pack into ComfyUI's custom_nodes/comfyui-archfit with everything it
// needs inside it — the Python binding, libarchfit.so and the knowledge base
// under vendor/ — so it works in ComfyUI's own Python with nothing installed
// there. The copy is made beside the target and renamed into place, so a
// failed install leaves the old one as it was.
#include <CLI/CLI.hpp>
#include <string>

namespace archfit::cli {

class InstallCommand {
 public:
  void add_to(CLI::App& app);
  bool chosen() const;
  int run() const;

 private:
  CLI::App* install_ = nullptr;
  CLI::App* comfyui_ = nullptr;
  std::string comfyui_dir_;
  bool force_ = false;
};

}  // namespace archfit::cli
