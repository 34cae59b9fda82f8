#include "manifest.hpp"
#include "sys/read_file.hpp"
#include "sys/utf8_path.hpp"
#include "util/pattern.hpp"

#include <yaml-cpp/yaml.h>

namespace archfit::plugin {

namespace fs = std::filesystem;

namespace {

std::string scalar(const YAML::Node& map, const char* key) {
  const YAML::Node node = map[key];
  if (!node) throw PluginError(std::string("the manifest has no `") + key + "`");
  if (!node.IsScalar() || node.Scalar().empty())
    throw PluginError(std::string("the manifest's `") + key + "` is not a non-empty string");
  return node.Scalar();
}

uint32_t abi_version(const YAML::Node& node) {
  const std::string text = node.IsScalar() ? node.Scalar() : "";
  static const util::Pattern kNumber("[1-9][0-9]{0,5}");
  if (!kNumber.matches_whole(text))
    throw PluginError("the manifest's `abi` must be a version number or [lowest, highest], not \"" +
                      text + "\"");
  return static_cast<uint32_t>(std::stoul(text));
}

}  // namespace

Manifest read_manifest(const fs::path& path) {
  YAML::Node root;
  // Through sys/, not YAML::LoadFile, whose narrow path Windows would read
  // in the ANSI code page.
  const auto text = sys::read_file(path);
  if (!text) throw PluginError("the manifest cannot be read");
  try {
    root = YAML::Load(*text);
  } catch (const YAML::Exception& error) {
    throw PluginError("the manifest is not YAML (line " + std::to_string(error.mark.line + 1) +
                      ": " + error.msg + ")");
  }
  if (!root.IsMap()) throw PluginError("the manifest is not a YAML mapping");
  Manifest manifest;
  manifest.path = path;
  if (const std::string schema = scalar(root, "schema"); schema != kManifestSchema)
    throw PluginError("the manifest's schema is \"" + schema + "\", not \"" + kManifestSchema +
                      "\"");
  manifest.name = scalar(root, "name");
  static const util::Pattern kName("[A-Za-z0-9_.-]{1,100}");
  if (!kName.matches_whole(manifest.name))
    throw PluginError("the manifest's name \"" + manifest.name +
                      "\" is not 1 to 100 letters, digits, '_', '.' or '-'");
  const fs::path library = sys::path_of_utf8(scalar(root, "library"));
  if (library.is_absolute())
    throw PluginError("the manifest's library must be relative to the manifest, not " +
                      library.string());
  manifest.library = fs::absolute(path).parent_path() / library;
  const YAML::Node abi = root["abi"];
  if (!abi) throw PluginError("the manifest has no `abi`");
  if (abi.IsSequence()) {
    if (abi.size() != 2) throw PluginError("the manifest's `abi` list must be [lowest, highest]");
    manifest.abi_min = abi_version(abi[0]);
    manifest.abi_max = abi_version(abi[1]);
    if (manifest.abi_min > manifest.abi_max)
      throw PluginError("the manifest's `abi` range starts above its end");
  } else {
    manifest.abi_min = manifest.abi_max = abi_version(abi);
  }
  return manifest;
}

}  // namespace archfit::plugin
