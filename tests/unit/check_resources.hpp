#pragma once
// What a test's check runs with: the knowledge base of `kb_dir` (nullopt:
// ARCHFIT_KB_DIR, then the built-in one), loading from now on, and a libcuda
// that is not there, so that this machine's GPU never matters.
#include <filesystem>
#include <optional>

#include "check/check.hpp"

namespace archfit::testing {

inline check::CheckResources check_resources(
    const std::filesystem::path& libcuda,
    const std::optional<std::filesystem::path>& kb_dir = std::nullopt,
    kb::KbParts parts = kb::KbParts::everything) {
  check::CheckResources resources;
  resources.knowledge_base = kb::find_and_load_knowledge_base_async(kb_dir, parts);
  resources.libcuda = libcuda;
  return resources;
}

}  // namespace archfit::testing
