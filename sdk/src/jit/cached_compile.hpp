#pragma once
// NVRTC through the kernel cache: the key is everything that changes the
// output (docs/design.md, decision 6), the compile runs only on a miss, and of many
// threads or processes asking for the same key one compiles.
#include <filesystem>
#include <functional>
#include <string>

#include "jit/cache/kernel_cache.hpp"
#include "jit/nvrtc/nvrtc.hpp"
#include "jit/nvrtc/nvrtc_facts.hpp"

namespace archfit::jit {

struct CachedCompile {
  KernelImage image;  // the CUBIN, or the PTX with its NUL
  // Each name expression with its mangled name, kept in the cache entry with
  // the image so that a hit needs no compile to find the kernels.
  std::vector<std::pair<std::string, std::string>> lowered_names;
  ImageFormat format = ImageFormat::cubin;
  std::string key;
  CacheSource source = CacheSource::built;  // built: compiled by this call
  double milliseconds = 0;                  // the whole call, the compile included
};

// The key of `request` for this NVRTC. Headers NVRTC would read from the
// request's -I directories are hashed too (every file under them, up to a
// limit), so an edited header there never meets a stale image; the CUDA
// headers NVRTC brings are covered by its version and build.
std::string compile_key(const NvrtcFacts& nvrtc, const CompileRequest& request);
std::string compile_key(const Nvrtc& nvrtc, const CompileRequest& request);

// Throws what Nvrtc::compile throws on a miss that fails to compile.
CachedCompile compile_cached(const Nvrtc& nvrtc, KernelCache& cache, const CompileRequest& request);

// The same through a LazyNvrtc: the key comes from its facts, so a hit loads
// no NVRTC; a miss loads it and compiles. Throws StaleNvrtcFacts when the
// facts turn out stale (nothing is cached then): plan the target from the
// new facts and call again.
CachedCompile compile_cached(LazyNvrtc& nvrtc, KernelCache& cache, const CompileRequest& request);

// What callers of the LazyNvrtc path use: `prepare` completes the request
// from NVRTC's facts (the target, chiefly; it may throw, e.g. NoTargetError),
// then the compile goes through the cache as above. When the facts turn out
// stale, `prepare` runs again with the loaded NVRTC's facts and the compile
// is retried once.
using PrepareRequest = std::function<void(const NvrtcFacts&, CompileRequest&)>;
CachedCompile compile_cached(LazyNvrtc& nvrtc, KernelCache& cache, CompileRequest request,
                             const PrepareRequest& prepare);

// Writes the image as a file for people and tools (`jit compile -o`, the
// files `jit bundle` hands fatbinary): a CUBIN as it is, PTX without the NUL
// kept for cuModuleLoadData, since a .ptx file is text. Throws
// std::runtime_error naming the file when it cannot be written.
void write_image_file(const CachedCompile& compiled, const std::filesystem::path& file);

}  // namespace archfit::jit
