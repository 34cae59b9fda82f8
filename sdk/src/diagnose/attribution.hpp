#pragma once
// Which component a traceback's frames point at: a distribution under
// site-packages (or dist-packages), or a ComfyUI node pack under
// custom_nodes/. Paths from Linux and Windows alike.
#include <optional>
#include <string>
#include <vector>

#include "error_text.hpp"

namespace archfit::kb {
class KnowledgeBase;
}

namespace archfit::diagnose {

struct Culprit {
  std::string name;  // "xformers", "flash-attn", "ComfyUI-KJNodes"
  std::string kind;  // "distribution" | "custom_node"
  std::string path;  // the frame's file
  std::string why;   // a sentence: which frame, and why that one
};

// The frame's component, when its path names one.
std::optional<Culprit> component_of(const Frame& frame, const kb::KnowledgeBase* kb);

// The component behind an error raised through `frames` (outermost first):
// the innermost frame in a package or node pack other than PyTorch and the
// host (InvokeAI; ComfyUI's own files name none), since PyTorch is where
// everyone's CUDA calls end up; else PyTorch's innermost frame.
std::optional<Culprit> attribute(const std::vector<Frame>& frames, const kb::KnowledgeBase* kb);

}  // namespace archfit::diagnose
