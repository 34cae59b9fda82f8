#pragma once
// Judges each planned stack over what it really loads: the binaries its
// roots reach (reach.hpp), less those whose kernels serve one feature only
// (packages.yaml), which become notes. Adds what no image list shows: a
// driver older than the stack's CUDA major needs (minor-version
// compatibility) or older than the first driver that knows the GPU. Also
// weighs every binary of every component by how it is reached, so a
// component's verdict counts only what is loaded.
#include <cstddef>
#include <utility>
#include <vector>

#include "check.hpp"
#include "kb/knowledge_base.hpp"
#include "reach.hpp"
#include "stack_plan.hpp"
#include "sys/library_loading.hpp"

namespace archfit::check {

// Where each scanned file's verdict lives: (component, binary) indices into
// CheckReport::components, or nullopt for a file without device code.
using BinaryIndex = std::vector<std::optional<std::pair<size_t, size_t>>>;

struct StackInputs {
  const std::vector<binary::FileScan>& files;
  const FileOwners& owners;
  const LinkGraph& graph;
  const BinaryIndex& binary_of_file;
  const kb::KnowledgeBase& kb;
  // Where the loader looks beyond the environment (library_needs.hpp).
  const sys::LoaderSearch& loader;
};

// Sets every binary's reach and every component's verdict, and returns the
// stacks that load device code, judged; their fixes are advise's. What
// stops a stack loading at all (a missing library) goes into its verdict,
// and a library found only through LD_LIBRARY_PATH into `report.findings`.
std::vector<StackResult> judge_stacks(const std::vector<StackPlan>& plans,
                                      const StackInputs& inputs, CheckReport& report);

// The CUDA runtime major of a library name: 12 for "libcudart.so.12"; 11 for
// "libcudart.so.11.0"; on Windows, where the DLL carries the major and, up
// to CUDA 11, the minor: 12 for "cudart64_12.dll", 11 for "cudart64_110.dll",
// in any case; nullopt for any other name.
std::optional<uint32_t> cudart_major(std::string_view file_name);

}  // namespace archfit::check
