#pragma once
// One YAML file of the knowledge base, with readers for typed fields that
// fail with the file, line and field of whatever is wrong (KbFormatError).
// Internal to kb/: yaml-cpp stays inside this module.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "knowledge_base.hpp"
#include "sys/read_file.hpp"
#include "sys/utf8_path.hpp"

namespace archfit::kb {

inline std::string indexed(const std::string& path, size_t index) {
  return path + "[" + std::to_string(index) + "]";
}

// One YAML file, with helpers that read typed fields and fail with the
// file, line and field of whatever is wrong.
class YamlFile {
 public:
  YamlFile(std::filesystem::path path, std::string_view kind) : path_(std::move(path)) {
    // Read through sys/, not YAML::LoadFile: yaml-cpp opens a narrow path,
    // which Windows reads in the ANSI code page (a folder named "José" or
    // "模型" would be missing).
    const auto text = sys::read_file(path_);
    if (!text) throw KbError(sys::utf8_of(path_) + ": cannot read the file");
    try {
      root_ = YAML::Load(*text);
    } catch (const YAML::ParserException& e) {
      throw KbFormatError(path_.string(), e.mark.line + 1, e.mark.column + 1, "",
                          "YAML syntax: " + e.msg);
    }
    const std::string expected = "archfit.kb." + std::string(kind) + "/1";
    if (!root_.IsMap())
      fail(root_, "", "expected a mapping that starts with `schema: " + expected + "`");
    const auto schema = string(root_, "schema", "");
    if (schema != expected) {
      fail(root_["schema"], "schema", "expected \"" + expected + "\", got \"" + schema + "\"");
    }
  }

  const YAML::Node& root() const { return root_; }
  std::string name() const { return path_.filename().string(); }

  [[noreturn]] void fail(const YAML::Node& at, const std::string& field,
                         const std::string& problem) const {
    int line = 0;
    int column = 0;
    if (at.IsDefined()) {
      const auto mark = at.Mark();
      if (mark.line >= 0) {
        line = mark.line + 1;
        column = mark.column + 1;
      }
    }
    throw KbFormatError(path_.string(), line, column, field, problem);
  }

  static std::string join(const std::string& path, const char* key) {
    return path.empty() ? key : path + "." + key;
  }

  // The value under `key`, or an undefined node when it is absent or null.
  static YAML::Node child(const YAML::Node& map, const char* key) {
    YAML::Node value = map[key];
    if (!value.IsDefined() || value.IsNull()) return YAML::Node(YAML::NodeType::Undefined);
    return value;
  }

  YAML::Node required(const YAML::Node& map, const char* key, const std::string& path) const {
    auto value = child(map, key);
    if (!value.IsDefined()) fail(map, join(path, key), "missing (required)");
    return value;
  }

  void expect_map(const YAML::Node& node, const std::string& path) const {
    if (!node.IsMap()) fail(node, path, "expected a mapping (key: value entries)");
  }

  std::string scalar(const YAML::Node& node, const std::string& field) const {
    if (!node.IsScalar()) fail(node, field, "expected a string, got " + describe(node));
    std::string text = node.Scalar();
    const auto first = text.find_first_not_of(" \t");
    const auto last = text.find_last_not_of(" \t");
    text = first == std::string::npos ? "" : text.substr(first, last - first + 1);
    if (text.empty()) fail(node, field, "must not be empty");
    return text;
  }

  std::string string(const YAML::Node& map, const char* key, const std::string& path) const {
    return scalar(required(map, key, path), join(path, key));
  }

  std::string optional_string(const YAML::Node& map, const char* key,
                              const std::string& path) const {
    const auto value = child(map, key);
    return value.IsDefined() ? scalar(value, join(path, key)) : std::string();
  }

  // A list under `key`; empty when absent unless required.
  YAML::Node list(const YAML::Node& map, const char* key, const std::string& path,
                  bool is_required) const {
    auto value = is_required ? required(map, key, path) : child(map, key);
    if (value.IsDefined() && !value.IsSequence()) {
      fail(value, join(path, key), "expected a list, got " + describe(value));
    }
    return value;
  }

  std::vector<std::string> string_list(const YAML::Node& map, const char* key,
                                       const std::string& path, bool is_required) const {
    std::vector<std::string> values;
    const auto items = list(map, key, path, is_required);
    if (!items.IsDefined()) return values;
    for (size_t i = 0; i < items.size(); ++i) {
      values.push_back(scalar(items[i], indexed(join(path, key), i)));
    }
    if (is_required && values.empty()) fail(items, join(path, key), "must not be empty");
    return values;
  }

  ComputeCapability cc(const YAML::Node& node, const std::string& field) const {
    const auto text = scalar(node, field);
    // Strict here: the file says "12.0", the user may say "sm_120".
    const auto value = parse_compute_capability(text);
    if (!value || text.find('.') == std::string::npos) {
      fail(node, field, "expected a compute capability like \"12.0\", got \"" + text + "\"");
    }
    return *value;
  }

  DriverVersion driver(const YAML::Node& node, const std::string& field) const {
    const auto text = scalar(node, field);
    const auto value = parse_driver_version(text);
    if (!value)
      fail(node, field, "expected a driver version like \"570.86.16\", got \"" + text + "\"");
    return *value;
  }

  std::optional<DriverVersion> optional_driver(const YAML::Node& map, const char* key,
                                               const std::string& path) const {
    const auto value = child(map, key);
    if (!value.IsDefined()) return std::nullopt;
    return driver(value, join(path, key));
  }

  // true or false under `key`; `absent` when it is not there.
  bool flag(const YAML::Node& map, const char* key, const std::string& path, bool absent) const {
    const auto text = optional_string(map, key, path);
    if (text.empty()) return absent;
    if (text != "true" && text != "false")
      fail(map[key], join(path, key), "expected true or false");
    return text == "true";
  }

  // A CUDA release under `key`: "12.8".
  std::string cuda_release(const YAML::Node& map, const char* key, const std::string& path) const {
    const auto node = required(map, key, path);
    auto text = scalar(node, join(path, key));
    if (!two_part_version(text)) {
      fail(node, join(path, key), "expected a CUDA release like \"12.8\", got \"" + text + "\"");
    }
    return text;
  }

  uint32_t number(const YAML::Node& node, const std::string& field, size_t max_digits) const {
    const auto text = scalar(node, field);
    const auto value = small_number(text, max_digits);
    if (!value) fail(node, field, "expected a whole number, got \"" + text + "\"");
    return *value;
  }

  // SM numbers as get_arch_list() has them without the prefix: 75, 120.
  std::vector<uint32_t> sm_list(const YAML::Node& map, const char* key, const std::string& path,
                                bool is_required) const {
    std::vector<uint32_t> values;
    const auto items = list(map, key, path, is_required);
    if (!items.IsDefined()) return values;
    for (size_t i = 0; i < items.size(); ++i) {
      const auto field = indexed(join(path, key), i);
      const auto text = scalar(items[i], field);
      const auto value = small_number(text, 3);
      if (!value || *value < 10) {
        fail(items[i], field, "expected an SM number like 120 (for sm_120), got \"" + text + "\"");
      }
      if (std::find(values.begin(), values.end(), *value) != values.end()) {
        fail(items[i], field, "duplicate: " + text + " is already listed");
      }
      values.push_back(*value);
    }
    std::sort(values.begin(), values.end());
    return values;
  }

  Provenance provenance(const YAML::Node& entry, const std::string& path) const {
    Provenance p;
    // One source, or a list of them when an entry combines facts from several.
    const auto source = required(entry, "source", path);
    if (source.IsSequence()) {
      for (const auto& part : string_list(entry, "source", path, true))
        p.source += (p.source.empty() ? "" : "; ") + part;
    } else {
      p.source = scalar(source, join(path, "source"));
    }
    const auto confidence = optional_string(entry, "confidence", path);
    if (confidence == "inferred") {
      p.confidence = Confidence::inferred;
    } else if (!confidence.empty() && confidence != "quoted") {
      fail(entry["confidence"], join(path, "confidence"),
           "expected \"quoted\" or \"inferred\", got \"" + confidence + "\"");
    }
    p.basis = optional_string(entry, "basis", path);
    if (p.confidence == Confidence::inferred && p.basis.empty()) {
      fail(entry, join(path, "basis"),
           "missing: an inferred entry must say what it was inferred from");
    }
    p.file = name();
    p.line = entry.Mark().line + 1;
    return p;
  }

 private:
  static std::string describe(const YAML::Node& node) {
    switch (node.Type()) {
      case YAML::NodeType::Map:
        return "a mapping";
      case YAML::NodeType::Sequence:
        return "a list";
      case YAML::NodeType::Scalar:
        return "\"" + node.Scalar() + "\"";
      case YAML::NodeType::Null:
        return "nothing";
      default:
        return "no value";
    }
  }

  std::filesystem::path path_;
  YAML::Node root_;
};

}  // namespace archfit::kb
