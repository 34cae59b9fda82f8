#pragma once
// Which component a traceback's frames point at: a distribution under
// site-packages (or dist-packages), or a ComfyUI node pack under
// custom_nodes/. Paths from Linux and Windows alike.
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "error_text.hpp"

namespace archfit::kb {
class KnowledgeBase;
}

namespace archfit::diagnose {

struct Culprit {
  Culprit() = default;
  Culprit(std::string name, std::string kind, std::string path = {}, std::string why = {})
      : name(std::move(name)), kind(std::move(kind)), path(std::move(path)), why(std::move(why)) {}

  std::string name;  // "xformers", "flash-attn", "ComfyUI-KJNodes"
  std::string kind;  // "distribution" | "custom_node"
  std::string path;  // the frame's file
  std::string why;   // a sentence: which frame, and why that one
  // The installed version: from the environment's check, else from the
  // dist-info beside the frame's file when that exists here; "" when unknown.
  std::string version;
};

// The frame's component, when its path names one.
std::optional<Culprit> component_of(const Frame& frame, const kb::KnowledgeBase* kb);

// The component behind an error raised through `frames` (outermost first):
// the innermost frame in a package or node pack other than PyTorch and the
// host (InvokeAI; ComfyUI's own files name none), since PyTorch is where
// everyone's CUDA calls end up; else PyTorch's innermost frame.
std::optional<Culprit> attribute(const std::vector<Frame>& frames, const kb::KnowledgeBase* kb);

// The version of a distribution culprit as its *.dist-info directory in the
// frame's site-packages names it, when that directory exists on this machine
// (the error handler runs where the error happened); "" otherwise.
std::string installed_version(const Culprit& culprit);

// Whether two component names are the same as pip compares distribution
// names: case, and runs of "-", "_" and "." alike ("flash_attn" is
// "flash-attn"). Node pack folders are compared the same way.
bool same_component(std::string_view a, std::string_view b);

}  // namespace archfit::diagnose
