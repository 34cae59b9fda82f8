#include "check_text.hpp"

#include <map>
#include <string>

#include "check/summary.hpp"

namespace archfit::render {

namespace {

struct Paint {
  bool on;
  std::string operator()(const char* code, const std::string& text) const {
    return on ? std::string("\033[") + code + "m" + text + "\033[0m" : text;
  }
};

const char* mark(compat::Verdict verdict) {
  if (verdict == compat::Verdict::unknown) return "?";
  if (compat::is_failure(verdict)) return "✗";
  if (compat::is_warning(verdict)) return "!";
  return "✓";
}

const char* mark_color(compat::Verdict verdict) {
  if (verdict == compat::Verdict::unknown) return "2";
  if (compat::is_failure(verdict)) return "31";
  if (compat::is_warning(verdict)) return "33";
  return "32";
}

// "on GeForce RTX 4090: native; on GeForce RTX 5090: no-image".
std::string per_device_line(const std::vector<compat::Verdict>& verdicts,
                            const check::CheckReport& report) {
  std::string line;
  for (size_t d = 0; d < verdicts.size() && d < report.devices.size(); ++d) {
    line += (line.empty() ? "on " : "; on ") + report.devices[d].name + ": " +
            std::string(compat::to_string(verdicts[d]));
  }
  return line;
}

// --confirm: "driver: 3 of 3 loaded as judged" or "driver disagrees on 1 of 3 …".
std::string driver_line(const std::vector<const check::BinaryResult*>& binaries) {
  size_t answers = 0, loaded = 0, disagreements = 0;
  for (const auto* binary : binaries) {
    for (const auto& answer : binary->driver) {
      ++answers;
      loaded += answer.loaded;
      disagreements += !answer.agrees;
    }
  }
  if (answers == 0) return {};
  const std::string counts = std::to_string(loaded) + " of " + std::to_string(answers) +
                             " containers loaded by the driver";
  if (disagreements == 0) return "driver: " + counts + ", as judged";
  return "driver disagrees on " + std::to_string(disagreements) + ": " + counts +
         " (see the notes below)";
}

// "torch, torchvision, triton and 14 nvidia-* wheels".
std::string members_line(const check::StackResult& stack) {
  std::vector<std::string> named;
  size_t nvidia = 0;
  for (const auto& member : stack.members) {
    if (member.starts_with("nvidia-") || member.starts_with("nvidia_")) {
      ++nvidia;
    } else {
      named.push_back(member);
    }
  }
  std::string line;
  for (size_t i = 0; i < named.size(); ++i) line += (i ? ", " : "") + named[i];
  if (nvidia) {
    line += (line.empty() ? "" : " and ") + std::to_string(nvidia) + " nvidia-* wheel" +
            (nvidia == 1 ? "" : "s");
  }
  return line;
}

void print_fix(std::ostream& out, const check::Fix& fix, const Paint& paint, const char* lead) {
  if (fix.summary.empty() && fix.commands.empty()) return;
  out << "    " << lead << fix.summary << '\n';
  for (const auto& command : fix.commands) out << "      " << paint("36", command) << '\n';
  for (const auto& alternative : fix.alternatives) print_fix(out, alternative, paint, "or: ");
}

void print_stack(std::ostream& out, const check::StackResult& stack,
                 const check::CheckReport& report, const Paint& paint) {
  std::string title = stack.name;
  if (!stack.version.empty()) title += " " + stack.version;
  if (stack.kind == env::ComponentKind::custom_node) title += " (custom node)";
  out << paint(mark_color(stack.verdict), std::string(mark(stack.verdict)) + " " + title) << "  "
      << paint("1", std::string(compat::to_string(stack.verdict))) << '\n';
  if (stack.members.size() > 1) out << "    " << paint("2", members_line(stack)) << '\n';
  if (report.devices.size() > 1) out << "    " << per_device_line(stack.per_device, report) << '\n';
  if (!stack.evidence.empty()) out << "    " << stack.evidence << '\n';
  std::vector<const check::BinaryResult*> binaries;
  for (const auto& [c, b] : stack.binaries) binaries.push_back(&report.components[c].binaries[b]);
  if (const std::string line = driver_line(binaries); !line.empty())
    out << "    " << paint(line.find("disagrees") != std::string::npos ? "31" : "2", line) << '\n';
  // A missing image is said by the evidence; the other verdicts' words say
  // what to expect (a slow first run, a driver that refuses).
  if ((compat::is_failure(stack.verdict) || compat::is_warning(stack.verdict)) &&
      stack.verdict != compat::Verdict::no_image && !stack.explanation.empty())
    out << "    " << stack.explanation << '\n';
  print_fix(out, stack.fix, paint, "fix: ");
  // "The rest runs" only of a stack that does.
  const bool stack_runs = !compat::is_failure(stack.verdict);
  for (const auto& note : stack.notes) {
    out << "    " << paint("33", "feature: ") << note.feature << " — will not work on "
        << note.device << " (" << note.library.filename().string() << ": "
        << compat::to_string(note.verdict) << ")" << (stack_runs ? "; the rest runs" : "") << '\n';
  }
}

}  // namespace

void print_check_text(std::ostream& out, const check::CheckReport& report, bool color,
                      bool details) {
  const Paint paint{color};
  if (report.environment) {
    out << "env     " << report.environment->where.string() << "  "
        << paint("2", "(" + report.environment->source + ")") << '\n';
  }
  for (const auto& device : report.devices) {
    out << "GPU     " << device.name << " (" << device.cc.sm_name() << ", compute capability "
        << device.cc.to_string() << (device.simulated ? ", simulated" : "")
        << (device.machine.empty() ? "" : ", " + device.machine) << ")\n";
  }
  if (report.devices.empty()) {
    out << "GPU     none: " << report.no_gpu
        << "; name one to ask about it (--gpu \"RTX 5090\", --gpu sm_120)\n";
  }
  out << "driver  ";
  if (report.driver.version.empty()) {
    out << "unknown (verdicts on PTX assume a new enough driver)";
  } else {
    if (report.driver.at_least) out << "at least ";
    out << report.driver.version;
    const bool windows = report.driver.family == kb::DriverFamily::windows_driver;
    if (windows || report.driver.simulated)
      out << " (" << (windows ? "Windows" : "") << (windows && report.driver.simulated ? ", " : "")
          << (report.driver.simulated ? "simulated" : "") << ")";
    if (!report.driver.cuda_version.empty()) out << ", CUDA " << report.driver.cuda_version;
    if (report.driver.max_ptx_isa)
      out << ", JIT-compiles PTX up to ISA " << report.driver.max_ptx_isa->to_string();
  }
  out << '\n';
  if (report.torch) out << "torch   " << *report.torch << '\n';
  for (const auto& wheel : report.wheels) {
    out << "wheel   " << wheel.name << ' ' << wheel.version << "  "
        << paint("2", wheel.path.filename().string()) << '\n';
  }
  if (details) {
    for (const auto& library : report.libraries) {
      out << "lib     lib" << library.name << ".so"
          << (library.version.empty() ? "" : "." + library.version) << "  "
          << paint("2", library.path.parent_path().string() + " (" + library.origin + ")") << '\n';
    }
  }
  for (const auto& probe : report.probes) {
    out << "probe   " << probe.plugin << ": " << probe.summary << '\n';
    for (size_t d = 0; d < probe.per_device.size() && d < report.devices.size(); ++d) {
      const compat::Verdict verdict = probe.per_device[d];
      out << "        its arch flags on " << report.devices[d].name << ": "
          << paint(mark_color(verdict), std::string(compat::to_string(verdict))) << '\n';
    }
  }
  out << '\n';

  for (const auto& stack : report.stacks) print_stack(out, stack, report, paint);
  if (report.stacks.empty()) {
    out << "no CUDA device code found in what was "
        << (report.unread.empty() ? "checked" : "read (see the notes for what was not)") << '\n';
  }

  if (details) {
    out << "\ncomponents:\n";
    for (const auto& component : report.components) {
      std::string title = component.component.name;
      if (!component.component.version.empty()) title += " " + component.component.version;
      const bool loaded = component.reach == check::Reach::loaded;
      const compat::Verdict shown = loaded ? component.verdict : compat::Verdict::native;
      out << "  " << paint(mark_color(shown), std::string(mark(shown))) << " " << title << "  "
          << compat::to_string(component.verdict)
          << (loaded                                     ? ""
              : component.reach == check::Reach::feature ? ", feature only"
                                                         : ", not loaded")
          << (component.stack.empty() ? "" : "  (" + component.stack + ")") << '\n';
      for (const auto& binary : component.binaries) {
        out << "      " << binary.path.filename().string() << "  "
            << compat::to_string(binary.judgement.verdict) << ", " << check::to_string(binary.reach)
            << ": " << binary.reach_reason << '\n';
      }
      std::vector<const check::BinaryResult*> binaries;
      for (const auto& binary : component.binaries) binaries.push_back(&binary);
      if (const std::string line = driver_line(binaries); !line.empty())
        out << "      " << paint(line.find("disagrees") != std::string::npos ? "31" : "2", line)
            << '\n';
    }
  } else {
    size_t unreached = 0;
    for (const auto& component : report.components) {
      for (const auto& binary : component.binaries)
        unreached += binary.reach == check::Reach::unreached;
    }
    if (unreached) {
      out << paint("2", std::to_string(unreached) + " librar" + (unreached == 1 ? "y" : "ies") +
                            " with device code that nothing here loads were not counted "
                            "(--details lists every component and library)")
          << '\n';
    }
  }
  if (report.confirm) {
    out << "driver check (--confirm): " << report.confirm->asked
        << " containers loaded or refused, " << report.confirm->disagreed
        << " disagreeing with the verdict, " << report.confirm->not_asked
        << " binaries not asked\n";
  }
  for (const auto& finding : report.findings) out << paint("33", "note: ") << finding << '\n';
  out << '\n';
  const std::string summary = report.summary;
  const auto colon = summary.find(':');
  const char* code = report.verdict == check::OverallVerdict::fits    ? "32"
                     : report.verdict == check::OverallVerdict::fails ? "31"
                                                                      : "33";
  out << paint(code, summary.substr(0, colon))
      << (colon == std::string::npos ? "" : summary.substr(colon)) << '\n';
}

}  // namespace archfit::render
