#pragma once
// The exact fix for what will not run: which build to install (the PyTorch
// stack's, torch_fix.hpp), which driver to update to, which release of a
// package runs on the GPU, or how to rebuild a package that has a source to
// build. Never a source build for a binary-only package (packages.yaml).
#include <optional>

#include "check.hpp"
#include "kb/knowledge_base.hpp"
#include "torch_fix.hpp"

namespace archfit::check {

struct AdviseContext {
  const CheckReport& report;
  const kb::KnowledgeBase& kb;
  std::optional<compat::DriverVersion> driver;
  InstalledTorchStack torch;  // the PyTorch stack the environment holds
};

// The fix for a stack whose verdict fails; empty when it runs.
Fix advise_stack(const StackResult& stack, const AdviseContext& context);

// The fix for one component whose own verdict fails, for its line in the
// report: a member of a failing stack gets the stack's fix; empty when it runs.
Fix advise_component(const ComponentResult& component, const AdviseContext& context,
                     const std::vector<StackResult>& stacks);

}  // namespace archfit::check
