#include "probe_options.hpp"

#include "env/python_locate.hpp"
#include "path_options.hpp"
#include "sys/utf8_path.hpp"

namespace archfit::cli {

namespace fs = std::filesystem;

void ProbeOptions::add_to(CLI::App& command) {
  // Every option takes one value; repeat it for more. (A vector option would
  // otherwise swallow the words after it: `explain --venv V "CUDA error…"`.)
  command.add_option("--gpu", gpus,
                     "Judge against this GPU instead of the real ones: \"RTX 5090\", B200, "
                     "sm_120, 12.0; repeat it for a machine with several");
  command.add_option("--driver", driver, "Assume this NVIDIA driver release, e.g. 570.86");
  command.add_option("--site-packages", site_packages, "A Python site-packages directory")
      ->check(existing_directory());
  command.add_option("--venv", venvs, "A virtual environment")->check(existing_directory());
  command.add_option("--custom-nodes", custom_nodes, "ComfyUI's custom_nodes directory")
      ->check(existing_directory());
  command.add_option("--python", python,
                     "A Python interpreter: its sys.path is asked once (nothing is imported)");
  command
      .add_option("--comfyui", comfyui,
                  "A ComfyUI folder (or the portable build's): its venv and custom_nodes")
      ->check(existing_directory());
  command
      .add_option("--wheel", wheels,
                  "A .whl file: judge its libraries as they are, without installing it")
      ->check(existing_file());
  command.add_option("--kb", kb,
                     "Knowledge-base directory (default: ARCHFIT_KB_DIR, then the built-in one)");
  command.add_option("--threads", threads, "Worker threads (default: one per CPU)");
  for (const char* name : {"--gpu", "--site-packages", "--venv", "--wheel"})
    command.get_option(name)->allow_extra_args(false);
}

bool ProbeOptions::any() const {
  return !gpus.empty() || !driver.empty() || !site_packages.empty() || !venvs.empty() ||
         !custom_nodes.empty() || !python.empty() || !comfyui.empty() || !wheels.empty();
}

check::CheckRequest ProbeOptions::check_request(const std::string& command,
                                                std::ostream& warnings) const {
  check::CheckRequest options;
  options.gpus = gpus;
  if (!driver.empty()) options.driver = driver;
  // Every path word is UTF-8 (sys/console.hpp): sys::path_of_utf8, never
  // fs::path(std::string), which reads the ANSI code page on Windows.
  for (const auto& dir : site_packages) options.site_packages.push_back(sys::path_of_utf8(dir));
  for (const auto& venv : venvs) {
    for (auto& dir : env::site_packages_of_venv(sys::path_of_utf8(venv)))
      options.site_packages.push_back(std::move(dir));
  }
  if (!python.empty()) {
    for (auto& dir : env::site_packages_of_python(sys::path_of_utf8(python)))
      options.site_packages.push_back(std::move(dir));
  }
  if (!comfyui.empty()) {
    const env::ComfyuiInstall install = env::locate_comfyui(sys::path_of_utf8(comfyui));
    options.custom_nodes = install.custom_nodes;
    if (install.site_packages.empty() && python.empty() && venvs.empty()) {
      warnings << command << ": no venv or python_embeded found beside "
               << sys::utf8_of(install.root)
               << "; checking custom_nodes only (give --python or --venv for its packages)\n";
    }
    for (const auto& dir : install.site_packages) options.site_packages.push_back(dir);
  }
  if (!custom_nodes.empty()) options.custom_nodes = sys::path_of_utf8(custom_nodes);
  for (const auto& wheel : wheels) options.wheels.push_back(sys::path_of_utf8(wheel));
  return options;
}

session::SessionSettings ProbeOptions::session_settings(session::SessionSettings settings) const {
  if (!kb.empty()) settings.kb_dir = sys::path_of_utf8(kb);
  settings.threads = threads;
  return settings;
}

}  // namespace archfit::cli
