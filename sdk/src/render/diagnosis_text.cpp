#include "diagnosis_text.hpp"

namespace archfit::render {

std::string diagnosis_text(const diagnose::Diagnosis& d) {
  std::string out;
  if (!d.recognised()) {
    out += "not recognised: archfit does not know this error as a CUDA failure\n";
  } else {
    if (d.headline) out += d.headline->title + "\n";
    out += std::string(kb::to_string(d.category)) + " (" +
           std::string(diagnose::to_string(d.confidence)) + " confidence)\n";
  }
  if (!d.error.exception_type.empty() || !d.error.message.empty()) {
    std::string first_line = d.error.message.substr(0, d.error.message.find('\n'));
    if (first_line.size() > 200) first_line = first_line.substr(0, 200) + "…";
    out += "error      " +
           (d.error.exception_type.empty() ? std::string() : d.error.exception_type + ": ") +
           first_line + "\n";
  }
  if (d.component)
    out += "component  " + d.component->name +
           (d.component->version.empty() ? "" : " " + d.component->version) + " (" +
           d.component->kind + ")\n           " + d.component->why + "\n";
  if (!d.explanation.empty()) out += "why        " + d.explanation + "\n";
  if (d.environment) {
    // "checked    confirms: xformers 0.0.28.post1 has SASS up to sm_90 …".
    out += "checked    " + std::string(diagnose::to_string(d.environment->verdict)) + " (" +
           d.environment->source + ")";
    for (size_t i = 0; i < d.environment->evidence.size(); ++i)
      out += (i == 0 ? ": " : "\n           ") + d.environment->evidence[i];
    out += "\n";
  }
  for (size_t i = 0; i < d.fix.size(); ++i)
    out += (i == 0 ? "fix        " : "           ") + std::to_string(i + 1) + ". " +
           d.fix[i].line() + "\n";
  for (const auto& note : d.notes) out += "note       " + note + "\n";
  return out;
}

}  // namespace archfit::render
