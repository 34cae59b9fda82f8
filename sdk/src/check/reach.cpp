#include "reach.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <deque>
#include <memory>
#include <system_error>

#include "binary/archive_scan.hpp"
#include "sys/file_status.hpp"
#include "sys/utf8_path.hpp"

namespace archfit::check {

namespace fs = std::filesystem;

namespace {

// A wheel's member ("x.whl!/pkg/lib.so") is no file on disk: its folder is
// the member's folder inside the wheel, and only names match it.
bool is_member(const std::string& path) {
  return path.find(binary::kMemberSeparator) != std::string::npos;
}

// sys::real_path (realpath(3)), not std::filesystem::weakly_canonical: the
// same answer for a file that exists, at a fraction of the cost over a
// venv's 240 libraries.
fs::path real_path(const std::string& path) {
  const std::string real = sys::real_path(path);
  return real.empty() ? sys::path_of_utf8(path).lexically_normal() : sys::path_of_utf8(real);
}

}  // namespace

fs::path expand_origin(const std::string& entry, const fs::path& origin) {
  std::string expanded = entry;
  for (const std::string token : {"${ORIGIN}", "$ORIGIN"}) {
    for (auto at = expanded.find(token); at != std::string::npos; at = expanded.find(token, at))
      expanded.replace(at, token.size(), origin.string());
  }
  return sys::path_of_utf8(expanded).lexically_normal();
}

namespace {

// The name a library is found by: Windows compares DLL names without case
// (an import of KERNEL32.dll loads kernel32.dll), ELF's loader with it.
std::string name_key(const std::string& name, binary::FileFormat format) {
  if (format != binary::FileFormat::pe) return name;
  std::string key = name;
  std::transform(key.begin(), key.end(), key.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return key;
}

// A folder's path relative to the site-packages it is in ("torch/lib"), or
// to its wheel; nullopt when it is in neither.
std::optional<std::string> relative_to_site(const std::string& folder) {
  if (const auto member = folder.find(binary::kMemberSeparator); member != std::string::npos)
    return folder.substr(member + binary::kMemberSeparator.size());
  constexpr std::string_view site = "/site-packages";
  const auto at = folder.rfind(site);
  if (at == std::string::npos) return std::nullopt;
  const auto rest = at + site.size();
  if (rest == folder.size()) return std::string();
  if (folder[rest] != '/') return std::nullopt;
  return folder.substr(rest + 1);
}

}  // namespace

namespace {

// The distribution whose install wrote `file` as it is on disk, and its
// site; {nullptr, nullptr} when no RECORD lists it.
std::pair<const env::Distribution*, const env::SitePackages*> installer_of(
    const binary::FileScan& file, const std::vector<env::SitePackages>& sites) {
  if (is_member(file.path)) return {nullptr, nullptr};
  const fs::path path = sys::path_of_utf8(file.path);
  for (const auto& site : sites) {
    if (const auto* installer = site.installer_of(path, file.file_size)) return {installer, &site};
  }
  return {nullptr, nullptr};
}

}  // namespace

LinkGraph::LinkGraph(const std::vector<binary::FileScan>& files, const kb::Packages& packages,
                     const std::vector<env::SitePackages>& sites)
    : files_(files),
      packages_(packages),
      real_paths_(files.size()),
      edges_(files.size()),
      unresolved_(files.size()) {
  for (size_t i = 0; i < files.size(); ++i) {
    const auto& file = files[i];
    if (!file.linkage) continue;
    fs::path folder;
    if (is_member(file.path)) {
      folder = sys::path_of_utf8(file.path).parent_path();
    } else {
      real_paths_[i] = real_path_of(file.path);
      by_real_path_.emplace(real_paths_[i].string(), i);
      folder = real_paths_[i].parent_path();
    }
    by_folder_[folder.string()].push_back(i);
    const std::string file_name =
        name_key(sys::path_of_utf8(file.path).filename().string(), file.format);
    by_name_[file_name].push_back(i);
    if (!file.linkage->name.empty() && name_key(file.linkage->name, file.format) != file_name)
      by_name_[name_key(file.linkage->name, file.format)].push_back(i);
  }
  for (size_t i = 0; i < files.size(); ++i) {
    const auto& file = files[i];
    if (!file.linkage) continue;
    for (const auto& needed : file.linkage->needed) {
      if (const auto target = resolve(i, needed)) {
        edges_[i].push_back({*target, false});
      } else {
        unresolved_[i].push_back(needed);
      }
    }
    const std::string name = sys::path_of_utf8(file.path).filename().string();
    const auto opened = packages.opened_by(name);
    if (opened.empty()) continue;
    const fs::path folder = is_member(file.path) ? sys::path_of_utf8(file.path).parent_path()
                                                 : real_paths_[i].parent_path();
    const auto neighbours = by_folder_.find(folder.string());
    if (neighbours == by_folder_.end()) continue;
    // A release ships what it opens (cuDNN's sub-libraries, NVRTC's
    // builtins come in its own wheel): a match its installer's RECORD does
    // not list was left by another release and is never opened.
    const auto [installer, site] = installer_of(file, sites);
    for (const size_t other : neighbours->second) {
      const std::string other_name = sys::path_of_utf8(files[other].path).filename().string();
      for (const auto& pattern : opened) {
        if (other == i || !kb::glob_matches(pattern, other_name)) continue;
        const auto owners = site ? site->owners_of(sys::path_of_utf8(files[other].path))
                                 : std::vector<const env::Distribution*>{};
        if (installer && std::find(owners.begin(), owners.end(), installer) == owners.end())
          left_over_.push_back({other, i, installer});
        else
          edges_[i].push_back({other, true});
        break;
      }
    }
  }
  found_in_folder_.clear();
  found_on_disk_.clear();
  real_folders_.clear();
}

fs::path LinkGraph::real_path_of(const std::string& path) const {
  const size_t slash = path.rfind('/');
  const auto status = slash == std::string::npos || slash == 0
                          ? std::nullopt
                          : sys::file_status(sys::path_of_utf8(path), sys::Links::not_followed);
  if (!status || status->type == sys::FileType::link)
    return real_path(path);  // a symlink (libcudart.so.12), or not there
  const auto [at, added] = real_folders_.try_emplace(path.substr(0, slash));
  if (added) at->second = real_path(at->first);
  return at->second / sys::path_of_utf8(path.substr(slash + 1));
}

std::optional<size_t> LinkGraph::find_in(const fs::path& folder, const std::string& name) const {
  // Folders come from a real $ORIGIN, so the plain path names a scanned file
  // as the walk named it unless a symlink sits in between: only then is the
  // (costlier) real path worth asking for, once per path (libraries all over
  // a venv look for libc.so.6 in the same run-path folders).
  const fs::path candidate = (folder / sys::path_of_utf8(name)).lexically_normal();
  if (const auto found = by_real_path_.find(candidate.string()); found != by_real_path_.end())
    return found->second;
  const auto [known, added] = found_on_disk_.try_emplace(candidate.string());
  if (added) {
    const auto found = by_real_path_.find(real_path_of(candidate.string()).string());
    if (found != by_real_path_.end()) known->second = found->second;
  }
  return known->second;
}

std::optional<size_t> LinkGraph::resolve(size_t from, const std::string& needed) const {
  const auto& file = files_[from];
  const auto& linkage = *file.linkage;
  // A name with a slash is a path, used as it is (relative to the working
  // directory, which archfit cannot know): only an absolute one is looked up.
  if (needed.find('/') != std::string::npos) {
    if (sys::path_of_utf8(needed).is_absolute())
      return find_in(sys::path_of_utf8(needed).parent_path(),
                     sys::path_of_utf8(needed).filename().string());
    return std::nullopt;
  }
  // No scanned library goes by that file name or SONAME (libc.so.6,
  // libstdc++): the run path cannot lead to one either, short of a symlink
  // under a third name, which no wheel ships.
  const auto named = by_name_.find(name_key(needed, file.format));
  if (named == by_name_.end()) return std::nullopt;
  if (!is_member(file.path)) {
    const fs::path origin = real_paths_[from].parent_path();
    // DT_RPATH counts only when there is no DT_RUNPATH (ld.so(8)).
    const auto& folders = linkage.runpath.empty() ? linkage.rpath : linkage.runpath;
    // Libraries in one folder share their run paths and much of what they
    // need (libcudart, libc10): each folder and name is looked up once.
    for (const auto& entry : folders) {
      std::string key = origin.string();
      key.append(1, '\n').append(entry).append(1, '\n').append(needed);
      const auto [at, added] = found_in_folder_.try_emplace(std::move(key));
      if (added) at->second = find_in(expand_origin(entry, origin), needed);
      if (at->second) return at->second;
    }
  }
  const std::string here = sys::path_of_utf8(file.path).parent_path().string();
  if (file.format == binary::FileFormat::pe) {
    // Windows: the module's own folder, then a folder a package added with
    // os.add_dll_directory (torch's torch\lib, nvidia\*\bin).
    std::optional<size_t> added;
    for (const size_t candidate : named->second) {
      if (candidate == from) continue;
      const std::string there = sys::path_of_utf8(files_[candidate].path).parent_path().string();
      if (there == here) return candidate;
      const auto relative = relative_to_site(there);
      if (!added && relative && packages_.is_added_dll_directory(*relative)) added = candidate;
    }
    if (added) return added;
  }
  // A library of that name already in the environment: what a process that
  // imported its owner first has loaded (torch preloads its CUDA wheels),
  // and the only way a wheel's members find one another. The one nearest
  // the requester wins: same folder, then the longest shared path.
  std::optional<size_t> best;
  size_t best_shared = 0;
  for (const size_t candidate : named->second) {
    if (candidate == from) continue;
    const std::string there = sys::path_of_utf8(files_[candidate].path).parent_path().string();
    size_t shared = 0;
    while (shared < here.size() && shared < there.size() && here[shared] == there[shared]) ++shared;
    if (!best || shared > best_shared) {
      best = candidate;
      best_shared = shared;
    }
  }
  return best;
}

std::vector<ReachStep> LinkGraph::reach_from(const std::vector<size_t>& roots,
                                             const std::vector<bool>* stop) const {
  std::vector<ReachStep> reached;
  std::vector<bool> seen(files_.size(), false);
  std::deque<size_t> queue;
  for (const size_t root : roots) {
    if (root >= files_.size() || seen[root]) continue;
    seen[root] = true;
    reached.push_back({root, std::nullopt, false});
    queue.push_back(root);
  }
  while (!queue.empty()) {
    const size_t at = queue.front();
    queue.pop_front();
    for (const auto& edge : edges_[at]) {
      if (seen[edge.to]) continue;
      seen[edge.to] = true;
      reached.push_back({edge.to, at, edge.opened});
      if (!stop || edge.to >= stop->size() || !(*stop)[edge.to]) queue.push_back(edge.to);
    }
  }
  return reached;
}

}  // namespace archfit::check
