#include "explain.hpp"

#include "check/report_json.hpp"
#include "check/report_read.hpp"
#include "kb/kb_error.hpp"

namespace archfit::diagnose {

namespace {

std::optional<check::ReportedEnvironment> environment_of(const ExplainRequest& request,
                                                         const check::CheckResources& resources) {
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
    check::CheckRequest check = *request.check;
    check.probe_only_when_nothing_to_scan = true;
    return check::read_report(check::check_document(check::run_check(check, resources)),
                              "archfit check");
  }
  return std::nullopt;
}

}  // namespace

ExplainError unreadable_knowledge_base(const kb::KbError& error) {
  return ExplainError(std::string("the knowledge base could not be read: ") + error.what());
}

Diagnosis explain(const ExplainRequest& request, const check::CheckResources& resources) {
  const auto knowledge_base = [&resources] {
    try {
      return resources.knowledge_base.get();
    } catch (const kb::KbError& error) {
      throw unreadable_knowledge_base(error);
    }
  };
  // A check run first walks the environment while the knowledge base is
  // still being read; it waits for it only to judge. A check that fails
  // because the knowledge base cannot be read says so as explain always has.
  std::optional<check::ReportedEnvironment> environment;
  try {
    environment = environment_of(request, resources);
  } catch (const check::CheckError&) {
    knowledge_base();
    throw;
  }
  const std::shared_ptr<const kb::KnowledgeBase> kb = knowledge_base();
  DiagnoseOptions options;
  options.traceback = request.traceback;
  options.cuda_error = request.cuda_error;
  if (environment) options.environment = &*environment;
  return diagnose(*kb, request.text, options);
}

}  // namespace archfit::diagnose
