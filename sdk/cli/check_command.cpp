#include "check_command.hpp"

#include <unistd.h>

#include <filesystem>
#include <iostream>

#include "check/check.hpp"
#include "check/report_json.hpp"
#include "check_text.hpp"

namespace archfit::cli {

namespace fs = std::filesystem;

namespace {

// A venv keeps its packages in lib/pythonX.Y/site-packages.
std::vector<fs::path> venv_site_packages(const fs::path& venv) {
  std::vector<fs::path> found;
  std::error_code error;
  for (fs::directory_iterator it(venv / "lib", error), end; !error && it != end;
       it.increment(error)) {
    if (it->path().filename().string().starts_with("python") &&
        fs::is_directory(it->path() / "site-packages")) {
      found.push_back(it->path() / "site-packages");
    }
  }
  if (found.empty())
    throw check::CheckError("--venv " + venv.string() + ": no lib/python*/site-packages in it");
  return found;
}

}  // namespace

void CheckCommand::add_to(CLI::App& app) {
  CLI::App* check = app.add_subcommand(
      "check", "Judge every CUDA binary of an environment against a GPU and give the fix");
  check->add_option(
      "--gpu", gpu_,
      "Judge against this GPU instead of the real one: \"RTX 5090\", B200, sm_120, 12.0");
  check->add_option("--driver", driver_, "Assume this NVIDIA driver release, e.g. 570.86");
  check->add_option("--site-packages", site_packages_, "A Python site-packages directory")
      ->check(CLI::ExistingDirectory);
  check->add_option("--venv", venvs_, "A virtual environment")->check(CLI::ExistingDirectory);
  check->add_option("--custom-nodes", custom_nodes_, "ComfyUI's custom_nodes directory")
      ->check(CLI::ExistingDirectory);
  check->add_option("--kb", kb_,
                    "Knowledge-base directory (default: ARCHFIT_KB_DIR, then the built-in one)");
  check->add_option("--threads", threads_, "Worker threads (default: one per CPU)");
  check->add_flag("--json", json_, "Print the archfit.check/1 JSON document");
  check->add_option("paths", paths_, "Further files or directories to judge");
}

int CheckCommand::run() const {
  check::CheckOptions options;
  if (!gpu_.empty()) options.gpu = gpu_;
  if (!driver_.empty()) options.driver = driver_;
  for (const auto& dir : site_packages_) options.site_packages.emplace_back(dir);
  try {
    for (const auto& venv : venvs_) {
      for (auto& dir : venv_site_packages(venv)) options.site_packages.push_back(std::move(dir));
    }
    if (!custom_nodes_.empty()) options.custom_nodes = fs::path(custom_nodes_);
    for (const auto& path : paths_) options.paths.emplace_back(path);
    if (!kb_.empty()) options.kb_dir = fs::path(kb_);
    options.threads = threads_;
    const check::CheckReport report = check::run_check(options);
    if (json_) {
      std::cout << check::check_document(report).dump(2, ' ', false,
                                                      nlohmann::json::error_handler_t::replace)
                << '\n';
    } else {
      print_check_text(std::cout, report, isatty(fileno(stdout)) != 0);
    }
    return report.verdict == check::OverallVerdict::fails  ? 1
           : report.verdict == check::OverallVerdict::fits ? 0
                                                           : 2;
  } catch (const check::CheckError& error) {
    std::cerr << "archfit check: " << error.what() << '\n';
    return 2;
  }
}

}  // namespace archfit::cli
