#pragma once
// The exact fix for a component that will not run: which build to install,
// which driver to update to, or how to rebuild for the device.
#include "check.hpp"
#include "kb/knowledge_base.hpp"

namespace archfit::check {

// Empty when the verdict needs no change (native, ptx-jit, nothing to run).
// `device` is the one the component fails on; a rebuild targets every one of
// `all_devices`, so the fix for one GPU does not break another.
Fix advise(const ComponentResult& component, const compat::BinaryJudgement& worst,
           const binary::FileScan* worst_scan, const DeviceInfo& device,
           const std::vector<DeviceInfo>& all_devices, const kb::KnowledgeBase& kb);

}  // namespace archfit::check
