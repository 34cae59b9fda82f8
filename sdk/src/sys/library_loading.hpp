#pragma once
// What the OS's loader does beyond what Boost.DLL offers: keeping a library
// loaded for good, finding which file a library already in this process came
// from, and the loader's own words for why a library will not load. POSIX:
// dlopen with RTLD_NOLOAD/RTLD_NODELETE, dlinfo, dlerror; Windows:
// GetModuleHandleExW with GET_MODULE_HANDLE_EX_FLAG_PIN, GetModuleFileNameW,
// LoadLibraryExW and FormatMessageW.
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace archfit::sys {

// The variable whose folders the loader searches for a library named
// without a folder: LD_LIBRARY_PATH on POSIX; PATH on Windows, where
// LoadLibrary's standard search order ends with it.
#ifdef _WIN32
inline constexpr const char* kLibraryPathVariable = "PATH";
#else
inline constexpr const char* kLibraryPathVariable = "LD_LIBRARY_PATH";
#endif

// Where a CUDA toolkit sits when nothing names one: /usr/local/cuda; none on
// Windows, whose CUDA installer always sets CUDA_PATH.
#ifdef _WIN32
inline constexpr const char* kDefaultCudaToolkit = "";
#else
inline constexpr const char* kDefaultCudaToolkit = "/usr/local/cuda";
#endif

// Where this OS's loader looks for a library named without a folder, after
// the folders the loading program itself names.
struct LoaderSearch {
  // kLibraryPathVariable's folders, in its order; none in a setuid process,
  // whose loader ignores them.
  std::vector<std::filesystem::path> variable_dirs;
  // POSIX: the folders of /etc/ld.so.conf.d, then the system's defaults.
  // Windows: none that hold CUDA libraries (System32 holds the driver's
  // nvcuda.dll only).
  std::vector<std::filesystem::path> system_dirs;
};
LoaderSearch loader_search();

// Whether this OS loads a file of this name as a shared library:
// "libnvrtc.so.13" on POSIX, "nvrtc64_130_0.dll" on Windows. A listing of a
// Windows folder read from Linux holds libraries this process cannot load.
bool is_library_name_of_this_os(std::string_view filename);

// Keeps `location`, a library this process has loaded, loaded until it
// exits: a later unload (a Boost.DLL shared_library going out of scope) is
// harmless. The driver runs threads inside libcuda after cuInit, and a host
// (PyTorch) may share NVRTC, so neither may ever be unloaded.
void keep_loaded(const std::filesystem::path& location);

// The file from which a library of this name ("libnvrtc-builtins.so.12.8",
// "nvrtc-builtins64_128.dll") is loaded in this process; empty when none is.
std::filesystem::path loaded_library_file(const std::string& name);

// Why the loader refuses `library`, in its own words ("invalid ELF header",
// "libfoo.so: cannot open shared object file"): Boost.DLL keeps only an
// error code. `fallback` when it loads after all.
std::string load_failure_message(const std::filesystem::path& library, const std::string& fallback);

}  // namespace archfit::sys
