#include "check_command.hpp"

#include <unistd.h>

#include <filesystem>
#include <iostream>

#include "check/check.hpp"
#include "check/plan.hpp"
#include "check/report_json.hpp"
#include "check_text.hpp"
#include "env/python_locate.hpp"
#include "progress_line.hpp"

namespace archfit::cli {

namespace fs = std::filesystem;

void CheckCommand::add_to(CLI::App& app) {
  CLI::App* check = app.add_subcommand(
      "check", "Judge every CUDA binary of an environment against a GPU and give the fix");
  check->add_option("--gpu", gpus_,
                    "Judge against this GPU instead of the real ones: \"RTX 5090\", B200, "
                    "sm_120, 12.0; repeat it for a machine with several");
  check->add_option("--driver", driver_, "Assume this NVIDIA driver release, e.g. 570.86");
  check->add_option("--site-packages", site_packages_, "A Python site-packages directory")
      ->check(CLI::ExistingDirectory);
  check->add_option("--venv", venvs_, "A virtual environment")->check(CLI::ExistingDirectory);
  check->add_option("--custom-nodes", custom_nodes_, "ComfyUI's custom_nodes directory")
      ->check(CLI::ExistingDirectory);
  check->add_option("--python", python_,
                    "A Python interpreter: its sys.path is asked once (nothing is imported)");
  check
      ->add_option("--comfyui", comfyui_,
                   "A ComfyUI folder (or the portable build's): its venv and custom_nodes")
      ->check(CLI::ExistingDirectory);
  check
      ->add_option("--wheel", wheels_,
                   "A .whl file: judge its libraries as they are, without installing it")
      ->check(CLI::ExistingFile);
  check->add_option("--kb", kb_,
                    "Knowledge-base directory (default: ARCHFIT_KB_DIR, then the built-in one)");
  check->add_option("--threads", threads_, "Worker threads (default: one per CPU)");
  check->add_flag("--json", json_, "Print the archfit.check/1 JSON document");
  add_progress_flags(*check, progress_, no_progress_);
  check->add_flag("--confirm", confirm_,
                  "Ask the real driver to load one container of each binary on each GPU and "
                  "report where it disagrees with the verdict");
  check->add_flag(
      "--plan", plan_,
      "Print a shell script that backs up the environment, replaces what fails and checks "
      "again (archfit never runs it)");
  check->add_option("paths", paths_, "Further files or directories to judge");
}

// The interpreter the plan's pip runs under, and this check's command line
// without --plan and --json, to run again at the end.
check::PlanContext CheckCommand::plan_context() const {
  check::PlanContext context;
  if (!python_.empty()) {
    context.python = python_;
  } else if (!venvs_.empty()) {
    context.python = (fs::absolute(venvs_.front()) / "bin" / "python").string();
  }
  std::string command = "archfit check";
  auto add = [&](const char* flag, const std::string& value) {
    if (!value.empty()) command += std::string(" ") + flag + " " + check::shell_quote(value);
  };
  for (const auto& gpu : gpus_) add("--gpu", gpu);
  add("--driver", driver_);
  // Absolute, so the script works from any directory.
  auto absolute = [](const std::string& path) {
    return path.empty() ? path : fs::absolute(path).string();
  };
  for (const auto& dir : site_packages_) add("--site-packages", absolute(dir));
  for (const auto& venv : venvs_) add("--venv", absolute(venv));
  add("--python", python_.find('/') == std::string::npos ? python_ : absolute(python_));
  add("--comfyui", absolute(comfyui_));
  add("--custom-nodes", absolute(custom_nodes_));
  for (const auto& wheel : wheels_) add("--wheel", absolute(wheel));
  add("--kb", absolute(kb_));
  for (const auto& path : paths_) command += " " + check::shell_quote(absolute(path));
  context.verify_command = command;
  return context;
}

int CheckCommand::run() const {
  check::CheckOptions options;
  options.gpus = gpus_;
  if (!driver_.empty()) options.driver = driver_;
  for (const auto& dir : site_packages_) options.site_packages.emplace_back(dir);
  try {
    for (const auto& venv : venvs_) {
      for (auto& dir : env::site_packages_of_venv(venv))
        options.site_packages.push_back(std::move(dir));
    }
    if (!python_.empty()) {
      for (auto& dir : env::site_packages_of_python(python_))
        options.site_packages.push_back(std::move(dir));
    }
    if (!comfyui_.empty()) {
      const env::ComfyuiInstall comfyui = env::locate_comfyui(comfyui_);
      options.custom_nodes = comfyui.custom_nodes;
      if (comfyui.site_packages.empty() && python_.empty() && venvs_.empty()) {
        std::cerr << "archfit check: no venv or python_embeded found beside "
                  << comfyui.root.string()
                  << "; checking custom_nodes only (give --python or --venv for its packages)\n";
      }
      for (const auto& dir : comfyui.site_packages) options.site_packages.push_back(dir);
    }
    if (!custom_nodes_.empty()) options.custom_nodes = fs::path(custom_nodes_);
    for (const auto& wheel : wheels_) options.wheels.emplace_back(wheel);
    for (const auto& path : paths_) options.paths.emplace_back(path);
    if (!kb_.empty()) options.kb_dir = fs::path(kb_);
    options.threads = threads_;
    options.confirm = confirm_;
    check::CheckReport report;
    {
      // Gone (its line cleared) before the report is printed.
      ProgressLine progress(ProgressLine::choose(progress_, no_progress_), std::cerr);
      options.on_progress = progress.callback();
      report = check::run_check(options);
    }
    if (plan_) {
      std::cout << check::render_plan(report, plan_context());
    } else if (json_) {
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
  } catch (const env::LocateError& error) {
    std::cerr << "archfit check: " << error.what() << '\n';
    return 2;
  }
}

}  // namespace archfit::cli
