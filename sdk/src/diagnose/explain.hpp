#pragma once
// The explain flow, written once for every front end (`archfit explain`,
// archfit_diagnose_run): the knowledge base of its resources, the environment
// from at most one source — a finished check, a saved check document, or a
// check run first with that same knowledge base — then diagnose().
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "check/check.hpp"
#include "diagnosis.hpp"

namespace archfit::diagnose {

// The request cannot be explained as given: an unreadable knowledge base, a
// saved report that is not an archfit.check/1 document (the message names
// the report and the field). A check that cannot run throws check::CheckError.
class ExplainError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ExplainRequest {
  std::string_view text;          // the error, a traceback or a whole log
  std::string traceback;          // given apart from the text
  std::optional<int> cuda_error;  // a cudaError_t / CUresult number
  // The environment, at most one of these three:
  const check::CheckReport* report = nullptr;   // a check just run
  std::string report_source = "archfit check";  // what the diagnosis names as its source
  // A saved archfit.check/1 document, how messages name it ("--report
  // r.json", "report_json"), and what the diagnosis gives as its source (the
  // file's path; "": the name).
  const nlohmann::json* saved_report = nullptr;
  std::string saved_report_name;
  std::string saved_report_source;
  // A check to run first, with the same resources; with nothing to scan it
  // probes the GPU and driver only.
  std::optional<check::CheckRequest> check;
};

// The ExplainError for a knowledge base that cannot be read (this flow's,
// or a Session's).
ExplainError unreadable_knowledge_base(const kb::KbError& error);

// Throws ExplainError (or check::CheckError, from a check run first); a text
// that names no error archfit knows is a Diagnosis that is not recognised.
// `resources` are a check's (a Session supplies them); their knowledge base
// must hold the error signatures (kb::KbParts::everything).
Diagnosis explain(const ExplainRequest& request, const check::CheckResources& resources);

}  // namespace archfit::diagnose
