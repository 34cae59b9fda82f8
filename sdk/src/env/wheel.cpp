#include "wheel.hpp"

#include <algorithm>
#include <sstream>

#include "binary/zip_archive.hpp"

namespace archfit::env {

namespace fs = std::filesystem;

namespace {

// METADATA, WHEEL and version.py are a few KB; the limit only stops a forged
// size from allocating gigabytes.
constexpr uint64_t kMaxTextBytes = 16u << 20;

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::istringstream in(text);
  for (std::string part; std::getline(in, part, separator);) parts.push_back(part);
  return parts;
}

// The wheel spec's file name: name-version[-build]-python-abi-platform.whl,
// where python, abi and platform may each be dot-joined sets.
void read_file_name(Wheel& wheel) {
  std::string stem = wheel.path.filename().string();
  stem = stem.substr(0, stem.size() - 4);  // ".whl"
  const auto parts = split(stem, '-');
  if (parts.size() < 5 || parts.size() > 6) {
    wheel.problems.push_back({wheel.path, wheel.path.filename().string() +
                                              " is not named as a wheel "
                                              "(name-version-python-abi-platform.whl)"});
    return;
  }
  wheel.name = parts[0];
  wheel.version = parts[1];
  const size_t tag = parts.size() - 3;
  for (const auto& python : split(parts[tag], '.'))
    for (const auto& abi : split(parts[tag + 1], '.'))
      for (const auto& platform : split(parts[tag + 2], '.'))
        wheel.tags.push_back(python + "-" + abi + "-" + platform);
}

// "torch-2.5.1.dist-info/METADATA": the one at the top of the archive.
std::optional<binary::ZipMember> find_top_level(const std::vector<binary::ZipMember>& members,
                                                const std::string& suffix) {
  for (const auto& member : members) {
    const auto slash = member.name.find('/');
    if (slash != std::string::npos && member.name.compare(slash, std::string::npos, suffix) == 0 &&
        member.name.substr(0, slash).ends_with(".dist-info"))
      return member;
  }
  return std::nullopt;
}

void read_dist_info(const binary::ZipArchive& archive, Wheel& wheel) {
  const auto members = archive.members();
  const std::string where = wheel.path.string();
  if (const auto metadata = find_top_level(members, "/METADATA")) {
    const std::string text = archive.read_text(*metadata, kMaxTextBytes);
    if (auto name = metadata_field(text, "Name"); !name.empty()) wheel.name = std::move(name);
    if (auto version = metadata_field(text, "Version"); !version.empty())
      wheel.version = std::move(version);
  } else {
    wheel.problems.push_back({wheel.path, where + " has no *.dist-info/METADATA"});
  }
  if (const auto wheel_file = find_top_level(members, "/WHEEL")) {
    std::istringstream lines(archive.read_text(*wheel_file, kMaxTextBytes));
    std::vector<std::string> tags;
    for (std::string line; std::getline(lines, line);) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.rfind("Tag:", 0) != 0) continue;
      // "Tag:" with nothing after it names no tag (found by fuzz_wheel).
      const size_t start = line.find_first_not_of(' ', 4);
      if (start != std::string::npos) tags.push_back(line.substr(start));
    }
    if (!tags.empty()) wheel.tags = std::move(tags);
  }
  if (const auto version_py = archive.find("torch/version.py"))
    wheel.torch = parse_torch_version_py(archive.read_text(*version_py, kMaxTextBytes));
}

}  // namespace

bool Wheel::targets_a_read_platform() const {
  if (tags.empty()) return true;  // unknown: scan and let the files speak
  for (const auto& tag : tags) {
    const std::string platform = tag.substr(tag.rfind('-') + 1);
    if (platform == "any" || platform.find("linux") != std::string::npos ||
        platform.starts_with("win"))
      return true;
  }
  return false;
}

bool Wheel::targets_windows() const {
  return std::any_of(tags.begin(), tags.end(), [](const std::string& tag) {
    return tag.substr(tag.rfind('-') + 1).starts_with("win");
  });
}

Wheel read_wheel(const fs::path& path) {
  Wheel wheel;
  wheel.path = path;
  read_file_name(wheel);
  try {
    const binary::ZipArchive archive(path);
    read_dist_info(archive, wheel);
  } catch (const binary::ZipError& error) {
    wheel.problems.push_back({path, error.what()});
  } catch (const std::exception& error) {  // "never throws": whatever the archive holds
    wheel.problems.push_back(
        {path, path.string() + ": cannot be read as a wheel: " + error.what()});
  }
  return wheel;
}

}  // namespace archfit::env
