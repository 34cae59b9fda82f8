#pragma once
// An archfit_module_desc (archfit.h) — from a C ABI caller or a plugin —
// copied into a KernelModuleSpec: every string and byte the desc points to
// is copied, so nothing of the caller's (or the plugin's) is kept.
#include <stdexcept>

#include "archfit/archfit.h"
#include "kernel_module.hpp"

namespace archfit::jit {

// A field that is not what archfit_module_desc allows; the message names it.
class ModuleDescError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// `desc` has its struct_size checked by the caller (the C ABI's
// read_options, or the plugin host).
KernelModuleSpec spec_from_desc(const archfit_module_desc& desc);

}  // namespace archfit::jit
