#include "attribution.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <set>

#include "env/python_env.hpp"
#include "env/requirement.hpp"
#include "kb/knowledge_base.hpp"
#include "sys/utf8_path.hpp"

namespace archfit::diagnose {

namespace {

// "C:\\x\\Lib\\site-packages\\torch\\nn" → "C:/x/Lib/site-packages/torch/nn".
std::string forward_slashes(std::string path) {
  std::replace(path.begin(), path.end(), '\\', '/');
  return path;
}

// The path component after `marker` ("/site-packages/"), case-insensitively
// (Windows writes Lib\site-packages); "" when there is none.
std::string after(const std::string& path, std::string_view marker) {
  std::string lower = path;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const size_t at = lower.rfind(marker);
  if (at == std::string::npos) return {};
  const size_t begin = at + marker.size();
  const size_t end = path.find('/', begin);
  if (end == std::string::npos) return {};  // a module file directly in site-packages
  return path.substr(begin, end - begin);
}

// The distribution a top-level package belongs to: the knowledge base's name
// for it ("flash_attn" → "flash-attn"), else the package name as pip spells
// distributions (lower case, "_" → "-").
std::string distribution_of(std::string package, const kb::KnowledgeBase* kb) {
  if (kb) {
    if (const auto* component = kb->component_for(package)) return component->name;
  }
  std::transform(package.begin(), package.end(), package.begin(), [](unsigned char c) {
    return c == '_' ? '-' : static_cast<char>(std::tolower(c));
  });
  if (kb) {
    if (const auto* component = kb->component_for(package)) return component->name;
  }
  return package;
}

// "/home/u/src/SageAttention/setup.py" → "SageAttention".
std::string fs_parent_name(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos || slash == 0) return {};
  const size_t before = path.rfind('/', slash - 1);
  return path.substr(before == std::string::npos ? 0 : before + 1,
                     slash - (before == std::string::npos ? 0 : before + 1));
}

}  // namespace

std::optional<Culprit> component_of(const Frame& frame, const kb::KnowledgeBase* kb) {
  const std::string path = forward_slashes(frame.file);
  if (const std::string pack = after(path, "/custom_nodes/"); !pack.empty())
    return Culprit(pack, "custom_node", frame.file);
  for (const std::string_view marker : {"/site-packages/", "/dist-packages/"}) {
    if (const std::string package = after(path, marker); !package.empty())
      return Culprit(distribution_of(package, kb), "distribution", frame.file);
  }
  // A source build (pip install of a checkout): the project's setup.py.
  if (path.ends_with("/setup.py")) {
    const std::string project = fs_parent_name(path);
    if (!project.empty()) return Culprit(distribution_of(project, kb), "distribution", frame.file);
  }
  return std::nullopt;
}

std::optional<Culprit> attribute(const std::vector<Frame>& frames, const kb::KnowledgeBase* kb) {
  std::optional<Culprit> torch;
  for (auto frame = frames.rbegin(); frame != frames.rend(); ++frame) {
    auto culprit = component_of(*frame, kb);
    // Hosts (packages.yaml `hosts`) call every component; an error passing
    // through them says nothing about which failed. (ComfyUI itself is not a
    // package: its files name no component.)
    if (!culprit || (kb && kb->packages().is_host(culprit->name))) continue;
    const std::string where = culprit->path + ", line " + std::to_string(frame->line) +
                              (frame->function.empty() ? "" : ", in " + frame->function);
    // Packages that only pass calls on (packages.yaml `pass_through`): an
    // error raised through them comes from what they called.
    if (kb && kb->packages().passes_through(culprit->name)) {
      if (!torch && culprit->name == "torch") {
        culprit->why = "the innermost frame outside the host is PyTorch's: " + where;
        torch = std::move(culprit);
      }
      continue;
    }
    culprit->why = std::string("the innermost frame in ") +
                   (culprit->kind == "custom_node" ? "a node pack" : "a package") +
                   " other than PyTorch and the host: " + where;
    return culprit;
  }
  return torch;
}

bool same_component(std::string_view a, std::string_view b) {
  return env::normalize_distribution_name(a) == env::normalize_distribution_name(b);
}

std::string installed_version(const Culprit& culprit) {
  if (culprit.kind != "distribution" || culprit.path.empty()) return {};
  const std::string path = forward_slashes(culprit.path);
  for (const std::string_view marker : {"/site-packages/", "/dist-packages/"}) {
    const size_t at = path.rfind(marker);
    if (at == std::string::npos) continue;
    return env::installed_version(sys::path_of_utf8(path.substr(0, at + marker.size())),
                                  culprit.name);
  }
  return {};
}

}  // namespace archfit::diagnose
