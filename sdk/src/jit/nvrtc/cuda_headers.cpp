#include "cuda_headers.hpp"

#include <algorithm>

#include "env/cuda_libraries.hpp"

namespace archfit::jit {

namespace fs = std::filesystem;

namespace {

bool present(const fs::path& path) {
  std::error_code error;
  return fs::exists(path, error);
}

}  // namespace

std::vector<fs::path> cuda_include_dirs(const fs::path& library) {
  std::vector<fs::path> dirs;
  std::vector<fs::path> physical;  // one directory reached by two spellings counts once
  const auto add = [&](const fs::path& dir) {
    std::error_code error;
    fs::path real = fs::canonical(dir, error);
    if (error) real = dir;
    if (std::find(physical.begin(), physical.end(), real) != physical.end()) return;
    physical.push_back(real);
    dirs.push_back(dir);
  };
  // Paths are normalised before they are tested: "lib64/.." lexically is not
  // "lib64/.." on disk when lib64 is a link.
  const auto add_headers = [&](const fs::path& dir) {
    const fs::path include = dir.lexically_normal();
    if (!present(include / "cuda_fp16.h")) return false;
    add(include);
    if (present(include / "cccl" / "nv" / "target")) add(include / "cccl");
    return true;
  };

  std::error_code error;
  std::vector<fs::path> lib_dirs{fs::absolute(library, error).parent_path()};
  if (auto real = fs::canonical(library, error); !error && real.parent_path() != lib_dirs.front())
    lib_dirs.push_back(real.parent_path());

  for (const auto& dir : lib_dirs) {
    if (const auto wheel = env::wheel_library_dir(dir)) {
      const fs::path& site = wheel->site;
      add_headers(wheel->part / "include");  // nvidia/cu13/include
      add_headers(site / "nvidia" / "cuda_runtime" / "include");
      if (present(site / "nvidia" / "cuda_cccl" / "include" / "nv" / "target"))  // cu12 CCCL
        add((site / "nvidia" / "cuda_cccl" / "include").lexically_normal());
      continue;
    }
    // <root>/lib64, <root>\bin or <root>/targets/<triple>/lib: ../include;
    // /usr/lib/<triple> or <root>\bin\x64: ../../include.
    if (!add_headers(dir / ".." / "include")) add_headers(dir / ".." / ".." / "include");
  }
  return dirs;
}

}  // namespace archfit::jit
