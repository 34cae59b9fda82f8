#include "explain_command.hpp"

#include <unistd.h>

#include <fstream>
#include <iostream>
#include <sstream>

#include "check/check.hpp"
#include "check/report_json.hpp"
#include "diagnose/diagnosis.hpp"
#include "kb/knowledge_base.hpp"
#include "progress_line.hpp"
#include "util/file.hpp"

namespace archfit::cli {

namespace fs = std::filesystem;

void ExplainCommand::add_to(CLI::App& app) {
  explain_ = app.add_subcommand(
      "explain", "Explain a CUDA error: its cause, the component behind it and the fix");
  explain_->add_option("text", words_, "The error text (else --file, else stdin)");
  explain_->add_option("-f,--file", file_,
                       "A log or traceback file: its last error is explained (- for stdin)");
  explain_->add_option("--cuda-error", cuda_error_,
                       "The CUDA error number, when known (209: no kernel image)");
  explain_->add_option("--report", report_,
                       "A saved `archfit check --json` report of the environment the error "
                       "came from: the error is weighed against it");
  probe_.add_to(*explain_);
  add_progress_flags(*explain_, progress_, no_progress_);
  explain_->add_flag("--json", json_, "Print the diagnosis as JSON (archfit.diagnosis/1)");
}

std::optional<diagnose::Environment> ExplainCommand::environment() const {
  if (!report_.empty()) {
    if (probe_.any())
      throw std::runtime_error(
          "--report and the probe options (--gpu, --venv, --comfyui, …) both describe the "
          "environment: give one");
    std::ifstream in(report_, std::ios::binary);
    if (!in) throw std::runtime_error("--report " + report_ + ": cannot read it");
    nlohmann::json document;
    try {
      document = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception& error) {
      throw std::runtime_error("--report " + report_ + ": not JSON (" + error.what() + ")");
    }
    try {
      return diagnose::read_environment(document, report_);
    } catch (const diagnose::EnvironmentError& error) {
      throw std::runtime_error("--report " + report_ + ": " + error.what());
    }
  }
  if (!probe_.any()) return std::nullopt;
  check::CheckOptions options = probe_.check_options("archfit explain", std::cerr);
  options.probe_only_when_nothing_to_scan = true;
  check::CheckReport report;
  {
    ProgressLine progress(ProgressLine::choose(progress_, no_progress_), std::cerr);
    options.on_progress = progress.callback();
    report = check::run_check(options);
  }
  return diagnose::read_environment(check::check_document(report), "archfit check");
}

bool ExplainCommand::chosen() const { return explain_ && explain_->parsed(); }

int ExplainCommand::run() const {
  std::string text;
  if (!words_.empty()) {
    for (const auto& word : words_) text += (text.empty() ? "" : " ") + word;
  } else if (!file_.empty() && file_ != "-") {
    std::error_code error;
    if (!fs::is_regular_file(file_, error)) {
      std::cerr << "archfit explain: " << file_ << ": not a readable file\n";
      return 2;
    }
    // One read into a string of the file's size (util/file.hpp): a log can
    // be 100 MB.
    std::string problem;
    auto read = util::read_file(file_, &problem);
    if (!read) {
      std::cerr << "archfit explain: " << problem << '\n';
      return 2;
    }
    text = std::move(*read);
  } else {
    if (file_.empty() && ::isatty(STDIN_FILENO)) {
      std::cerr << "archfit explain: give the error as text, with --file LOG, or on stdin\n";
      return 2;
    }
    std::ostringstream content;
    content << std::cin.rdbuf();
    text = content.str();
  }

  std::optional<diagnose::Environment> environment;
  try {
    environment = this->environment();
  } catch (const std::runtime_error& error) {  // CheckError, LocateError and --report's
    std::cerr << "archfit explain: " << error.what() << '\n';
    return 2;
  }
  const kb::KnowledgeBase kb = kb::load_knowledge_base(
      kb::resolve_kb_dir(probe_.kb.empty() ? std::nullopt : std::optional<fs::path>(probe_.kb)));
  diagnose::DiagnoseOptions options;
  options.cuda_error = cuda_error_;
  if (environment) options.environment = &*environment;
  const diagnose::Diagnosis diagnosis = diagnose::diagnose(kb, text, options);
  if (json_) {
    // Text from a log need not be UTF-8; JSON must be.
    std::cout << diagnose::to_json(diagnosis).dump(2, ' ', false,
                                                   nlohmann::json::error_handler_t::replace)
              << '\n';
  } else {
    std::cout << diagnose::to_text(diagnosis);
  }
  return diagnosis.recognised() ? 0 : 1;
}

}  // namespace archfit::cli
