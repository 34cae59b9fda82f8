#include "cuda_libraries.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

namespace archfit::env {

namespace fs = std::filesystem;

namespace {

constexpr const char* kLibraries[] = {"cudart", "nvrtc", "cublas", "cublasLt", "cudnn"};

std::vector<fs::path> split_path_list(const char* value) {
  std::vector<fs::path> dirs;
  if (!value) return dirs;
  std::stringstream list(value);
  for (std::string item; std::getline(list, item, ':');) {
    if (!item.empty()) dirs.emplace_back(item);
  }
  return dirs;
}

struct Place {
  fs::path dir;
  std::string origin;
};

std::vector<Place> places(const CudaLibrarySearch& search) {
  std::vector<Place> out;
  for (const auto& site : search.site_packages) {
    std::error_code error;
    // nvidia-cuda-runtime-cu12 & co. install nvidia/<part>/lib; the CUDA 13
    // wheels put everything in nvidia/cu13/lib.
    std::vector<fs::path> parts;
    for (fs::directory_iterator it(site / "nvidia", error), end; !error && it != end;
         it.increment(error)) {
      if (fs::is_directory(it->path() / "lib")) parts.push_back(it->path());
    }
    std::sort(parts.begin(), parts.end());
    for (const auto& part : parts)
      out.push_back({part / "lib", "wheel nvidia/" + part.filename().string()});
  }
  for (const auto& dir : search.ld_library_path) out.push_back({dir, "LD_LIBRARY_PATH"});
  if (!search.cuda_home.empty()) {
    out.push_back({search.cuda_home / "lib64", "CUDA_HOME"});
    out.push_back({search.cuda_home / "lib", "CUDA_HOME"});
  }
  if (!search.default_toolkit.empty())
    out.push_back({search.default_toolkit / "lib64", search.default_toolkit.string()});
  for (const auto& dir : search.loader_dirs) out.push_back({dir, "loader path"});
  return out;
}

}  // namespace

CudaLibrarySearch default_cuda_library_search(const std::vector<fs::path>& site_packages) {
  CudaLibrarySearch search;
  search.site_packages = site_packages;
  search.ld_library_path = split_path_list(std::getenv("LD_LIBRARY_PATH"));
  if (const char* home = std::getenv("CUDA_HOME")) {
    search.cuda_home = home;
  } else if (const char* path = std::getenv("CUDA_PATH")) {
    search.cuda_home = path;
  }
  std::error_code error;
  for (fs::directory_iterator it("/etc/ld.so.conf.d", error), end; !error && it != end;
       it.increment(error)) {
    if (it->path().extension() != ".conf") continue;
    std::ifstream conf(it->path());
    for (std::string line; std::getline(conf, line);) {
      if (line.starts_with("/")) search.loader_dirs.emplace_back(line);
    }
  }
  for (const char* dir : {"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64",
                          "/usr/lib64", "/lib", "/usr/lib"}) {
    search.loader_dirs.emplace_back(dir);
  }
  return search;
}

std::vector<CudaLibrary> find_cuda_libraries(const CudaLibrarySearch& search) {
  std::vector<CudaLibrary> found;
  std::set<std::pair<dev_t, ino_t>> seen;  // /usr/local/cuda and CUDA_HOME are often one directory
  for (const Place& place : places(search)) {
    std::error_code error;
    std::vector<fs::path> files;
    for (fs::directory_iterator it(place.dir, error), end; !error && it != end;
         it.increment(error)) {
      files.push_back(it->path());
    }
    std::sort(files.begin(), files.end());
    for (const char* name : kLibraries) {
      // libcudart.so.13, libcudart.so.12.8.90; not libcudart_static.a, not libnvrtc.alt.so.
      const std::regex pattern("lib" + std::string(name) + R"(\.so(?:\.([0-9][0-9.]*))?)");
      // One entry per real file; of its names (libcudart.so -> .so.12 ->
      // .so.12.8.90) the longest version says the most.
      std::map<std::pair<dev_t, ino_t>, CudaLibrary> files_here;
      for (const auto& file : files) {
        std::smatch match;
        const std::string filename = file.filename().string();
        if (!std::regex_match(filename, match, pattern)) continue;
        struct stat info {};
        if (::stat(file.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) continue;
        const std::string version = match[1].matched ? match[1].str() : std::string();
        auto [it, inserted] = files_here.try_emplace(
            {info.st_dev, info.st_ino}, CudaLibrary{name, version, file, place.origin});
        if (!inserted && version.size() > it->second.version.size())
          it->second = {name, version, file, place.origin};
      }
      for (auto& [id, library] : files_here) {
        if (seen.insert(id).second) found.push_back(std::move(library));
      }
    }
  }
  return found;
}

}  // namespace archfit::env
