// The error-text reader and classifier on any text: a message, a traceback,
// a whole ComfyUI or InvokeAI log, ComfyUI's Error Report, binary junk. It
// finds the last error, attributes it and diagnoses it against the real
// knowledge base, and renders the diagnosis as JSON and as text.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>

#include "diagnose/diagnosis.hpp"
#include "diagnose/error_text.hpp"
#include "fuzz_input.hpp"
#include "kb/knowledge_base.hpp"
#include "render/diagnosis_text.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const archfit::kb::KnowledgeBase kb =
      archfit::kb::load_knowledge_base(ARCHFIT_KB_SOURCE_DIR);
  const std::string_view text = archfit::fuzz::text(data, size);
  (void)archfit::diagnose::find_last_error(text);
  const auto diagnosis = archfit::diagnose::diagnose(kb, text);
  (void)archfit::diagnose::to_json(diagnosis).dump(-1, ' ', false,
                                                   nlohmann::json::error_handler_t::replace);
  (void)archfit::render::diagnosis_text(diagnosis);
  return 0;
}
