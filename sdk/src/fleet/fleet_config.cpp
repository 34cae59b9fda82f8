#include "fleet_config.hpp"

#include <yaml-cpp/yaml.h>

#include <set>

#include "node_labels.hpp"
#include "sys/read_file.hpp"
#include "sys/utf8_path.hpp"

namespace archfit::fleet {

namespace {

namespace fs = std::filesystem;

class Reader {
 public:
  explicit Reader(fs::path file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const YAML::Node& node, const std::string& field,
                         const std::string& why) const {
    std::string where = file_.string();
    // Appended in two steps: GCC 12 warns falsely (-Wrestrict) on
    // ":" + std::to_string(…) once inlined into a larger unit.
    if (node.IsDefined() && node.Mark().line >= 0) {
      where += ':';
      where += std::to_string(node.Mark().line + 1);
    }
    throw FleetConfigError(where + ": " + (field.empty() ? "" : field + ": ") + why);
  }

  std::string scalar(const YAML::Node& node, const std::string& field) const {
    if (!node.IsScalar()) fail(node, field, "expected a string");
    return node.as<std::string>();
  }

  // A path from the file, taken from the file's folder when relative.
  std::string path(const YAML::Node& node, const std::string& field) const {
    const fs::path given = sys::path_of_utf8(scalar(node, field));
    if (given.empty()) fail(node, field, "is empty");
    return sys::utf8_of(
        (given.is_absolute() ? given : file_.parent_path() / given).lexically_normal());
  }

  // One path or a list of them.
  std::vector<std::string> paths(const YAML::Node& node, const std::string& field) const {
    if (node.IsScalar()) return {path(node, field)};
    if (!node.IsSequence()) fail(node, field, "expected a path or a list of paths");
    std::vector<std::string> out;
    for (size_t i = 0; i < node.size(); ++i)
      out.push_back(path(node[i], field + "[" + std::to_string(i) + "]"));
    return out;
  }

 private:
  fs::path file_;
};

}  // namespace

FleetConfig read_fleet_config(const fs::path& file) {
  YAML::Node root;
  // Through sys/, not YAML::LoadFile, whose narrow path Windows would read
  // in the ANSI code page.
  const auto text = sys::read_file(file);
  if (!text) throw FleetConfigError(sys::utf8_of(file) + ": cannot read the file");
  try {
    root = YAML::Load(*text);
  } catch (const YAML::ParserException& error) {
    throw FleetConfigError(file.string() + ":" + std::to_string(error.mark.line + 1) +
                           ": YAML syntax: " + error.msg);
  }
  const Reader read(file);
  if (!root.IsMap()) read.fail(root, "", "expected a mapping with `schema: archfit.fleet/1`");
  if (!root["schema"] || read.scalar(root["schema"], "schema") != "archfit.fleet/1")
    read.fail(root["schema"], "schema", "expected archfit.fleet/1");
  for (const auto& entry : root) {
    const auto key = entry.first.as<std::string>();
    if (key != "schema" && key != "environments")
      read.fail(entry.first, key, "unknown field (schema and environments are known)");
  }
  const YAML::Node list = root["environments"];
  if (!list || !list.IsSequence() || list.size() == 0)
    read.fail(list, "environments", "expected a list of at least one environment");

  FleetConfig config;
  config.file = file;
  std::set<std::string> names;
  for (size_t i = 0; i < list.size(); ++i) {
    const YAML::Node item = list[i];
    const std::string where = "environments[" + std::to_string(i) + "]";
    if (!item.IsMap()) read.fail(item, where, "expected a mapping with a name");
    FleetEnvironment environment;
    if (!item["name"]) read.fail(item, where, "has no name");
    environment.name = read.scalar(item["name"], where + ".name");
    // It becomes archfit.dev/fits.<name>: a label name's rules hold.
    const std::string label = std::string(kLabelPrefix) + "fits." + environment.name;
    if (auto problem = label_name_problem(label); !problem.empty())
      read.fail(item["name"], where + ".name",
                "\"" + environment.name + "\" cannot name the label " + label + ": " + problem);
    if (!names.insert(environment.name).second)
      read.fail(item["name"], where + ".name", "\"" + environment.name + "\" is named twice");
    bool named = false;
    for (const auto& field : item) {
      const auto key = field.first.as<std::string>();
      const std::string at = where + "." + key;
      if (key == "name") continue;
      named = true;
      if (key == "venv") {
        environment.venvs = read.paths(field.second, at);
      } else if (key == "python") {
        environment.python = read.scalar(field.second, at);
      } else if (key == "comfyui") {
        environment.comfyui = read.path(field.second, at);
      } else if (key == "custom_nodes") {
        environment.custom_nodes = read.path(field.second, at);
      } else if (key == "site_packages") {
        environment.site_packages = read.paths(field.second, at);
      } else if (key == "wheels") {
        environment.wheels = read.paths(field.second, at);
      } else if (key == "paths") {
        environment.paths = read.paths(field.second, at);
      } else {
        read.fail(field.first, at,
                  "unknown field (venv, python, comfyui, custom_nodes, site_packages, wheels and "
                  "paths name an environment)");
      }
    }
    if (!named)
      read.fail(item, where,
                "names no environment: give venv, python, comfyui, custom_nodes, site_packages, "
                "wheels or paths");
    config.environments.push_back(std::move(environment));
  }
  return config;
}

}  // namespace archfit::fleet
