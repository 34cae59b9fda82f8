#include "check_command.hpp"

#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "check/check.hpp"
#include "check/report_json.hpp"
#include "env/python_locate.hpp"
#include "path_options.hpp"
#include "progress_line.hpp"
#include "render/check_text.hpp"
#include "render/plan_script.hpp"
#include "run_settings.hpp"
#include "session/session.hpp"
#include "sys/console.hpp"
#include "sys/utf8_path.hpp"
#include "util/json_text.hpp"

namespace archfit::cli {

namespace fs = std::filesystem;

void CheckCommand::add_to(CLI::App& app) {
  CLI::App* check = app.add_subcommand(
      "check", "Judge every CUDA binary of an environment against a GPU and give the fix");
  probe_.add_to(*check);
  check->add_flag("--json", json_, "Print the archfit.check/1 JSON document");
  check->add_flag("--details", details_,
                  "Also list every component, each binary's verdict and how it is reached, and "
                  "the CUDA libraries a process could load");
  add_progress_flags(*check, progress_, no_progress_);
  check->add_flag("--confirm", confirm_,
                  "Ask the real driver to load one container of each binary on each GPU and "
                  "report where it disagrees with the verdict");
  check->add_flag(
      "--plan", plan_,
      "Print a shell script that backs up the environment, replaces what fails and checks "
      "again (archfit never runs it)");
  check->add_flag("--plugins", plugins_,
                  "Load archfit's plugins and add their probes' facts (torch_probe: the "
                  "compiled arch flags of the libtorch it was built with); off by default, "
                  "since a probe may load a framework into archfit");
  check->add_flag("--no-plugins", no_plugins_, "Load no plugins (the default)");
  check->add_flag("--no-index", no_index_,
                  "Read every file again, neither using nor updating the scan index kept in "
                  "the cache directory (files unchanged since the last check are not re-read)");
  check
      ->add_option("--plugin-path", plugin_paths_,
                   "Load plugins, from this folder too (before ARCHFIT_PLUGIN_PATH)")
      ->allow_extra_args(false);
  check->add_option("paths", paths_, "Further files or directories to judge");
  check->add_option("--labels", labels_.format,
                    "Print the node's labels for a scheduler instead: nfd (a "
                    "node-feature-discovery feature file; docs/fleet.md)");
  check
      ->add_option("--labels-config", labels_.config,
                   "With --labels: the environments to label this node for "
                   "(archfit.fleet/1 YAML), each as archfit.dev/fits.<name>")
      ->check(existing_file());
  check->add_option("--labels-output", labels_.output,
                    "With --labels: replace this file whole (NFD's features.d/archfit) "
                    "instead of printing");
  check->add_option("--labels-ttl", labels_.ttl_seconds,
                    "With --labels: labels expire after this many seconds unless written "
                    "again (# +expiry-time)");
}

// The interpreter the plan's pip runs under, and this check's command line
// without --plan and --json, to run again at the end.
render::PlanContext CheckCommand::plan_context() const {
  render::PlanContext context;
  if (!probe_.python.empty()) {
    context.python = probe_.python;
  } else if (!probe_.venvs.empty()) {
    // The venv's own interpreter, where its layout (POSIX or Windows) puts it.
    const fs::path venv = fs::absolute(sys::path_of_utf8(probe_.venvs.front()));
    fs::path python;
    try {
      for (const auto& site : env::site_packages_of_venv(venv)) {
        python = env::python_of_site_packages(site);
        if (!python.empty()) break;
      }
    } catch (const env::LocateError&) {
      // no site-packages: the check itself says so
    }
    context.python = sys::utf8_of(python.empty() ? venv / "bin" / "python" : python);
  }
  auto add = [&](const char* flag, const std::string& value, bool path) {
    if (value.empty()) return;
    context.verify_arguments.push_back({flag, value, path});
  };
  for (const auto& gpu : probe_.gpus) add("--gpu", gpu, false);
  add("--driver", probe_.driver, false);
  // Absolute, so the script works from any directory.
  auto absolute = [](const std::string& path) {
    return path.empty() ? path : sys::utf8_of(fs::absolute(sys::path_of_utf8(path)));
  };
  for (const auto& dir : probe_.site_packages) add("--site-packages", absolute(dir), true);
  for (const auto& venv : probe_.venvs) add("--venv", absolute(venv), true);
  // A bare name (python3) is looked up on PATH: kept as it is.
  const bool python_is_path = probe_.python.find_first_of("/\\") != std::string::npos;
  add("--python", python_is_path ? absolute(probe_.python) : probe_.python, python_is_path);
  add("--comfyui", absolute(probe_.comfyui), true);
  add("--custom-nodes", absolute(probe_.custom_nodes), true);
  for (const auto& wheel : probe_.wheels) add("--wheel", absolute(wheel), true);
  add("--kb", absolute(probe_.kb), true);
  for (const auto& path : paths_) context.verify_arguments.push_back({"", absolute(path), true});
  return context;
}

// Nothing named: the environment the user is in, as bare `archfit check`
// means it (env::choose_environment), said on the report's first line.
void CheckCommand::choose_environment(check::CheckRequest& options) {
  const auto variable = [](const char* name) -> std::string {
    return sys::environment_variable(name);
  };
  const auto chosen = env::choose_environment(fs::current_path(), variable, variable("PATH"));
  if (!chosen) {
    throw check::CheckError(
        "nothing to check: no activated venv ($VIRTUAL_ENV) or conda environment "
        "($CONDA_PREFIX), no ComfyUI here, and no python3 on PATH; give --venv DIR, --comfyui "
        "DIR, --python PYTHON, --site-packages DIR, --wheel FILE or paths");
  }
  options.site_packages = chosen->site_packages;
  if (chosen->custom_nodes) options.custom_nodes = chosen->custom_nodes;
  options.environment = check::EnvironmentChoice{chosen->source, chosen->where, chosen->python};
}

int CheckCommand::run() const {
  if (!labels_.format.empty()) {
    if (!paths_.empty()) {
      std::cerr << "archfit check --labels: name the environments in --labels-config, not as "
                   "paths\n";
      return 2;
    }
    return write_node_labels(probe_, labels_, std::cerr);
  }
  if (!labels_.config.empty() || !labels_.output.empty() || labels_.ttl_seconds) {
    std::cerr << "archfit check: --labels-config, --labels-output and --labels-ttl go with "
                 "--labels nfd\n";
    return 2;
  }
  try {
    check::CheckRequest options = probe_.check_request("archfit check", std::cerr);
    for (const auto& path : paths_) options.paths.push_back(sys::path_of_utf8(path));
    if (options.site_packages.empty() && !options.custom_nodes && options.wheels.empty() &&
        options.paths.empty())
      choose_environment(options);
    options.confirm = confirm_;
    if ((plugins_ || !plugin_paths_.empty()) && !no_plugins_) {
      options.plugins.emplace();
      for (const auto& path : plugin_paths_)
        options.plugins->paths.push_back(sys::path_of_utf8(path));
    }
    check::CheckReport report;
    {
      // Gone (its line cleared) before the report is printed.
      ProgressLine progress(ProgressLine::choose(progress_, no_progress_), std::cerr);
      // One run, one Session (session/session.hpp): the flows' owner.
      session::Session session(probe_.session_settings(run_settings(std::cerr)));
      session::RunChoices choices;
      choices.scan_index = !no_index_;
      choices.on_progress = progress.callback();
      report = session.check(options, choices);
    }
    if (plan_) {
      auto context = plan_context();
      // The chosen environment's own interpreter runs the plan's pip, and
      // the check at its end names that environment: the script may be run
      // with no venv activated, or from another folder.
      if (report.environment) {
        if (context.python.empty()) context.python = sys::utf8_of(report.environment->python);
        for (const auto& dir : options.site_packages) {
          context.verify_arguments.push_back({"--site-packages", sys::utf8_of(dir), true});
        }
        if (options.custom_nodes) {
          context.verify_arguments.push_back(
              {"--custom-nodes", sys::utf8_of(*options.custom_nodes), true});
        }
      }
      // Its bytes as they are: a .bat plan already ends its lines with CRLF,
      // which Windows' text mode would make CR CR LF.
      std::cout.flush();
      sys::binary_stdout();
      std::cout << render::render_plan(report, context);
    } else if (json_) {
      std::cout << util::json_text(check::check_document(report), 2) << '\n';
    } else {
      render::print_check_text(std::cout, report, sys::is_terminal(sys::Stream::out), details_);
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
