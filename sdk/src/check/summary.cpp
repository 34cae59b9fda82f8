#include "summary.hpp"

#include <algorithm>

namespace archfit::check {

namespace {

const DeviceInfo* device_named(const CheckReport& report, const std::string& name) {
  for (const auto& device : report.devices) {
    if (device.name == name) return &device;
  }
  return nullptr;
}

std::string devices_label(const CheckReport& report) {
  std::string out;
  for (size_t d = 0; d < report.devices.size(); ++d) {
    if (d) out += d + 1 == report.devices.size() ? " and " : ", ";
    out += report.devices[d].label();
  }
  return out;
}

}  // namespace

std::string failure_words(const StackResult& stack, const CheckReport& report) {
  const DeviceInfo* device = device_named(report, stack.device);
  const std::string where = device ? device->label() : stack.device;
  switch (stack.verdict) {
    case compat::Verdict::no_image:
      return "has no image for " + where;
    case compat::Verdict::ptx_too_new_for_driver:
      return "has only PTX newer than driver " + report.driver.version + " compiles, for " + where;
    case compat::Verdict::driver_too_old:
      if (device && !device->driver_knows_it)
        return "cannot run: driver " + report.driver.version + " does not know " + where;
      return "needs a newer driver than " + report.driver.version +
             (stack.cuda
                  ? " (CUDA " + stack.cuda->version + " builds need " +
                        (stack.cuda->min_driver ? stack.cuda->min_driver->to_string() : "?") +
                        " or newer)"
                  : std::string());
    case compat::Verdict::no_cuda_build:
      return "is built without CUDA: it never uses the " + where;
    case compat::Verdict::wrong_platform:
      return "is built for another CPU than the " + (device ? device->machine : std::string()) +
             " machine of " + where;
    case compat::Verdict::missing_library:
      if (!stack.missing_libraries.empty())
        return "does not load: " + stack.missing_libraries.front().needed_by + " links " +
               stack.missing_libraries.front().library + ", which is not installed";
      break;
    default:
      break;
  }
  return std::string(compat::to_string(stack.verdict)) + " on " + where;
}

namespace {

// The stack whose CUDA runtime needs the newest driver; nullptr when none
// says what it needs.
const StackResult* most_demanding_cuda(const CheckReport& report) {
  const StackResult* most = nullptr;
  for (const auto& stack : report.stacks) {
    if (!stack.cuda || !stack.cuda->min_driver) continue;
    if (!most || *most->cuda->min_driver < *stack.cuda->min_driver) most = &stack;
  }
  return most;
}

}  // namespace

std::string summary_line(const CheckReport& report) {
  if (report.devices.empty()) {
    return "unknown: no GPU to judge against, so nothing was judged: " +
           (report.no_gpu.empty() ? std::string("none was named") : report.no_gpu);
  }
  std::vector<const StackResult*> failing;
  size_t notes = 0;
  for (const auto& stack : report.stacks) {
    if (compat::is_failure(stack.verdict)) failing.push_back(&stack);
    notes += stack.notes.size();
  }
  if (failing.empty() && !report.unread.empty()) {
    // The message names the wheel or member and why it was not read.
    std::string line = "unknown: " + report.unread.front();
    if (report.unread.size() > 1)
      line += " (and " + std::to_string(report.unread.size() - 1) + " more not read)";
    return line + "; what it holds was not judged";
  }
  if (failing.empty()) {
    std::string line = "fits: ";
    if (report.stacks.empty()) {
      line += "no CUDA code to judge in what was checked";
    } else {
      for (size_t i = 0; i < report.stacks.size() && i < 3; ++i)
        line += (i ? ", " : "") + report.stacks[i].name_and_version();
      if (report.stacks.size() > 3)
        line += " and " + std::to_string(report.stacks.size() - 3) + " more";
      line += " run on " + devices_label(report);
    }
    if (!report.driver.version.empty()) {
      line += " with driver " + report.driver.version;
    } else if (const StackResult* needs = most_demanding_cuda(report)) {
      // No driver read: what it fits on is only half the answer.
      line += ", given an NVIDIA driver of at least " + needs->cuda->min_driver->to_string() +
              " (what CUDA " + needs->cuda->version + " needs; no driver was read)";
    }
    if (notes) {
      line += " (" + std::to_string(notes) + " feature" + (notes == 1 ? "" : "s") +
              " will not work: see the notes)";
    }
    return line;
  }
  const StackResult& first = *failing.front();
  std::string line = "fails: " + first.name_and_version() + " " + failure_words(first, report);
  if (!first.fix.commands.empty()) {
    line += "; run: " + first.fix.commands.front();
    if (first.fix.commands.size() > 1)
      line += " (and " + std::to_string(first.fix.commands.size() - 1) + " more)";
  } else if (!first.fix.summary.empty()) {
    line += "; fix: " + first.fix.summary;
  }
  if (failing.size() > 1) {
    line += " (" + std::to_string(failing.size() - 1) + " more failing: ";
    for (size_t i = 1; i < failing.size(); ++i) line += (i > 1 ? ", " : "") + failing[i]->name;
    line += ")";
  }
  return line;
}

}  // namespace archfit::check
