#include "python_env.hpp"

#include <algorithm>
#include <charconv>
#include <sstream>
#include <system_error>

#include "binary/file_names.hpp"
#include "sys/read_file.hpp"
#include "sys/utf8_path.hpp"
#include "util/pattern.hpp"

namespace archfit::env {

namespace fs = std::filesystem;

namespace {

// A file's key among the RECORDs' files: on Windows a path the walk made
// (backslashes) and one from a RECORD (site-packages, then '/') name one
// file, so both are keyed with '/'. POSIX paths are keyed as they are.
std::string owner_key(std::string path) {
  if constexpr (fs::path::preferred_separator == '\\')
    std::replace(path.begin(), path.end(), '\\', '/');
  return path;
}

// METADATA and RECORD of one distribution are a few hundred KB at most;
// anything far larger is not what it claims to be.
constexpr std::uintmax_t kMaxMetadataBytes = 16u << 20;

std::optional<std::string> read_small_file(const fs::path& path,
                                           std::vector<EnvProblem>& problems) {
  std::string problem;
  auto text = sys::read_file(path, &problem, kMaxMetadataBytes);
  if (!text) problems.push_back({path, problem});
  return text;
}

// "xformers-0.0.28.post1.dist-info" → {"xformers", "0.0.28.post1"}: the wheel
// spec escapes '-' in both parts, so the first '-' separates them.
std::pair<std::string, std::string> split_dist_info_name(const std::string& directory) {
  const std::string stem = directory.substr(0, directory.size() - std::string(".dist-info").size());
  const auto dash = stem.find('-');
  if (dash == std::string::npos) return {stem, ""};
  return {stem.substr(0, dash), stem.substr(dash + 1)};
}

void read_distribution(const fs::path& dist_info, const fs::path& root, SitePackages& site) {
  Distribution dist;
  dist.dist_info = dist_info;
  auto [name, version] = split_dist_info_name(dist_info.filename().string());
  if (auto metadata = read_small_file(dist_info / "METADATA", site.problems)) {
    const std::string meta_name = metadata_field(*metadata, "Name");
    const std::string meta_version = metadata_field(*metadata, "Version");
    if (meta_name.empty() || meta_version.empty()) {
      site.problems.push_back(
          {dist_info / "METADATA", (dist_info / "METADATA").string() +
                                       " has no Name or Version header; using the folder name"});
    }
    // A name or version longer than any real one is no name: the folder's
    // (a file name, at most 255 bytes) stands in, and the report says so;
    // a 15 MiB Name once made 299 MB of JSON (issue 34).
    constexpr size_t kMaxNameBytes = 256;
    if (meta_name.size() > kMaxNameBytes || meta_version.size() > kMaxNameBytes) {
      site.problems.push_back({dist_info / "METADATA", (dist_info / "METADATA").string() +
                                                           ": its Name or Version is longer than " +
                                                           std::to_string(kMaxNameBytes) +
                                                           " bytes; using the folder name"});
    } else {
      if (!meta_name.empty()) name = meta_name;
      if (!meta_version.empty()) version = meta_version;
    }
    for (const auto& line : metadata_fields(*metadata, "Requires-Dist")) {
      if (auto requirement = parse_requirement(line))
        dist.requirements.push_back(std::move(*requirement));
    }
  }
  dist.name = name;
  dist.key = normalize_distribution_name(name);
  dist.version = version;
  if (auto record = read_small_file(dist_info / "RECORD", site.problems)) {
    // A torch venv's RECORDs hold 17,000 lines: read as views, not streams.
    const std::string prefix = root.string() + (root.native().ends_with('/') ? "" : "/");
    std::string_view rest = *record;
    size_t line_number = 0;
    while (!rest.empty()) {
      const size_t end = std::min(rest.find('\n'), rest.size());
      std::string_view line = rest.substr(0, end);
      rest.remove_prefix(std::min(end + 1, rest.size()));
      ++line_number;
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      if (line.empty()) continue;
      // Only the first field, the path, is wanted; most lines are unquoted.
      const bool quoted = line.front() == '"';
      const std::string_view unquoted = line.substr(0, line.find(','));
      if (!quoted && !unquoted.empty() &&
          binary::never_device_code(unquoted.substr(unquoted.rfind('/') + 1)))
        continue;
      const std::string path =
          quoted ? parse_csv_line(std::string(line)).front() : std::string(unquoted);
      if (quoted && binary::never_device_code(path.substr(path.rfind('/') + 1))) continue;
      if (path.empty()) {
        site.problems.push_back({dist_info / "RECORD", (dist_info / "RECORD").string() + ":" +
                                                           std::to_string(line_number) +
                                                           ": no path in this line"});
        continue;
      }
      // Paths are relative to site-packages ("../../bin/x" for scripts);
      // normalising is the slow part, and needed only for dots and doubled slashes.
      const bool plain = path.find("//") == std::string::npos && !path.starts_with("./") &&
                         !path.starts_with("../") && path.find("/.") == std::string::npos &&
                         !path.starts_with("/");
      dist.files.push_back(plain
                               ? prefix + path
                               : sys::utf8_of((root / sys::path_of_utf8(path)).lexically_normal()));
    }
  }
  site.distributions.push_back(std::move(dist));
}

}  // namespace

std::optional<RecordRow> recorded_size(const Distribution& dist,
                                       const std::function<bool(std::string_view)>& matches) {
  std::vector<EnvProblem> ignored;  // an unreadable RECORD answers "unknown"
  const auto record = read_small_file(dist.dist_info / "RECORD", ignored);
  if (!record) return std::nullopt;
  std::string_view rest = *record;
  while (!rest.empty()) {
    const size_t end = std::min(rest.find('\n'), rest.size());
    std::string line(rest.substr(0, end));
    rest.remove_prefix(std::min(end + 1, rest.size()));
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    const auto fields = parse_csv_line(line);  // path, hash, size
    if (fields.empty() || !matches(fields.front())) continue;
    if (fields.size() < 3) return std::nullopt;
    const auto& size = fields[2];
    std::uintmax_t value = 0;
    const auto [at, error] = std::from_chars(size.data(), size.data() + size.size(), value);
    if (error != std::errc() || at != size.data() + size.size() || size.empty())
      return std::nullopt;
    return RecordRow{fields.front(), value};
  }
  return std::nullopt;
}

std::vector<std::string> metadata_fields(const std::string& metadata, std::string_view field) {
  std::vector<std::string> values;
  std::istringstream lines(metadata);
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) break;  // the description body follows
    if (line.size() > field.size() + 1 && line.compare(0, field.size(), field) == 0 &&
        line[field.size()] == ':') {
      const auto value = line.find_first_not_of(' ', field.size() + 1);
      values.push_back(value == std::string::npos ? std::string() : line.substr(value));
    }
  }
  return values;
}

std::string metadata_field(const std::string& metadata, std::string_view field) {
  auto values = metadata_fields(metadata, field);
  return values.empty() ? std::string() : std::move(values.front());
}

std::vector<std::string> parse_csv_line(const std::string& line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        fields.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        fields.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else {
      fields.back() += c;
    }
  }
  return fields;
}

std::optional<TorchBuild> parse_torch_version_py(const std::string& text) {
  // Assignments as torch's build writes them: `__version__ = '2.5.1+cu124'`,
  // `cuda: Optional[str] = '12.4'`, `hip: Optional[str] = None`.
  static const util::Pattern assignment(
      R"re(\s*(__version__|cuda|hip)\s*(?::[^=]*)?=\s*(?:'([^']*)'|"([^"]*)"|None)\s*)re");
  TorchBuild build;
  bool have_version = false;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const auto match = assignment.match_whole(line);
    if (!match) continue;
    const auto& groups = *match;
    const std::string value = !groups[2].empty() ? groups[2] : groups[3];
    if (groups[1] == "__version__") {
      build.version = value;
      have_version = !value.empty();
    } else if (groups[1] == "cuda") {
      build.cuda = value;
    } else {
      build.hip = value;
    }
  }
  if (!have_version) return std::nullopt;
  return build;
}

const Distribution* SitePackages::find(std::string_view name) const {
  const std::string key = normalize_distribution_name(name);
  for (const auto& dist : distributions) {
    if (dist.key == key) return &dist;
  }
  return nullptr;
}

const Distribution* SitePackages::owner_of(const fs::path& file) const {
  const auto it = owners_.find(owner_key(file.lexically_normal().string()));
  return it == owners_.end() ? nullptr : &distributions[it->second.front()];
}

std::vector<const Distribution*> SitePackages::owners_of(const fs::path& file) const {
  std::vector<const Distribution*> owners;
  if (const auto it = owners_.find(owner_key(file.lexically_normal().string()));
      it != owners_.end()) {
    for (const size_t index : it->second) owners.push_back(&distributions[index]);
  }
  return owners;
}

const Distribution* SitePackages::installer_of(const fs::path& file,
                                               std::uintmax_t size_on_disk) const {
  const auto owners = owners_of(file);
  if (owners.size() < 2) return owners.empty() ? nullptr : owners.front();
  const std::string key = owner_key(file.lexically_normal().string());
  const std::string name = sys::utf8_of(file.filename());
  const fs::path normal_root = root.lexically_normal();
  // RECORD's rows are relative to site-packages: only a row ending in the
  // file's name is worth normalising.
  const auto names_this_file = [&](std::string_view row) {
    return row.ends_with(name) &&
           owner_key(sys::utf8_of(
               (normal_root / sys::path_of_utf8(std::string(row))).lexically_normal())) == key;
  };
  for (const Distribution* owner : owners) {
    const auto row = recorded_size(*owner, names_this_file);
    if (row && row->size == size_on_disk) return owner;
  }
  return owners.front();
}

std::string installed_version(const fs::path& site, std::string_view distribution) {
  const std::string wanted = normalize_distribution_name(distribution);
  std::error_code error;
  for (fs::directory_iterator entry(site, error), end; !error && entry != end;
       entry.increment(error)) {
    const std::string folder = entry->path().filename().string();
    if (!folder.ends_with(".dist-info")) continue;
    const auto [name, version] = split_dist_info_name(folder);
    if (normalize_distribution_name(name) == wanted) return version;
  }
  return {};
}

SitePackages read_site_packages(const fs::path& given_root) {
  const fs::path root = given_root.lexically_normal();
  SitePackages site;
  site.root = given_root;
  std::error_code error;
  std::vector<fs::path> dist_infos;
  for (fs::directory_iterator it(root, error), end; !error && it != end; it.increment(error)) {
    const std::string name = it->path().filename().string();
    if (name.size() > 10 && name.ends_with(".dist-info") && it->is_directory(error))
      dist_infos.push_back(it->path());
  }
  if (error)
    site.problems.push_back({root, "cannot list " + root.string() + ": " + error.message()});
  std::sort(dist_infos.begin(), dist_infos.end());
  for (const auto& dist_info : dist_infos) read_distribution(dist_info, root, site);
  std::stable_sort(site.distributions.begin(), site.distributions.end(),
                   [](const Distribution& a, const Distribution& b) { return a.name < b.name; });
  // A file two RECORDs claim belongs to the first by name (owner_of).
  for (size_t i = 0; i < site.distributions.size(); ++i) {
    for (const auto& file : site.distributions[i].files) {
      auto& owners = site.owners_[owner_key(file)];
      if (owners.empty() || owners.back() != i) owners.push_back(i);
    }
  }

  const fs::path version_py = root / "torch" / "version.py";
  if (fs::exists(version_py, error)) {
    if (auto text = read_small_file(version_py, site.problems)) {
      site.torch = parse_torch_version_py(*text);
      if (site.torch) {
        site.torch->version_file = version_py;
      } else {
        site.problems.push_back(
            {version_py, version_py.string() + " has no __version__ assignment"});
      }
    }
  }
  return site;
}

}  // namespace archfit::env
