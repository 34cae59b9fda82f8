#include "attribution.hpp"

namespace archfit::env {

namespace fs = std::filesystem;

std::string_view to_string(ComponentKind kind) {
  switch (kind) {
    case ComponentKind::distribution:
      return "distribution";
    case ComponentKind::custom_node:
      return "custom_node";
    case ComponentKind::library:
      break;
  }
  return "library";
}

Component attribute(const fs::path& file, const SitePackages* site,
                    const std::optional<fs::path>& custom_nodes) {
  const fs::path normal = file.lexically_normal();
  if (site) {
    if (const Distribution* owner = site->owner_of(normal)) {
      return {ComponentKind::distribution, owner->name, owner->version, owner->dist_info};
    }
  }
  if (custom_nodes) {
    // custom_nodes/<pack>/…: the first path element below custom_nodes names the pack.
    const fs::path relative = normal.lexically_relative(custom_nodes->lexically_normal());
    if (!relative.empty() && *relative.begin() != ".." && *relative.begin() != "." &&
        std::distance(relative.begin(), relative.end()) > 1) {
      const fs::path pack = *relative.begin();
      return {ComponentKind::custom_node, pack.string(), "",
              custom_nodes->lexically_normal() / pack};
    }
  }
  return {ComponentKind::library, normal.filename().string(), "", normal};
}

}  // namespace archfit::env
