#pragma once
// Which libraries a process really loads when it uses a package: the
// package's own binaries, the libraries they name in DT_NEEDED — found where
// the dynamic loader finds them (DT_RPATH, DT_RUNPATH with $ORIGIN, then a
// library of that SONAME already in the environment, as torch's preloading
// leaves them) — and the libraries those open themselves (packages.yaml
// `opens`), transitively. A library nothing reaches is never loaded, whatever
// images it holds: nvidia-cufft's libcufftw.so, which no torch library links.
// A Windows DLL's imports are found as Windows finds an extension module's:
// its own folder, then the folders packages add with os.add_dll_directory
// (packages.yaml `dll_directories`: torch's torch\lib and nvidia\*\bin),
// then a DLL of that name loaded already; never PATH.
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "binary/image.hpp"
#include "env/python_env.hpp"
#include "kb/packages.hpp"

namespace archfit::check {

// How one scanned file came to be loaded.
struct ReachStep {
  size_t file = 0;             // the file reached
  std::optional<size_t> from;  // the file that linked or opened it; nullopt for a root
  bool opened = false;         // opened at run time (packages.yaml) rather than linked
};

// A file that an opener's `opens` pattern matches in its folder but that
// the opener's own distribution did not install: left there by another
// version (nvidia-cudnn-cu13 9.26's libcudnn_ext.so.9, which 9.10 of
// nvidia-cudnn-cu12 does not ship, beside the libcudnn.so.9 that 9.10
// overwrote). Not opened: a library opens the names its own release knows.
struct LeftOverFile {
  size_t file = 0;
  size_t opener = 0;
  const env::Distribution* opener_installed_by = nullptr;
};

// The DT_NEEDED and `opens` edges between the scanned host libraries.
class LinkGraph {
 public:
  // `files`, `packages` and `sites` must outlive the graph. `sites`' RECORDs
  // say which distribution installed an opener and what else it installed;
  // an opener no RECORD lists opens whatever its patterns match.
  LinkGraph(const std::vector<binary::FileScan>& files, const kb::Packages& packages,
            const std::vector<env::SitePackages>& sites = {});

  // Every file reachable from `roots` (indices into `files`), roots first,
  // each once, with how it was first reached. A file marked in `stop` (when
  // given) is reached but not followed: another stack's own library, whose
  // dependencies are that stack's to judge.
  std::vector<ReachStep> reach_from(const std::vector<size_t>& roots,
                                    const std::vector<bool>* stop = nullptr) const;

  // The DT_NEEDED names of file `index` that no scanned file answers: loaded
  // from the system, if it has them.
  const std::vector<std::string>& unresolved(size_t index) const { return unresolved_[index]; }

  // Files an opener's patterns match that its own release did not install.
  const std::vector<LeftOverFile>& left_over() const { return left_over_; }

 private:
  struct Edge {
    size_t to;
    bool opened;
  };
  std::optional<size_t> find_in(const std::filesystem::path& folder, const std::string& name) const;
  std::optional<size_t> resolve(size_t from, const std::string& needed) const;
  // realpath(3) of a file, its folder resolved once: realpath reads every
  // component of every path, and a venv's 300 libraries sit in 50 folders.
  std::filesystem::path real_path_of(const std::string& path) const;

  const std::vector<binary::FileScan>& files_;
  const kb::Packages& packages_;
  std::vector<std::filesystem::path> real_paths_;                 // "" for a wheel member
  std::unordered_map<std::string, size_t> by_real_path_;          // ELF host files only
  std::unordered_map<std::string, std::vector<size_t>> by_name_;  // SONAME and file name
  std::unordered_map<std::string, std::vector<size_t>> by_folder_;
  std::vector<std::vector<Edge>> edges_;
  std::vector<std::vector<std::string>> unresolved_;
  std::vector<LeftOverFile> left_over_;
  // While the graph is built: run-path lookups already made, by origin,
  // run-path entry and needed name.
  mutable std::unordered_map<std::string, std::optional<size_t>> found_in_folder_;
  // ... and paths not scanned as they are named, by what their real path is.
  mutable std::unordered_map<std::string, std::optional<size_t>> found_on_disk_;
  // ... and folders' real paths.
  mutable std::unordered_map<std::string, std::filesystem::path> real_folders_;
};

// "$ORIGIN/../lib" with $ORIGIN (or ${ORIGIN}) replaced by `origin`.
std::filesystem::path expand_origin(const std::string& entry, const std::filesystem::path& origin);

}  // namespace archfit::check
