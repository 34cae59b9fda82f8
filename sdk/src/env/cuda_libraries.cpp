#include "cuda_libraries.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include <nlohmann/json.hpp>

#include "sys/file_status.hpp"
#include "sys/library_loading.hpp"
#include "sys/read_file.hpp"
#include "sys/trust.hpp"
#include "sys/utf8_path.hpp"

namespace archfit::env {

namespace fs = std::filesystem;

namespace {

struct LibraryKind {
  const char* name;
  const char* toolkit_key;  // its component in a toolkit's version.json; null if none
};
constexpr LibraryKind kLibraries[] = {{"cudart", "cuda_cudart"},
                                      {"nvrtc", "cuda_nvrtc"},
                                      {"cublas", "libcublas"},
                                      {"cublasLt", "libcublas"},
                                      {"cudnn", nullptr}};  // not part of the toolkit

// A toolkit's version.json is a few KB; anything far larger is not one.
constexpr std::uintmax_t kMaxVersionJsonBytes = 1u << 20;

struct Place {
  fs::path dir;
  std::string origin;
};

bool folder_exists(const fs::path& path) {
  std::error_code error;
  return fs::is_directory(path, error);
}

std::vector<Place> places(const CudaLibrarySearch& search) {
  std::vector<Place> out;
  for (const auto& site : search.site_packages) {
    std::error_code error;
    // nvidia-cuda-runtime-cu12 & co. install nvidia/<part>/lib (Linux) or
    // nvidia/<part>/bin (Windows); the CUDA 13 wheels put everything in
    // nvidia/cu13/lib, or nvidia/cu13/bin/x86_64.
    std::vector<fs::path> parts;
    for (fs::directory_iterator it(site / "nvidia", error), end; !error && it != end;
         it.increment(error)) {
      if (folder_exists(it->path())) parts.push_back(it->path());
    }
    std::sort(parts.begin(), parts.end());
    for (const auto& part : parts) {
      const std::string origin = "wheel nvidia/" + sys::utf8_of(part.filename());
      for (const fs::path& folder : {part / "lib", part / "bin", part / "bin" / "x86_64"}) {
        if (folder_exists(folder)) out.push_back({folder, origin});
      }
    }
    // Windows torch carries its own NVRTC and cudart beside torch_cuda.dll.
    if (folder_exists(site / "torch" / "lib"))
      out.push_back({site / "torch" / "lib", "wheel torch"});
  }
  for (const auto& dir : search.ld_library_path) out.push_back({dir, sys::kLibraryPathVariable});
  const auto toolkit = [&](const fs::path& root, const std::string& origin) {
    // lib64 and lib on Linux; bin (CUDA 12) and bin\x64 (CUDA 13) on Windows.
    for (const fs::path& folder :
         {root / "lib64", root / "lib", root / "bin", root / "bin" / "x64"})
      out.push_back({folder, origin});
  };
  if (!search.cuda_home.empty()) toolkit(search.cuda_home, search.cuda_home_variable);
  if (!search.default_toolkit.empty())
    toolkit(search.default_toolkit, sys::utf8_of(search.default_toolkit));
  for (const auto& dir : search.loader_dirs) out.push_back({dir, "loader path"});
  return out;
}

std::string major_of(const std::string& version) { return version.substr(0, version.find('.')); }

bool all_digits(std::string_view text) {
  return !text.empty() &&
         std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// The precise versions of library copies, from the files around them; each
// site-packages and version.json is read once.
class VersionReader {
 public:
  explicit VersionReader(const std::vector<SitePackages>& known) : known_(known) {}

  // The version of the distribution that installed `file`, when `dir` is
  // <site-packages>/nvidia/<part>/lib.
  std::optional<std::string> from_dist_info(const fs::path& dir, const fs::path& file) {
    const auto wheel = wheel_library_dir(dir);
    if (!wheel) return std::nullopt;
    const auto* owner = site(wheel->site).owner_of(file);
    if (!owner || owner->version.empty()) return std::nullopt;
    return owner->version;
  }

  // `key`'s version in the version.json of the toolkit `dir` belongs to.
  std::optional<std::string> from_version_json(const fs::path& dir, const char* key) {
    if (!key) return std::nullopt;
    const auto* json = toolkit(dir);
    if (!json) return std::nullopt;
    const auto component = json->find(key);
    if (component == json->end() || !component->is_object()) return std::nullopt;
    const auto version = component->find("version");
    if (version == component->end() || !version->is_string()) return std::nullopt;
    auto text = version->get<std::string>();
    if (text.empty()) return std::nullopt;
    return text;
  }

 private:
  const SitePackages& site(const fs::path& root) {
    for (const auto& known : known_) {
      if (known.root.lexically_normal() == root) return known;
    }
    auto it = read_.find(root);
    if (it == read_.end()) it = read_.emplace(root, read_site_packages(root)).first;
    return it->second;
  }

  // <toolkit>/lib64, <toolkit>/lib, <toolkit>/targets/<triple>/lib,
  // <toolkit>\bin and <toolkit>\bin\x64, as written and with links resolved
  // (/usr/local/cuda -> cuda-13.0).
  static std::vector<fs::path> toolkit_roots(const fs::path& dir) {
    std::vector<fs::path> spellings{dir.lexically_normal()};
    std::error_code error;
    if (auto real = fs::canonical(dir, error); !error) spellings.push_back(real);
    std::vector<fs::path> roots;
    for (auto spelling : spellings) {
      if (!spelling.has_filename()) spelling = spelling.parent_path();  // "lib64/"
      const fs::path parent = spelling.parent_path();
      roots.push_back(parent);
      if (spelling.filename() == "x64" && parent.filename() == "bin")
        roots.push_back(parent.parent_path());
      if (parent.parent_path().filename() == "targets")
        roots.push_back(parent.parent_path().parent_path());
    }
    return roots;
  }

  const nlohmann::json* toolkit(const fs::path& dir) {
    for (const auto& root : toolkit_roots(dir)) {
      const fs::path file = root / "version.json";
      auto it = toolkits_.find(file);
      if (it == toolkits_.end()) it = toolkits_.emplace(file, read_version_json(file)).first;
      if (it->second) return &*it->second;
    }
    return nullptr;
  }

  static std::optional<nlohmann::json> read_version_json(const fs::path& file) {
    std::error_code error;
    if (!fs::is_regular_file(file, error)) return std::nullopt;
    const auto text = sys::read_file(file, nullptr, kMaxVersionJsonBytes);
    if (!text) return std::nullopt;
    auto json = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
    if (!json.is_object()) return std::nullopt;  // unreadable or malformed: the file name tells
    return json;
  }

  const std::vector<SitePackages>& known_;
  std::map<fs::path, SitePackages> read_;
  std::map<fs::path, std::optional<nlohmann::json>> toolkits_;  // version.json path -> content
};

// The version of one copy and where it came from: its wheel's dist-info, its
// toolkit's version.json, else its file name. A precise version whose major
// differs from the file name's belongs to another copy (a stale
// libcudart.so.12 left in a CUDA 13 toolkit) and is not used.
void set_version(CudaLibrary& library, const LibraryKind& kind, const fs::path& dir,
                 VersionReader& reader) {
  const auto fits = [&](const std::optional<std::string>& version) {
    return version && (library.version.empty() || major_of(*version) == major_of(library.version));
  };
  if (const auto version = reader.from_dist_info(dir, library.path); fits(version)) {
    library.version = *version;
    library.version_source = "dist-info";
  } else if (const auto toolkit = reader.from_version_json(dir, kind.toolkit_key); fits(toolkit)) {
    library.version = *toolkit;
    library.version_source = "version.json";
  } else if (!library.version.empty()) {
    library.version_source = "file name";
  }
}

}  // namespace

std::optional<WheelLibraryDir> wheel_library_dir(const fs::path& dir) {
  fs::path folder = dir.lexically_normal();
  if (!folder.has_filename()) folder = folder.parent_path();  // "lib/"
  fs::path part;
  if (folder.filename() == "lib" || folder.filename() == "bin") {
    part = folder.parent_path();
  } else if (folder.filename() == "x86_64" && folder.parent_path().filename() == "bin") {
    part = folder.parent_path().parent_path();
  } else {
    return std::nullopt;
  }
  if (part.parent_path().filename() != "nvidia") return std::nullopt;
  return WheelLibraryDir{part.parent_path().parent_path(), part};
}

// Plain string tests, not std::regex: this runs on every name in the
// loader's directories, thousands of them.
std::optional<std::string> library_file_version(std::string_view filename, std::string_view name) {
  // Linux: lib<name>.so[.<version>]
  if (filename.starts_with("lib") && filename.substr(3, name.size()) == name) {
    std::string_view rest = filename.substr(3 + name.size());
    if (rest == ".so") return std::string();
    if (!rest.starts_with(".so.")) return std::nullopt;
    rest.remove_prefix(4);
    if (rest.empty() || rest[0] < '0' || rest[0] > '9') return std::nullopt;
    for (const char c : rest) {
      if ((c < '0' || c > '9') && c != '.') return std::nullopt;
    }
    return std::string(rest);
  }
  // Windows: <name>64_<digits>[_<digits>].dll
  if (!filename.starts_with(name) || !filename.substr(name.size()).starts_with("64_") ||
      !filename.ends_with(".dll"))
    return std::nullopt;
  std::string_view digits = filename.substr(name.size() + 3);
  digits.remove_suffix(4);
  if (const size_t underscore = digits.find('_'); underscore != std::string_view::npos) {
    if (!all_digits(digits.substr(underscore + 1))) return std::nullopt;  // "120_0.alt"
    digits = digits.substr(0, underscore);
  }
  if (!all_digits(digits) || digits.size() > 3) return std::nullopt;
  // "120" is 12.0, "110" is 11.0: the last of three digits is a minor.
  return std::string(digits.size() == 3 ? digits.substr(0, 2) : digits);
}

std::vector<fs::path> site_packages_of_loaded_torch() {
  for (const char* name : {"libc10.so", "c10.dll"}) {
    const fs::path file = sys::loaded_library_file(name);
    const fs::path lib = file.parent_path();
    if (!file.empty() && lib.filename() == "lib" && lib.parent_path().filename() == "torch")
      return {lib.parent_path().parent_path()};
  }
  return {};
}

CudaLibrarySearch default_cuda_library_search(const std::vector<fs::path>& site_packages) {
  CudaLibrarySearch search;
  search.site_packages = site_packages;
  // CUDA_HOME names where NVRTC is loaded from: ignored when setuid
  // (sys/trust.hpp), as the loader ignores LD_LIBRARY_PATH.
  if (const char* home = sys::trusted_path_variable("CUDA_HOME")) {
    search.cuda_home = sys::path_of_utf8(home);
  } else if (const char* path = sys::trusted_path_variable("CUDA_PATH")) {
    search.cuda_home = sys::path_of_utf8(path);
    search.cuda_home_variable = "CUDA_PATH";  // what a Windows CUDA installer sets
  }
  auto loader = sys::loader_search();
  search.ld_library_path = std::move(loader.variable_dirs);
  search.loader_dirs = std::move(loader.system_dirs);
  search.default_toolkit = sys::kDefaultCudaToolkit;
  return search;
}

std::vector<fs::path> searched_directories(const CudaLibrarySearch& search) {
  std::vector<fs::path> dirs;
  for (const auto& site : search.site_packages) {
    dirs.push_back(site);  // its dist-info: the versions
    dirs.push_back(site / "nvidia");
  }
  for (const auto& toolkit : {search.cuda_home, search.default_toolkit}) {
    if (!toolkit.empty()) dirs.push_back(toolkit);  // its version.json
  }
  for (auto& place : places(search)) dirs.push_back(std::move(place.dir));
  return dirs;
}

std::vector<CudaLibrary> find_cuda_libraries(const CudaLibrarySearch& search,
                                             const std::vector<SitePackages>& known_sites) {
  std::vector<CudaLibrary> found;
  VersionReader reader(known_sites);
  // Files by device and id: /usr/local/cuda and CUDA_HOME are often one directory.
  std::set<std::pair<uint64_t, uint64_t>> seen;
  // /lib/x86_64-linux-gnu is /usr/lib/x86_64-linux-gnu on a merged-/usr
  // system, and ld.so.conf.d names it again: each directory is listed once.
  std::set<std::pair<uint64_t, uint64_t>> listed;
  for (const Place& place : places(search)) {
    const auto dir_status = sys::file_status(place.dir, sys::Links::follow);
    if (!dir_status || dir_status->type != sys::FileType::directory ||
        !listed.insert({dir_status->stamp.device, dir_status->stamp.inode}).second)
      continue;
    std::error_code error;
    // Only names that can be one of the libraries are kept (and sorted): the
    // loader's directories hold thousands of others.
    std::vector<fs::path> files;
    for (fs::directory_iterator it(place.dir, error), end; !error && it != end;
         it.increment(error)) {
      const std::string filename = sys::utf8_of(it->path().filename());
      const bool candidate =
          std::any_of(std::begin(kLibraries), std::end(kLibraries), [&](const LibraryKind& kind) {
            return library_file_version(filename, kind.name).has_value();
          });
      if (candidate) files.push_back(it->path());
    }
    std::sort(files.begin(), files.end());
    for (const LibraryKind& kind : kLibraries) {
      const std::string name = kind.name;
      // One entry per real file; of its names (libcudart.so -> .so.12 ->
      // .so.12.8.90) the longest version says the most.
      std::map<std::pair<uint64_t, uint64_t>, CudaLibrary> files_here;
      for (const auto& file : files) {
        const std::string filename = sys::utf8_of(file.filename());
        const auto version = library_file_version(filename, kind.name);
        if (!version) continue;
        const auto status = sys::file_status(file, sys::Links::follow);
        if (!status || status->type != sys::FileType::file) continue;
        auto [it, inserted] =
            files_here.try_emplace({status->stamp.device, status->stamp.inode},
                                   CudaLibrary{name, *version, "", file, place.origin});
        if (!inserted && version->size() > it->second.version.size())
          it->second = {name, *version, "", file, place.origin};
      }
      for (auto& [id, library] : files_here) {
        if (!seen.insert(id).second) continue;
        set_version(library, kind, place.dir, reader);
        found.push_back(std::move(library));
      }
    }
  }
  return found;
}

}  // namespace archfit::env
