#include "install_command.hpp"

#include <filesystem>
#include <iostream>
#include <system_error>

#include "env/python_locate.hpp"
#include "host_adapter_files.hpp"
#include "sys/machine.hpp"
#include "sys/user_folders.hpp"
#include "sys/utf8_path.hpp"

namespace archfit::cli {

namespace fs = std::filesystem;

namespace {

constexpr const char* kPackFolder = "comfyui-archfit";

// Copies the tree `from` into `to` (created), leaving out __pycache__.
void copy_tree(const fs::path& from, const fs::path& to) {
  fs::create_directories(to);
  for (auto entry = fs::recursive_directory_iterator(from);
       entry != fs::recursive_directory_iterator(); ++entry) {
    if (entry->path().filename() == "__pycache__") {
      entry.disable_recursion_pending();
      continue;
    }
    const fs::path target = to / fs::relative(entry->path(), from);
    if (entry->is_directory()) {
      fs::create_directories(target);
    } else {
      fs::copy_file(entry->path(), target, fs::copy_options::overwrite_existing);
    }
  }
}

// The pack with the binding, the library and the knowledge base vendored
// as the wheel lays them out:
// vendor/python/archfit/{lib,libexec/archfit,share/archfit/kb}.
void assemble(const HostAdapterFiles& files, const fs::path& pack) {
  copy_tree(files.comfyui_pack, pack);
  // Everything is inside: nothing for ComfyUI-Manager to pip install.
  fs::remove(pack / "requirements.txt");
  const fs::path binding = pack / "vendor" / "python" / "archfit";
  copy_tree(files.python_binding, binding);
  // A wheel's binding folder also holds bin/, lib/, libexec/ and share/:
  // only the library, the plugin helper and the knowledge base are wanted,
  // in known places.
  for (const char* extra : {"bin", "lib", "libexec", "share"}) fs::remove_all(binding / extra);
  fs::create_directories(binding / "lib");
  // The file the soname link names, under the soname (what the binding loads).
  fs::copy_file(fs::canonical(files.library), binding / "lib" / files.library.filename());
  copy_tree(files.kb, binding / "share" / "archfit" / "kb");
  // Where the library looks for it (../libexec/archfit from lib/).
  fs::create_directories(binding / "libexec" / "archfit");
  fs::copy_file(files.plugin_probe, binding / "libexec" / "archfit" / files.plugin_probe.filename(),
                fs::copy_options::overwrite_existing);
  // Where the library's RPATH looks for them, as in site-packages.
  if (!files.bundled_libraries.empty())
    copy_tree(files.bundled_libraries, binding.parent_path() / files.bundled_libraries.filename());
}

}  // namespace

void InstallCommand::add_to(CLI::App& app) {
  install_ = app.add_subcommand("install", "Install archfit into a host application");
  install_->require_subcommand(1);
  comfyui_ = install_->add_subcommand(
      "comfyui",
      "Copy the archfit node pack, with its library and knowledge base, into "
      "custom_nodes/comfyui-archfit");
  comfyui_->add_option("comfyui", comfyui_dir_, "The ComfyUI folder (or the portable build's)")
      ->required();
  comfyui_->add_flag("--force", force_, "Replace an archfit node pack already there");
}

bool InstallCommand::chosen() const { return install_ && install_->parsed(); }

int InstallCommand::run() const {
  try {
    const env::ComfyuiInstall comfyui = env::locate_comfyui(sys::path_of_utf8(comfyui_dir_));
    if (!sys::may_access(comfyui.custom_nodes, sys::Access::write)) {
      std::cerr << "archfit install comfyui: cannot write to " << comfyui.custom_nodes.string()
                << '\n';
      return 2;
    }
    const fs::path target = comfyui.custom_nodes / kPackFolder;
    std::error_code error;
    if (fs::exists(target, error) && !force_) {
      std::cerr << "archfit install comfyui: " << target.string()
                << " is already there; pass --force to replace it\n";
      return 2;
    }
    const HostAdapterFiles files = find_host_adapter_files();
    const std::string suffix = std::to_string(sys::this_process_id());
    const fs::path staging =
        comfyui.custom_nodes / ("." + std::string(kPackFolder) + ".new-" + suffix);
    const fs::path old = comfyui.custom_nodes / ("." + std::string(kPackFolder) + ".old-" + suffix);
    fs::remove_all(staging);
    try {
      assemble(files, staging);
    } catch (...) {
      fs::remove_all(staging, error);
      throw;
    }
    // ComfyUI skips folders starting with "." and never loads the staging copy.
    if (fs::exists(target, error)) fs::rename(target, old);
    fs::rename(staging, target);
    fs::remove_all(old, error);
    std::cout << "installed the archfit node pack in " << target.string() << "\n"
              << "  node pack   " << files.comfyui_pack.string() << "\n"
              << "  binding     " << files.python_binding.string() << "\n"
              << "  library     " << fs::canonical(files.library).string() << "\n"
              << "  knowledge   " << files.kb.string() << "\n"
              << (files.bundled_libraries.empty()
                      ? std::string()
                      : "  libraries   " + files.bundled_libraries.string() + "\n")
              << "Restart ComfyUI: its log shows an [archfit] block, and the archfit nodes are "
                 "under the archfit category.\n";
    return 0;
  } catch (const std::exception& error) {  // LocateError, a missing file, a failed copy
    std::cerr << "archfit install comfyui: " << error.what() << '\n';
    return 2;
  }
}

}  // namespace archfit::cli
