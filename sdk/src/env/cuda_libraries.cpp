#include "cuda_libraries.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "sys/file_status.hpp"
#include "sys/read_file.hpp"
#include "sys/trust.hpp"

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

std::string major_of(const std::string& version) { return version.substr(0, version.find('.')); }

// The version in a library's file name: "" for libnvrtc.so, "13.0.88" for
// libnvrtc.so.13.0.88; nothing for libnvrtc_static.a, libnvrtc.alt.so or
// libnvrtc.so.13x. Plain string tests, not std::regex: this runs on every
// name in the loader's directories, thousands of them.
std::optional<std::string> library_version(std::string_view filename, std::string_view name) {
  if (!filename.starts_with("lib") || filename.substr(3, name.size()) != name) return std::nullopt;
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

// The precise versions of library copies, from the files around them; each
// site-packages and version.json is read once.
class VersionReader {
 public:
  explicit VersionReader(const std::vector<SitePackages>& known) : known_(known) {}

  // The version of the distribution that installed `file`, when `dir` is
  // <site-packages>/nvidia/<part>/lib.
  std::optional<std::string> from_dist_info(const fs::path& dir, const fs::path& file) {
    const fs::path lib = dir.lexically_normal();
    if (lib.filename() != "lib" || lib.parent_path().parent_path().filename() != "nvidia")
      return std::nullopt;
    const auto* owner = site(lib.parent_path().parent_path().parent_path()).owner_of(file);
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

  // <toolkit>/lib64, <toolkit>/lib and <toolkit>/targets/<triple>/lib, as
  // written and with links resolved (/usr/local/cuda -> cuda-13.0).
  static std::vector<fs::path> toolkit_roots(const fs::path& dir) {
    std::vector<fs::path> spellings{dir.lexically_normal()};
    std::error_code error;
    if (auto real = fs::canonical(dir, error); !error) spellings.push_back(real);
    std::vector<fs::path> roots;
    for (auto spelling : spellings) {
      if (!spelling.has_filename()) spelling = spelling.parent_path();  // "lib64/"
      const fs::path parent = spelling.parent_path();
      roots.push_back(parent);
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

CudaLibrarySearch default_cuda_library_search(const std::vector<fs::path>& site_packages) {
  CudaLibrarySearch search;
  search.site_packages = site_packages;
  // As the loader does, a setuid process ignores LD_LIBRARY_PATH; and
  // CUDA_HOME, which names where NVRTC is loaded from (sys/trust.hpp).
  search.ld_library_path = split_path_list(sys::trusted_path_variable("LD_LIBRARY_PATH"));
  if (const char* home = sys::trusted_path_variable("CUDA_HOME")) {
    search.cuda_home = home;
  } else if (const char* path = sys::trusted_path_variable("CUDA_PATH")) {
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
      const std::string filename = it->path().filename().string();
      const bool candidate =
          std::any_of(std::begin(kLibraries), std::end(kLibraries), [&](const LibraryKind& kind) {
            return library_version(filename, kind.name).has_value();
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
        const std::string filename = file.filename().string();
        const auto version = library_version(filename, kind.name);
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
