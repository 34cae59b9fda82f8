#pragma once
// Where the CUDA headers NVRTC does not build in (cuda_fp16.h, cuda_bf16.h,
// cuda_runtime.h …) sit for a given libnvrtc: the toolkit or the wheels it
// came from, never another CUDA's.
#include <filesystem>
#include <vector>

namespace archfit::jit {

// -I directories for the NVRTC at `library`, in the order to pass them, one
// directory once however many spellings reach it. A toolkit: <dir>/../include
// of the library's directory (<root>/lib64 → <root>/include,
// <root>/targets/<triple>/lib → its include), else <dir>/../../include
// (/usr/lib/<triple> → /usr/include), for the directory as found and with
// links resolved, each with its cccl/ subdirectory (CUDA 13 moved CCCL there). A wheel
// (site-packages/nvidia/<part>/lib): its own include (nvidia/cu13/include holds every CUDA 13
// wheel's headers), then the CUDA 12 wheels' nvidia/cuda_runtime/include (nvidia-cuda-runtime-cu12)
// and nvidia/cuda_cccl/include. The nvidia-cuda-nvrtc wheels ship only
// nvrtc.h. A directory is used only when it holds cuda_fp16.h (or, for
// CCCL, nv/target); none at all is possible and not an error.
std::vector<std::filesystem::path> cuda_include_dirs(const std::filesystem::path& library);

}  // namespace archfit::jit
