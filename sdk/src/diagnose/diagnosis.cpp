#include "diagnosis.hpp"

#include <algorithm>
#include <cctype>

#include "check/environment_commands.hpp"
#include "check/torch_fix.hpp"
#include "compat/arch.hpp"
#include "compat/compat_error.hpp"
#include "compat/rules.hpp"
#include "kb/knowledge_base.hpp"
#include "util/text.hpp"
#include "weigh.hpp"

namespace archfit::diagnose {

std::string FixStep::line() const {
  if (!command.empty()) return command;
  return about.empty() ? text : about + ": " + text;
}

std::vector<std::string> fix_lines(const std::vector<FixStep>& steps) {
  std::vector<std::string> lines;
  for (const auto& step : steps) lines.push_back(step.line());
  return lines;
}

std::vector<std::string> fix_commands(const std::vector<FixStep>& steps) {
  std::vector<std::string> commands;
  for (const auto& step : steps) {
    if (!step.command.empty()) commands.push_back(step.command);
  }
  return commands;
}

std::string_view to_string(FindingVerdict verdict) {
  switch (verdict) {
    case FindingVerdict::confirms:
      return "confirms";
    case FindingVerdict::refutes:
      return "refutes";
    case FindingVerdict::inconclusive:
      break;
  }
  return "inconclusive";
}

std::string_view to_string(Confidence confidence) {
  switch (confidence) {
    case Confidence::high:
      return "high";
    case Confidence::medium:
      return "medium";
    case Confidence::none:
      break;
  }
  return "none";
}

namespace {

// What the message says about the GPU itself (never the arch a library
// wanted, as in SageAttention's "SM89 kernel is not available"): errors.yaml's
// `gpu_arch` expressions, the first that matches.
// The GPU's name where the message gives it ("NVIDIA GeForce RTX 5090 with
// CUDA capability sm_120"): errors.yaml's `gpu_name` expressions.
std::string device_name_in(const kb::KnowledgeBase& kb, const std::string& text) {
  for (const auto& name : kb.gpu_name_patterns()) {
    if (const auto match = name.search(text)) return std::string(util::trim((*match)[1]));
  }
  return {};
}

std::string device_arch_in(const kb::KnowledgeBase& kb, const std::string& text) {
  for (const auto& arch : kb.gpu_arch_patterns()) {
    const auto match = arch.regex.search(text);
    if (!match) continue;
    const auto& groups = *match;
    return arch.form == "sm" ? "sm_" + groups[1] : "sm_" + groups[1] + groups[2];
  }
  return {};
}

// A library's own word on the archs it was built for, judged against the
// GPU the message names: evidence with no environment at hand ("torch's
// message lists sm_50 … sm_90; your GPU is sm_120: none runs there").
std::optional<EnvironmentFinding> built_for_finding(const kb::KnowledgeBase& kb,
                                                    const std::string& text,
                                                    const std::string& sm) {
  if (sm.empty()) return std::nullopt;
  for (const auto& built : kb.built_for_patterns()) {
    const auto found = built.regex.search(text);
    if (!found) continue;
    const auto& match = *found;
    std::vector<std::string> targets;
    std::string said;
    if (built.form == "list") {
      static const util::Pattern name(R"((?:sm|compute)_[0-9]+[af]?)");
      targets = name.find_all(match[1]);
      if (targets.empty()) continue;
      said = targets.front() + (targets.size() > 1 ? " … " + targets.back() : "");
    } else {
      // "(5.0) - (9.0)": the newest it has SASS for is the maximum.
      targets.push_back("sm_" + match[3] + match[4]);
      said = "capabilities " + match[1] + "." + match[2] + " to " + match[3] + "." + match[4];
    }
    compat::ComputeCapability device;
    try {
      device = compat::parse_compute_capability(sm);
    } catch (const compat::CompatError&) {
      return std::nullopt;
    }
    const auto verdict = compat::judge_arch_list(targets, device);
    EnvironmentFinding finding;
    finding.source = "the message";
    const bool runs = verdict == compat::Verdict::native || verdict == compat::Verdict::ptx_jit;
    finding.verdict = runs ? FindingVerdict::refutes : FindingVerdict::confirms;
    finding.evidence.push_back(built.origin.library + "'s message says it was built for " + said +
                               "; your GPU is " + sm + ": " +
                               (runs ? "one of them runs there" : "none of them runs there"));
    return finding;
  }
  return std::nullopt;
}

std::string replace_all(std::string text, std::string_view placeholder, const std::string& value) {
  for (size_t at = text.find(placeholder); at != std::string::npos;
       at = text.find(placeholder, at + value.size()))
    text.replace(at, placeholder.size(), value);
  return text;
}

std::string fill_sm(std::string text, const std::string& sm) {
  return replace_all(std::move(text), "{sm}", sm.empty() ? "your GPU's arch" : sm);
}

// The first sentence: up to the first ". " (a title's cause is one sentence).
std::string first_sentence(const std::string& text) {
  const size_t end = text.find(". ");
  return end == std::string::npos ? text : text.substr(0, end + 1);
}

// The one line a toast leads with: the GPU by the name people use, and the
// component with its exact version (torch's with its local tag, +cu124,
// which says which CUDA build it is) when the check confirms it, or else the
// first stack the check finds failing, or else the signature's own title.
Headline make_headline(const kb::ErrorSignature& signature, const Diagnosis& d,
                       const check::ReportedEnvironment* environment,
                       const std::string& rerun_command) {
  Headline headline;
  const std::string gpu = d.environment && !d.environment->gpu.empty()
                              ? util::short_gpu_name(d.environment->gpu)
                          : !d.gpu.empty() ? util::short_gpu_name(d.gpu)
                          : d.sm.empty()   ? std::string("your GPU")
                                           : "your " + d.sm + " GPU";
  // The component is named when the check confirms it (or there is no
  // check); else, when the check found stacks that fail, the first one is the
  // finding worth a title; else the signature's plain title.
  const bool confirmed = d.environment && d.environment->verdict == FindingVerdict::confirms &&
                         !d.environment->evidence.empty();
  const bool stack_found =
      d.environment && !d.environment->stack_title.empty() && !(confirmed && d.component);
  // A confirmed component that anchors a stack is said as the check says it
  // ("PyTorch 2.5.1+cu124", the unit its fix moves).
  const check::ReportedStack* anchored = nullptr;
  if (confirmed && d.component && environment)
    for (const auto& stack : environment->stacks)
      if (stack.anchor == d.component->name && !stack.title.empty()) anchored = &stack;
  std::string title = signature.title;
  if (stack_found) {
    title = d.environment->stack_title;
  } else if (anchored) {
    title = anchored->title;
  } else if (d.component && (confirmed || !d.environment) &&
             !signature.title_with_component.empty()) {
    std::string version = d.component->version;
    if (d.component->name == "torch" && environment && !environment->torch.empty())
      version = environment->torch;
    title = replace_all(signature.title_with_component, "{component}",
                        d.component->name + (version.empty() ? "" : " " + version));
  }
  title = fill_sm(replace_all(std::move(title), "{gpu}", gpu), d.sm);
  // "your GPU …" starts a sentence; a component's name keeps its case ("cupy's …").
  if (title.starts_with("your ")) title[0] = 'Y';
  headline.title = std::move(title);

  headline.cause = stack_found ? d.environment->stack_evidence
                   : confirmed ? d.environment->evidence.front()
                               : first_sentence(d.explanation);
  const auto commands = fix_commands(d.fix);
  if (!rerun_command.empty())
    headline.command = rerun_command;
  else if (!commands.empty())
    headline.command = commands.front();
  if (!d.fix.empty()) headline.step = d.fix.front().line();
  return headline;
}

// With no environment, a message that names torch and the GPU's arch still
// has #10's answer: the torch build for that arch, from the knowledge base's
// table, as the check would give it for an installed torch it cannot see.
void add_torch_build_for_arch(const kb::KnowledgeBase& kb, Diagnosis& d) {
  if (!d.component || d.component->name != "torch" || d.sm.empty()) return;
  if (d.category != kb::ErrorCategory::no_kernel_image &&
      d.category != kb::ErrorCategory::invalid_device_function)
    return;
  check::DeviceInfo device;
  try {
    device.cc = compat::parse_compute_capability(d.sm);
  } catch (const compat::CompatError&) {
    return;
  }
  device.name = d.sm;
  check::InstalledTorchStack installed;
  installed.torch = d.component->version;
  const check::Fix fix = check::torch_stack_fix({device}, std::nullopt, installed, kb);
  if (fix.summary.empty()) return;
  d.fix.push_back({.about = "torch", .text = fix.summary, .command = ""});
  for (const auto& command : fix.commands)
    d.fix.push_back({.about = "torch", .text = "", .command = command});
}

bool windows_paths(const ErrorText& error) {
  for (const auto& frame : error.frames) {
    if (frame.file.find(":\\") != std::string::npos || frame.file.find('\\') != std::string::npos)
      return true;
  }
  return false;
}

bool any_frame_has(const ErrorText& error, std::string_view word) {
  for (const auto& frame : error.frames) {
    if (frame.file.find(word) != std::string::npos) return true;
  }
  return false;
}

// The exact command that reruns the host with CUDA_LAUNCH_BLOCKING=1, as far
// as the frames tell which host and platform it is.
std::string launch_blocking_command(const ErrorText& error) {
  if (windows_paths(error)) {
    if (any_frame_has(error, "python_embeded"))
      return "set CUDA_LAUNCH_BLOCKING=1 && .\\python_embeded\\python.exe -s ComfyUI\\main.py "
             "--windows-standalone-build   (in the ComfyUI_windows_portable folder)";
    return "set CUDA_LAUNCH_BLOCKING=1 && python main.py   (in the ComfyUI folder)";
  }
  if (any_frame_has(error, "invokeai")) return "CUDA_LAUNCH_BLOCKING=1 invokeai-web";
  return "CUDA_LAUNCH_BLOCKING=1 python main.py   (in the ComfyUI folder, with its venv active)";
}

const kb::ErrorSignature* first_match(const kb::KnowledgeBase& kb, const std::string& text,
                                      Diagnosis& d, const kb::PatternOrigin*& origin) {
  for (const auto& signature : kb.error_signatures()) {
    for (size_t p = 0; p < signature.regexes.size(); ++p) {
      if (const auto match = signature.regexes[p].search(text)) {
        d.matched = (*match)[0];
        d.pattern = signature.patterns[p];
        origin = &signature.origins[p];
        return &signature;
      }
    }
  }
  return nullptr;
}

// The fix steps that name the component: the knowledge base's recipe for it
// on this arch, or where to look for a node pack.
// A knowledge-base recipe ("TORCH_CUDA_ARCH_LIST=… pip install …") in the
// interpreter and shell of the environment a check saw; as written when no
// check named one.
std::string recipe_for(const std::string& recipe, const check::ReportedEnvironment* environment) {
  if (!environment || environment->command_target.python.empty()) return recipe;
  const auto& target = environment->command_target;
  return check::command_for(recipe, target,
                            target.windows ? check::Shell::cmd : check::Shell::posix);
}

std::vector<FixStep> component_steps(const kb::KnowledgeBase& kb, const Diagnosis& d,
                                     const check::ReportedEnvironment* environment) {
  std::vector<FixStep> steps;
  if (!d.component) return steps;
  if (d.component->kind == "custom_node") {
    if (kb::is_about_architecture(d.category))
      steps.push_back({.about = "",
                       .text = "The error came through the node pack " + d.component->name +
                               " (custom_nodes/" + d.component->name +
                               "); `archfit check --comfyui PATH/TO/ComfyUI` shows whether its "
                               "own compiled code or PyTorch lacks " +
                               (d.sm.empty() ? std::string("your GPU's arch") : d.sm) + ".",
                       .command = ""});
    return steps;
  }
  if (d.sm.empty()) return steps;
  try {
    const auto cc = compat::parse_compute_capability(d.sm);
    if (const auto advice = kb.component_advice(d.component->name, cc)) {
      for (const auto* fix : advice->fixes)
        steps.push_back({.about = d.component->name, .text = fix->summary, .command = ""});
      // Recipes, not judged for this environment: sentences (FixStep), in
      // its interpreter and shell where a check named them.
      for (const auto& command : advice->commands)
        steps.push_back({.about = "", .text = recipe_for(command, environment), .command = ""});
      if (advice->commands.empty() && !advice->rebuild_command.empty())
        steps.push_back(
            {.about = "", .text = recipe_for(advice->rebuild_command, environment), .command = ""});
    }
  } catch (const std::exception&) {
    // An arch the rule table does not parse: the generic steps stand.
  }
  return steps;
}

std::string squeezed(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (std::isalnum(static_cast<unsigned char>(c)))
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

// Without frames that name one: a component the knowledge base knows, named
// in the message ("Error running sage attention: …"); else a package whose
// site-packages path the text around the error shows (a warning's
// "…/site-packages/torch/cuda/__init__.py:235: UserWarning", bitsandbytes'
// "WindowsPath('…/site-packages/bitsandbytes/…')"); else PyTorch, when the
// error is one of its own ("torch.AcceleratorError", "CUDA error: …").
std::optional<Culprit> named_component(const kb::KnowledgeBase& kb, const ErrorText& error) {
  const std::string message = squeezed(error.message);
  for (const auto& component : kb.components()) {
    if (message.find(squeezed(component.name)) != std::string::npos)
      return Culprit(component.name, "distribution", "", "the message names " + component.name);
  }
  // A traceback's frames have had their say; another error's frames may be
  // in the text before it.
  std::string context = error.frames.empty() ? error.context : std::string();
  std::replace(context.begin(), context.end(), '\\', '/');
  for (const std::string_view marker : {"site-packages/", "dist-packages/"}) {
    const size_t at = context.rfind(marker);
    if (at == std::string::npos) continue;
    const size_t begin = at + marker.size();
    const size_t end = context.find('/', begin);
    if (end == std::string::npos || end - begin > 100) continue;
    // The package's directory, as a frame would name it.
    const Frame frame{"/" + std::string(marker) + context.substr(begin, end - begin) + "/", 0, ""};
    if (auto culprit = component_of(frame, &kb)) {
      culprit->path.clear();
      culprit->why = "the text around the error shows a path in " + culprit->name;
      return culprit;
    }
  }
  if (error.exception_type.starts_with("torch.") ||
      error.message.find("CUDA error:") != std::string::npos)
    return Culprit("torch", "distribution", "",
                   "the error is PyTorch's own (" +
                       (error.exception_type.empty() ? std::string("\"CUDA error: …\"")
                                                     : error.exception_type) +
                       ")");
  return std::nullopt;
}

}  // namespace

StepApplies kb_step_applies(const kb::FixStep& step, const std::vector<FixStep>& leading,
                            const check::ReportedEnvironment* environment) {
  // A check that judged components has said which lacks the GPU's arch.
  if (step.unless_checked && environment && !environment->components.empty())
    return StepApplies::checked_already;
  if (step.about.empty()) return StepApplies::yes;
  const auto leading_names = [&](const std::string& name) {
    return std::any_of(leading.begin(), leading.end(),
                       [&](const FixStep& fix) { return fix.names(name); });
  };
  // Not needed where a fix for that component already leads.
  if (!environment) return leading_names(step.about) ? StepApplies::fixed_first : StepApplies::yes;
  // Not needed where the check finds the component runs; said exactly where
  // the check's own fix for it, or for the stack it anchors ("PyTorch: …"
  // for torch), leads.
  const auto* about = environment->component(step.about);
  if (!about) return StepApplies::yes;
  if (about->runs()) return StepApplies::component_runs;
  if (leading_names(about->name)) return StepApplies::fixed_first;
  for (const auto& stack : environment->stacks)
    if (stack.anchor == about->name && leading_names(stack.name)) return StepApplies::fixed_first;
  return StepApplies::yes;
}

Diagnosis diagnose(const kb::KnowledgeBase& kb, std::string_view text,
                   const DiagnoseOptions& options) {
  Diagnosis d;
  if (options.traceback.empty()) {
    d.error = find_last_error(text);
  } else {
    std::string joined(text);
    joined.append("\n").append(options.traceback);
    d.error = find_last_error(joined);
    if (d.error.message.empty()) d.error.message = std::string(text);
  }
  d.sm = device_arch_in(kb, d.error.message);
  if (d.sm.empty()) d.sm = device_arch_in(kb, d.error.context);
  d.gpu = device_name_in(kb, d.error.message);
  if (d.gpu.empty()) d.gpu = device_name_in(kb, d.error.context);
  d.component = attribute(d.error.frames, &kb);
  if (!d.component) d.component = named_component(kb, d.error);

  const kb::PatternOrigin* origin = nullptr;
  const kb::ErrorSignature* signature = first_match(kb, d.error.message, d, origin);
  if (signature) {
    d.confidence = Confidence::high;
  } else if ((signature = first_match(kb, d.error.context, d, origin))) {
    d.confidence = Confidence::medium;
    d.notes.push_back("matched in the text around the error, not in its message: \"" + d.matched +
                      "\"");
  } else if (options.cuda_error) {
    for (const auto& candidate : kb.error_signatures()) {
      if (std::find(candidate.cuda_errors.begin(), candidate.cuda_errors.end(),
                    *options.cuda_error) != candidate.cuda_errors.end()) {
        signature = &candidate;
        break;
      }
    }
    if (signature) {
      d.confidence = Confidence::medium;
      d.matched = "CUDA error " + std::to_string(*options.cuda_error);
    }
  }

  if (signature) d.category = signature->category;
  // A library's own message names it, whatever frame raised it.
  if (origin && !origin->library.empty()) {
    d.printed_by = *origin;
    if (!d.component || d.component->name != origin->library) {
      const std::string raised = d.component ? "; raised through " + d.component->name : "";
      d.component =
          Culprit(origin->library, "distribution", "",
                  "the message is " + origin->library + "'s own" +
                      (origin->versions.empty() ? "" : " (" + origin->versions + ")") + raised);
    }
  }
  if (options.environment) {
    weigh(d, *options.environment);
  } else if (signature) {
    d.environment = built_for_finding(kb, d.error.message, d.sm);
    if (!d.environment) d.environment = built_for_finding(kb, d.error.context, d.sm);
  }
  if (d.component && d.component->version.empty())
    d.component->version = installed_version(*d.component);

  if (!signature) {
    if (d.environment)
      d.notes.push_back("the environment: " + (d.environment->evidence.empty()
                                                   ? std::string("nothing to add")
                                                   : d.environment->evidence.front()));
    if (!d.error.exception_type.empty())
      d.notes.push_back("the error is a " + d.error.exception_type +
                        ", which archfit does not know as a CUDA failure");
    if (d.component)
      d.notes.push_back("it was raised through " + d.component->name + " (" + d.component->why +
                        ")");
    if (d.error.context.find("CUDA") != std::string::npos)
      d.notes.push_back(
          "the text mentions CUDA; `archfit check` shows whether every component has code for "
          "your GPU");
    return d;
  }
  d.explanation = fill_sm(signature->explanation, d.sm);
  d.source = signature->provenance.source;
  if (d.environment) d.fix = d.environment->fix;
  if (d.fix.empty() && !options.environment) add_torch_build_for_arch(kb, d);
  if (d.fix.empty()) d.fix = component_steps(kb, d, options.environment);
  for (const auto& step : signature->fix)
    if (kb_step_applies(step, d.fix, options.environment) == StepApplies::yes)
      d.fix.push_back({.about = "", .text = fill_sm(step.text, d.sm), .command = ""});
  std::string rerun_command;
  if (d.category == kb::ErrorCategory::async_error) {
    rerun_command = launch_blocking_command(d.error);
    d.fix.insert(d.fix.begin(),
                 {.about = "", .text = "Rerun with: " + rerun_command, .command = ""});
    d.notes.push_back(
        "the traceback may point at the wrong call: CUDA reports a kernel's failure "
        "at a later call");
  }
  if (d.category == kb::ErrorCategory::out_of_memory)
    d.notes.push_back("not an architecture problem");
  d.headline = make_headline(*signature, d, options.environment, rerun_command);
  return d;
}

nlohmann::json to_json(const Diagnosis& d) {
  nlohmann::json frames = nlohmann::json::array();
  for (const auto& frame : d.error.frames)
    frames.push_back({{"file", frame.file}, {"line", frame.line}, {"function", frame.function}});
  nlohmann::json component = nullptr;
  if (d.component)
    component = {{"name", d.component->name},
                 {"kind", d.component->kind},
                 {"version", d.component->version},
                 {"path", d.component->path},
                 {"why", d.component->why}};
  nlohmann::json environment = nullptr;
  if (d.environment)
    environment = {{"verdict", to_string(d.environment->verdict)},
                   {"evidence", d.environment->evidence},
                   {"source", d.environment->source},
                   {"devices", d.environment->devices}};
  nlohmann::json headline = nullptr;
  if (d.headline)
    headline = {{"title", d.headline->title},
                {"cause", d.headline->cause},
                {"command", d.headline->command},
                {"step", d.headline->step}};
  return {{"schema", kDiagnosisSchema},
          {"category", kb::to_string(d.category)},
          {"recognised", d.recognised()},
          {"confidence", to_string(d.confidence)},
          {"component", component},
          {"explanation", d.explanation},
          {"fix", fix_lines(d.fix)},
          {"matched", d.matched},
          {"pattern", d.pattern},
          {"source", d.source},
          {"sm", d.sm},
          {"gpu", d.gpu},
          {"notes", d.notes},
          {"environment", environment},
          {"headline", headline},
          {"printed_by", d.printed_by ? nlohmann::json{{"library", d.printed_by->library},
                                                       {"versions", d.printed_by->versions},
                                                       {"source", d.printed_by->source}}
                                      : nlohmann::json(nullptr)},
          {"error",
           {{"kind", d.error.kind},
            {"exception_type", d.error.exception_type},
            {"message", d.error.message},
            {"frames", frames}}}};
}

}  // namespace archfit::diagnose
