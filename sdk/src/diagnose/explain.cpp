#include "explain.hpp"

#include "check/report_json.hpp"
#include "check/report_read.hpp"

namespace archfit::diagnose {

namespace {

kb::KnowledgeBase load(const ExplainRequest& request) {
  try {
    return kb::load_knowledge_base(kb::resolve_kb_dir(request.kb_dir));
  } catch (const kb::KbError& error) {
    throw unreadable_knowledge_base(error);
  }
}

std::optional<check::ReportedEnvironment> environment_of(const ExplainRequest& request,
                                                         const kb::KnowledgeBase& kb) {
  const int given =
      (request.report != nullptr) + (request.saved_report != nullptr) + request.check.has_value();
  if (given > 1)
    throw ExplainError("give at most one environment: a report, a saved report or a check");
  if (request.report)
    return check::read_report(check::check_document(*request.report), request.report_source);
  if (request.saved_report) {
    try {
      return check::read_report(*request.saved_report, request.saved_report_source.empty()
                                                           ? request.saved_report_name
                                                           : request.saved_report_source);
    } catch (const check::ReportReadError& error) {
      throw ExplainError(request.saved_report_name + ": " + error.what());
    }
  }
  if (request.check) {
    check::CheckOptions options = *request.check;
    options.probe_only_when_nothing_to_scan = true;
    options.kb = &kb;
    return check::read_report(check::check_document(check::run_check(options)), "archfit check");
  }
  return std::nullopt;
}

}  // namespace

ExplainError unreadable_knowledge_base(const kb::KbError& error) {
  return ExplainError(std::string("the knowledge base could not be read: ") + error.what());
}

Diagnosis explain(const ExplainRequest& request) {
  const kb::KnowledgeBase owned = request.kb ? kb::KnowledgeBase() : load(request);
  const kb::KnowledgeBase& kb = request.kb ? *request.kb : owned;
  const std::optional<check::ReportedEnvironment> environment = environment_of(request, kb);
  DiagnoseOptions options;
  options.traceback = request.traceback;
  options.cuda_error = request.cuda_error;
  if (environment) options.environment = &*environment;
  return diagnose(kb, request.text, options);
}

}  // namespace archfit::diagnose
