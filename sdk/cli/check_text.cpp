#include "check_text.hpp"

#include <string>

namespace archfit::cli {

namespace {

struct Paint {
  bool on;
  std::string operator()(const char* code, const std::string& text) const {
    return on ? std::string("\033[") + code + "m" + text + "\033[0m" : text;
  }
};

const char* mark(compat::Verdict verdict) {
  if (compat::is_failure(verdict)) return "✗";
  if (compat::is_warning(verdict)) return "!";
  return "✓";
}

const char* mark_color(compat::Verdict verdict) {
  if (compat::is_failure(verdict)) return "31";
  if (compat::is_warning(verdict)) return "33";
  return "32";
}

// "on GeForce RTX 4090: native; on GeForce RTX 5090: no-image (below)".
std::string per_device_line(const check::ComponentResult& component,
                            const check::CheckReport& report) {
  std::string line;
  for (size_t d = 0; d < component.per_device.size() && d < report.devices.size(); ++d) {
    line += (line.empty() ? "on " : "; on ") + report.devices[d].name + ": " +
            std::string(compat::to_string(component.per_device[d]));
    if (report.devices[d].name == component.device && component.per_device.size() > 1)
      line += " (explained below)";
  }
  return line;
}

// --confirm: "driver: 3 of 3 loaded as judged" or "driver disagrees on 1 of 3 …".
std::string driver_line(const check::ComponentResult& component) {
  size_t answers = 0, loaded = 0, disagreements = 0;
  for (const auto& binary : component.binaries) {
    for (const auto& answer : binary.driver) {
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

}  // namespace

void print_check_text(std::ostream& out, const check::CheckReport& report, bool color) {
  const Paint paint{color};
  for (const auto& device : report.devices) {
    out << "GPU     " << device.name << " (" << device.cc.sm_name() << ", compute capability "
        << device.cc.to_string() << (device.simulated ? ", simulated" : "") << ")\n";
  }
  if (report.devices.empty()) out << "GPU     none\n";
  out << "driver  ";
  if (report.driver.version.empty()) {
    out << "unknown (verdicts on PTX assume a new enough driver)";
  } else {
    out << report.driver.version << (report.driver.simulated ? " (simulated)" : "");
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
  for (const auto& library : report.libraries) {
    out << "lib     lib" << library.name << ".so"
        << (library.version.empty() ? "" : "." + library.version) << "  "
        << paint("2", library.path.parent_path().string() + " (" + library.origin + ")") << '\n';
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

  size_t failing = 0, warning = 0;
  for (const auto& component : report.components) {
    failing += compat::is_failure(component.verdict);
    warning += compat::is_warning(component.verdict);
    std::string title = component.component.name;
    if (!component.component.version.empty()) title += " " + component.component.version;
    if (component.component.kind == env::ComponentKind::custom_node) title += " (custom node)";
    out << paint(mark_color(component.verdict), std::string(mark(component.verdict)) + " " + title)
        << "  " << paint("1", std::string(compat::to_string(component.verdict))) << '\n';
    if (report.devices.size() > 1) out << "    " << per_device_line(component, report) << '\n';
    if (!component.evidence.empty()) out << "    " << component.evidence << '\n';
    if (const std::string line = driver_line(component); !line.empty())
      out << "    " << paint(line.find("disagrees") != std::string::npos ? "31" : "2", line)
          << '\n';
    if (compat::is_failure(component.verdict) || compat::is_warning(component.verdict)) {
      if (!component.explanation.empty()) out << "    " << component.explanation << '\n';
    }
    if (!component.fix.summary.empty()) out << "    fix: " << component.fix.summary << '\n';
    for (const auto& command : component.fix.commands)
      out << "      " << paint("36", command) << '\n';
  }
  if (report.components.empty()) out << "no CUDA device code found in what was checked\n";
  if (report.confirm) {
    out << "driver check (--confirm): " << report.confirm->asked
        << " containers loaded or refused, " << report.confirm->disagreed
        << " disagreeing with the verdict, " << report.confirm->not_asked
        << " binaries not asked\n";
  }
  for (const auto& finding : report.findings) out << paint("33", "note: ") << finding << '\n';
  out << '\n';
  switch (report.verdict) {
    case check::OverallVerdict::fits:
      out << paint("32", "fits") << ": every component has an image this GPU runs";
      if (warning) out << " (" << warning << " JIT-compile on first use)";
      break;
    case check::OverallVerdict::fails:
      out << paint("31", "fails") << ": " << failing << " component" << (failing == 1 ? "" : "s")
          << " will stop with \"no kernel image is available\" or a driver error";
      break;
    case check::OverallVerdict::unknown:
      out << "unknown: no GPU to judge against";
      break;
  }
  out << '\n';
}

}  // namespace archfit::cli
