#pragma once
// What the OS's loader does beyond what Boost.DLL offers: keeping a library
// loaded for good, finding which file a library already in this process came
// from, and the loader's own words for why a library will not load. POSIX:
// dlopen with RTLD_NOLOAD/RTLD_NODELETE, dlinfo, dlerror; Windows:
// GetModuleHandleExW with GET_MODULE_HANDLE_EX_FLAG_PIN, GetModuleFileNameW,
// LoadLibraryExW and FormatMessageW.
#include <filesystem>
#include <string>

namespace archfit::sys {

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
