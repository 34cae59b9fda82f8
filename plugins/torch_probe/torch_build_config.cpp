#include "torch_build_config.hpp"

#include <algorithm>
#include <cctype>

namespace archfit::torch_probe {
namespace {

std::string_view trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())))
    text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
    text.remove_suffix(1);
  return text;
}

// "  - NVCC architecture flags: X" → "X" when `line` starts with `key`
// after the list marker.
std::optional<std::string_view> after_key(std::string_view line, std::string_view key) {
  line = trim(line);
  if (line.starts_with("- ")) line.remove_prefix(2);
  if (!line.starts_with(key)) return std::nullopt;
  return trim(line.substr(key.size()));
}

// One "KEY=value" of the comma-separated "Build settings" line.
std::optional<std::string> build_setting(std::string_view settings, std::string_view key) {
  size_t at = 0;
  while (at < settings.size()) {
    size_t end = settings.find(',', at);
    if (end == std::string_view::npos) end = settings.size();
    const std::string_view item = trim(settings.substr(at, end - at));
    if (item.size() > key.size() && item.starts_with(key) && item[key.size()] == '=') {
      const std::string_view value = trim(item.substr(key.size() + 1));
      if (!value.empty()) return std::string(value);
    }
    at = end + 1;
  }
  return std::nullopt;
}

bool is_arch_name(std::string_view name) {
  for (const std::string_view prefix : {"sm_", "compute_"}) {
    if (name.starts_with(prefix) && name.size() > prefix.size() &&
        std::isdigit(static_cast<unsigned char>(name[prefix.size()])))
      return std::all_of(name.begin() + prefix.size(), name.end(),
                         [](char c) { return std::isalnum(static_cast<unsigned char>(c)); });
  }
  return false;
}

// "-gencode;arch=compute_80,code=sm_80;-gencode;arch=compute_90,code=[sm_90,compute_90]":
// every target after a `code=`, brackets and all.
void read_arch_flags(std::string_view flags, std::vector<std::string>& archs) {
  size_t at = 0;
  while ((at = flags.find("code=", at)) != std::string_view::npos) {
    at += 5;
    size_t end = flags.find_first_of("; ", at);
    if (end == std::string_view::npos) end = flags.size();
    std::string_view targets = flags.substr(at, end - at);
    if (targets.starts_with('[')) targets.remove_prefix(1);
    if (targets.ends_with(']')) targets.remove_suffix(1);
    size_t from = 0;
    while (from <= targets.size()) {
      size_t comma = targets.find(',', from);
      if (comma == std::string_view::npos) comma = targets.size();
      const std::string name(trim(targets.substr(from, comma - from)));
      if (is_arch_name(name) && std::find(archs.begin(), archs.end(), name) == archs.end())
        archs.push_back(name);
      from = comma + 1;
    }
    at = end;
  }
}

}  // namespace

TorchBuildConfig read_show_config(std::string_view text) {
  TorchBuildConfig config;
  std::optional<std::string> runtime_line;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(at, end - at);
    at = end + 1;
    if (auto flags = after_key(line, "NVCC architecture flags:")) {
      read_arch_flags(*flags, config.cuda_archs);
      config.cuda = true;
    } else if (auto runtime = after_key(line, "CUDA Runtime")) {
      if (!runtime->empty()) runtime_line = std::string(*runtime);
      config.cuda = true;
    } else if (auto settings = after_key(line, "Build settings:")) {
      config.torch_version = build_setting(*settings, "TORCH_VERSION");
      config.cuda_version = build_setting(*settings, "CUDA_VERSION");
      config.cudnn_version = build_setting(*settings, "CUDNN_VERSION");
      const auto use_cuda = build_setting(*settings, "USE_CUDA");
      if (use_cuda && (*use_cuda == "ON" || *use_cuda == "1")) config.cuda = true;
    }
  }
  if (!config.cuda_version && runtime_line) config.cuda_version = runtime_line;
  if (config.cuda_version) config.cuda = true;
  return config;
}

}  // namespace archfit::torch_probe
