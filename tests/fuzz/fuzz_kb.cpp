// Knowledge-base loading with one of its YAML files replaced by the input.
// The input is "<file name>\n<content>": the first line picks which file of
// the real knowledge base (gpus.yaml, torch.yaml, …) the rest replaces, so
// seeds are the real files and mutations stay close to real mistakes. Bad
// YAML, wrong types and wrong values must be a KbError naming the file,
// never a crash.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

#include "fuzz_input.hpp"
#include "kb/kb_error.hpp"
#include "kb/knowledge_base.hpp"

namespace fs = std::filesystem;

namespace {

const char* const kFiles[] = {"gpus.yaml",       "torch.yaml",  "ptx_isa.yaml", "drivers.yaml",
                              "components.yaml", "errors.yaml", "packages.yaml"};

// A copy of the source knowledge base, restored file by file after each input.
const fs::path& kb_copy() {
  static const fs::path dir = [] {
    const fs::path copy = archfit::fuzz::scratch_dir() / "kb";
    fs::remove_all(copy);
    fs::copy(ARCHFIT_KB_SOURCE_DIR, copy, fs::copy_options::recursive);
    return copy;
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input = archfit::fuzz::text(data, size);
  const size_t newline = input.find('\n');
  if (newline == std::string_view::npos) return -1;  // not kept in the corpus
  const std::string_view name = input.substr(0, newline);
  const char* file = nullptr;
  for (const char* known : kFiles)
    if (name == known) file = known;
  if (!file) return -1;
  const fs::path& dir = kb_copy();
  archfit::fuzz::write_file(dir / file, input.substr(newline + 1));
  try {
    (void)archfit::kb::load_knowledge_base(dir);
  } catch (const archfit::kb::KbError&) {
  }
  fs::copy_file(fs::path(ARCHFIT_KB_SOURCE_DIR) / file, dir / file,
                fs::copy_options::overwrite_existing);
  return 0;
}
