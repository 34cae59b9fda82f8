#pragma once
// An error's cause, the component behind it and the fix (docs/design.md, the
// diagnose flow): the last error in the text (error_text.hpp) is matched
// against the knowledge base's signatures (sdk/data/kb/errors.yaml), and its
// traceback names the component (attribution.hpp).
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attribution.hpp"
#include "check/report_read.hpp"
#include "error_text.hpp"

#include "kb/knowledge_base.hpp"

namespace archfit::diagnose {

inline constexpr std::string_view kDiagnosisSchema = "archfit.diagnosis/1";

struct DiagnoseOptions {
  std::string traceback;          // given apart from the error text; appended to it
  std::optional<int> cuda_error;  // a cudaError_t / CUresult number, when the caller has one
  // The environment the error came from, as a check saw it; nullptr: the
  // text alone.
  const check::ReportedEnvironment* environment = nullptr;
};

// What the environment says of the cause: the check finds what the error
// says (the component has no code for the GPU, the driver is too old, …),
// the opposite, or it cannot tell.
enum class FindingVerdict { inconclusive, confirms, refutes };
std::string_view to_string(FindingVerdict verdict);  // "confirms", …: static literals

// How sure the category is: the error's own message matched (high); only the
// text around it, or only the CUDA error number (medium); nothing (none).
enum class Confidence { none, medium, high };
std::string_view to_string(Confidence confidence);  // "high", …: static literals

// One step of a fix. `about` is the component or stack it fixes ("xformers",
// "PyTorch"; "" for a step that names none); a step is a sentence or a shell
// command made for this environment (the check's exact fix, the torch build
// for the error's arch), never both. A knowledge-base recipe that is not
// made for the environment (components.yaml's commands, with a bare pip) is
// a sentence: shown, never the one command a headline offers.
struct FixStep {
  std::string about;
  std::string text;
  std::string command;

  // As the fix list writes it: the command; "about: text"; or the text.
  std::string line() const;
  // A sentence that names `name` as what it fixes ("xformers: upgrade …").
  bool names(std::string_view name) const { return about == name && !text.empty(); }
};

// The lines of a fix, and its commands in order.
std::vector<std::string> fix_lines(const std::vector<FixStep>& steps);
std::vector<std::string> fix_commands(const std::vector<FixStep>& steps);

// What the environment says of the cause (weigh.hpp).
struct EnvironmentFinding {
  FindingVerdict verdict = FindingVerdict::inconclusive;
  std::vector<std::string> evidence;  // sentences, the decisive one first
  std::string source;                 // "archfit check", or the report's path
  std::vector<std::string> devices;   // "GeForce RTX 5090 (sm_120, simulated)"
  // The check's own fixes for what it finds failing (exact for the installed
  // versions and every GPU); they lead Diagnosis::fix.
  std::vector<FixStep> fix;
  std::string gpu;  // the device the finding is about ("GeForce RTX 5090"); "" when none
  // When the finding lists what fails by stack: the first one's title ("RTX
  // 5090 cannot run PyTorch 2.5.1+cu124") and its evidence.
  std::string stack_title;
  std::string stack_evidence;
};

// What a toast or a one-line report shows: "RTX 5090 cannot run torch
// 2.5.1+cu124", the cause in one sentence, and the one command (or, when
// there is none, the first step in words).
struct Headline {
  std::string title;
  std::string cause;
  std::string command;  // "" when no step is a command
  std::string step;     // the first fix step; "" when there is none
};

struct Diagnosis {
  kb::ErrorCategory category = kb::ErrorCategory::not_recognised;
  Confidence confidence = Confidence::none;
  std::optional<Culprit> component;
  std::string explanation;
  std::vector<FixStep> fix;
  std::string matched;  // the words the signature matched
  std::string pattern;  // the errors.yaml pattern that matched them; "" when none
  std::string source;   // where the signature's facts come from
  std::string sm;       // "sm_120" when the text names the GPU's arch; else ""
  std::string gpu;  // the GPU's name when the text gives it ("NVIDIA GeForce RTX 5090"); else ""
  std::vector<std::string> notes;                 // what else the text tells
  std::optional<EnvironmentFinding> environment;  // with DiagnoseOptions::environment only
  std::optional<Headline> headline;               // recognised errors only
  // Whose own message matched (errors.yaml's pattern origin); nullopt for
  // text any caller relays, or nothing matched.
  std::optional<kb::PatternOrigin> printed_by;
  ErrorText error;

  bool recognised() const { return category != kb::ErrorCategory::not_recognised; }
};

// Whether one of errors.yaml's fix steps belongs in a diagnosis whose fix
// so far is `leading`, given what a check found (nullptr: no check); why
// not, when it does not.
enum class StepApplies {
  yes,
  checked_already,  // `unless: checked`, and the check judged the components
  fixed_first,      // a leading step fixes the component (or its stack) it is about
  component_runs,   // the check finds the component it is about runs on the GPU
};
StepApplies kb_step_applies(const kb::FixStep& step, const std::vector<FixStep>& leading,
                            const check::ReportedEnvironment* environment);

Diagnosis diagnose(const kb::KnowledgeBase& kb, std::string_view text,
                   const DiagnoseOptions& options = {});

// {"schema": "archfit.diagnosis/1", "category", "recognised", "confidence",
// "component": {"name", "kind", "version", "path", "why"} | null,
// "explanation", "fix": [], "matched", "pattern", "source", "sm", "gpu", "notes": [],
// "environment": {"verdict", "evidence": [], "source", "devices": []} | null,
// "headline": {"title", "cause", "command", "step"} | null,
// "printed_by": {"library", "versions", "source"} | null,
// "error": {"kind", "exception_type", "message", "frames": [{"file", "line",
// "function"}]}} (docs/diagnosis-json.md). Strings from the input may hold
// bytes that are not UTF-8: dump with error_handler_t::replace.
nlohmann::json to_json(const Diagnosis& diagnosis);

}  // namespace archfit::diagnose
