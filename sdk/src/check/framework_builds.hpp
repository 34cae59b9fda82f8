#pragma once
// A framework whose own build leaves the GPU unused (issue 33): a torch
// built without CUDA (torch/version.py says `cuda = None`: PyPI's torch for
// Windows is always such a build, and the PyTorch index's +cpu builds are
// for Linux too). Its binaries carry no device code, so no image list shows
// it; on an NVIDIA machine it is a failure of its own, no-cuda-build.
#include <vector>

#include "check.hpp"
#include "env/python_env.hpp"
#include "env/wheel.hpp"

namespace archfit::check {

// For each torch without CUDA among the sites and the --wheels, with a GPU to
// judge against: its PyTorch stack (added when it loads no device code,
// which such a build never does) fails as no-cuda-build on every device.
// Nothing changes without a device: the check stays unknown.
void judge_framework_builds(const std::vector<env::SitePackages>& sites,
                            const std::vector<env::Wheel>& wheels, CheckReport& report);

}  // namespace archfit::check
