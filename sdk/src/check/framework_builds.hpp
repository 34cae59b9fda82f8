#pragma once
// A framework whose own build leaves the GPU unused (issue 33): a torch
// built without CUDA (torch/version.py says `cuda = None`: PyPI's torch for
// Windows is always such a build, and the PyTorch index's +cpu builds are
// for Linux too), or a CPU-only twin (packages.yaml `cpu_twins`: onnxruntime)
// installed over its CUDA distribution, or instead of it where a package
// requires that. Its binaries carry no device code, so no image list shows
// it; on an NVIDIA machine it is a failure of its own, no-cuda-build.
#include <vector>

#include "check.hpp"
#include "env/python_env.hpp"
#include "env/wheel.hpp"
#include "kb/knowledge_base.hpp"

namespace archfit::check {

// For each torch without CUDA among the sites and the --wheels, with a GPU to
// judge against: its PyTorch stack (added when it loads no device code,
// which such a build never does) fails as no-cuda-build on every device.
// Nothing changes without a device: the check stays unknown.
// Likewise each CPU twin that displaced its CUDA distribution. Both twins
// installed with the CUDA one's module on disk is a finding, not a failure:
// CUDA works until the CPU one is reinstalled or removed alone.
void judge_framework_builds(const std::vector<env::SitePackages>& sites,
                            const std::vector<env::Wheel>& wheels, const kb::KnowledgeBase& kb,
                            CheckReport& report);

}  // namespace archfit::check
