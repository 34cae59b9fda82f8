// A plugin manifest, read before any library is touched: whatever it holds,
// the answer is a Manifest or a PluginError with the reason.
#include <cstddef>
#include <cstdint>

#include "fuzz_input.hpp"
#include "plugin/manifest.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const auto path = archfit::fuzz::scratch_dir() / "fuzz.archfit-plugin.yaml";
  archfit::fuzz::write_file(path, archfit::fuzz::text(data, size));
  try {
    (void)archfit::plugin::read_manifest(path);
  } catch (const archfit::plugin::PluginError&) {
  }
  return 0;
}
