#include "jit_text.hpp"

#include <sstream>

namespace archfit::render {

std::string compile_text(const jit::CachedCompile& compiled, const CompileFacts& facts) {
  const bool hit = compiled.source != jit::CacheSource::built;
  std::ostringstream out;
  out << "nvrtc    " << facts.nvrtc
      << (facts.nvrtc_loaded ? "" : " [known from the discovery record; not loaded]") << '\n'
      << "path     NVRTC " << facts.target << " ("
      << (hit ? std::string("cache hit, ") + jit::to_string(compiled.source)
              : std::string("compiled"))
      << ")\n"
      << "time     " << compiled.milliseconds << " ms\n"
      << "image    " << compiled.image->size() << " bytes, " << jit::to_string(compiled.format)
      << ", scanned: " << facts.scanned
      << (facts.confirmed ? " (confirmed)" : " (NOT the arch asked for)") << '\n'
      << "cache    " << (facts.cache_dir ? facts.cache_dir->string() : std::string("memory only"))
      << "  key " << compiled.key << '\n';
  if (!facts.output.empty()) out << "wrote    " << facts.output << '\n';
  return out.str();
}

std::string bundle_text(const jit::BundleResult& result, const BundleFacts& facts) {
  std::ostringstream out;
  for (size_t i = 0; i < result.images.size(); ++i) {
    const auto& image = result.images[i];
    const bool present = i < facts.present.size() && facts.present[i];
    out << (present ? "  " : "✗ ") << image.arch << "  " << image.milliseconds << " ms  ("
        << image.cache << ")\n";
  }
  out << "wrote " << facts.output << ": " << facts.scanned << " (" << facts.file_size << " bytes, "
      << result.images.size() << " archs in " << result.milliseconds << " ms, " << facts.jobs
      << " at once; packed by " << result.fatbinary.string() << ")\n";
  return out.str();
}

}  // namespace archfit::render
