#include "explain_command.hpp"

#include <iostream>
#include <sstream>

#include "diagnose/diagnosis.hpp"
#include "diagnose/explain.hpp"
#include "progress_line.hpp"
#include "render/diagnosis_text.hpp"
#include "run_settings.hpp"
#include "session/session.hpp"
#include "sys/console.hpp"
#include "sys/read_file.hpp"
#include "sys/utf8_path.hpp"
#include "util/json_text.hpp"

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

bool ExplainCommand::chosen() const { return explain_ && explain_->parsed(); }

int ExplainCommand::run() const {
  std::string text;
  if (!words_.empty()) {
    for (const auto& word : words_) text += (text.empty() ? "" : " ") + word;
  } else if (!file_.empty() && file_ != "-") {
    std::error_code error;
    if (!fs::is_regular_file(sys::path_of_utf8(file_), error)) {
      std::cerr << "archfit explain: " << file_ << ": not a readable file\n";
      return 2;
    }
    // One read into a string of the file's size (util/file.hpp): a log can
    // be 100 MB.
    std::string problem;
    auto read = sys::read_file(sys::path_of_utf8(file_), &problem);
    if (!read) {
      std::cerr << "archfit explain: " << problem << '\n';
      return 2;
    }
    text = std::move(*read);
  } else {
    if (file_.empty() && sys::is_terminal(sys::Stream::in)) {
      std::cerr << "archfit explain: give the error as text, with --file LOG, or on stdin\n";
      return 2;
    }
    std::ostringstream content;
    content << std::cin.rdbuf();
    text = content.str();
  }

  diagnose::ExplainRequest request;
  request.text = text;
  request.cuda_error = cuda_error_;
  nlohmann::json saved;
  std::optional<ProgressLine> progress;
  diagnose::Diagnosis diagnosis;
  try {
    if (!report_.empty()) {
      if (probe_.any())
        throw std::runtime_error(
            "--report and the probe options (--gpu, --venv, --comfyui, …) both describe the "
            "environment: give one");
      std::string problem;
      const auto document = sys::read_file(sys::path_of_utf8(report_), &problem);
      if (!document) throw std::runtime_error("--report " + report_ + ": " + problem);
      try {
        saved = nlohmann::json::parse(*document);
      } catch (const nlohmann::json::exception& error) {
        throw std::runtime_error("--report " + report_ + ": not JSON (" + error.what() + ")");
      }
      request.saved_report = &saved;
      request.saved_report_name = "--report " + report_;
      request.saved_report_source = report_;
    } else if (probe_.any()) {
      request.check = probe_.check_request("archfit explain", std::cerr);
      progress.emplace(ProgressLine::choose(progress_, no_progress_), std::cerr);
    }
    // One run, one Session: the flows' owner.
    session::Session session(probe_.session_settings(run_settings(std::cerr)));
    session::RunChoices choices;
    if (progress) choices.on_progress = progress->callback();
    diagnosis = session.explain(request, choices);
    progress.reset();                          // the line is cleared before the answer is printed
  } catch (const std::runtime_error& error) {  // ExplainError, CheckError, LocateError, --report's
    progress.reset();
    std::cerr << "archfit explain: " << error.what() << '\n';
    return 2;
  }
  if (json_) {
    // Text from a log need not be UTF-8; JSON must be.
    std::cout << util::json_text(diagnose::to_json(diagnosis), 2) << '\n';
  } else {
    std::cout << render::diagnosis_text(diagnosis);
  }
  return diagnosis.recognised() ? 0 : 1;
}

}  // namespace archfit::cli
