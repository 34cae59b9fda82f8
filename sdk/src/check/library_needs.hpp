#pragma once
// Whether a stack's binaries load at all, before any image is looked at
// (issue 36): every library they link by a name a package installs
// (packages.yaml `provided_libraries`: libcudart.so.12, cudart64_13.dll)
// must be in the environment, where the link graph looks for it, or in the
// loader's own folders (ld.so.conf's and the system's). One that is in
// neither fails the stack (missing-library): importing it stops with
// "libcudart.so.12: cannot open shared object file". One found only through
// LD_LIBRARY_PATH is said, since a process started without it (ComfyUI from
// its launcher) does not find it. A Windows DLL is looked for in the
// environment only: Python 3.8 and later search no PATH for an extension's
// DLLs, and System32 holds no CUDA library.
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "kb/packages.hpp"
#include "reach.hpp"
#include "report.hpp"
#include "sys/library_loading.hpp"

namespace archfit::check {

struct LibraryNeeds {
  std::vector<MissingLibrary> missing;  // one per library name, with the first binary that links it
  std::vector<std::string> findings;    // libraries found only through LD_LIBRARY_PATH
};

// Over the files of `files_to_check` (indices into the graph's files, the
// stack's own and its suppliers'): their DT_NEEDED names or DLL imports the
// graph did not find in the environment. `shown` names a file as the report
// shows it ("xformers/_C.so").
LibraryNeeds library_needs(const std::vector<size_t>& files_to_check, const LinkGraph& graph,
                           const kb::Packages& packages, const sys::LoaderSearch& loader,
                           const std::function<std::string(size_t)>& shown);

}  // namespace archfit::check
