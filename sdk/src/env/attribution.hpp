#pragma once
// Which component a binary belongs to: the distribution that installed it
// (its RECORD lists the file), the ComfyUI custom-node pack whose folder holds
// it, or, failing both, the library itself. The report groups verdicts and
// fixes by component, since that is what a user upgrades or removes.
#include <filesystem>
#include <optional>
#include <string>

#include "python_env.hpp"

namespace archfit::env {

enum class ComponentKind { distribution, custom_node, library };
std::string_view to_string(ComponentKind kind);  // "distribution" | "custom_node" | "library"

struct Component {
  ComponentKind kind = ComponentKind::library;
  std::string name;            // "xformers", "ComfyUI-GGUF", "libfoo.so"
  std::string version;         // distributions only
  std::filesystem::path root;  // dist-info, pack folder, or the file
};

// `site` and `custom_nodes` may be absent; the first match wins in the order
// distribution, custom-node pack, library.
Component attribute(const std::filesystem::path& file, const SitePackages* site,
                    const std::optional<std::filesystem::path>& custom_nodes);

}  // namespace archfit::env
