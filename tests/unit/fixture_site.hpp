#pragma once
// A site-packages laid out as pip leaves it — the files, and a *.dist-info
// with METADATA and a RECORD naming them — in a temporary directory that is
// removed again, for tests that check or diagnose an environment built from
// the nvcc fixtures.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

namespace archfit::testing {

class FixtureSite {
 public:
  // A fresh <tmp>/archfit_<name>_<pid>/site-packages: named so, as
  // tracebacks through it name their package by the "site-packages/" in
  // their paths.
  explicit FixtureSite(const std::string& name)
      : top_(std::filesystem::temp_directory_path() /
             ("archfit_" + name + "_" + std::to_string(::getpid()))),
        root_(top_ / "site-packages") {
    std::filesystem::remove_all(top_);
    std::filesystem::create_directories(root_);
  }
  ~FixtureSite() {
    std::error_code ignored;
    std::filesystem::remove_all(top_, ignored);
  }
  FixtureSite(const FixtureSite&) = delete;
  FixtureSite& operator=(const FixtureSite&) = delete;

  const std::filesystem::path& root() const { return root_; }

  void write(const std::string& relative, const std::string& text) const {
    std::filesystem::create_directories((root_ / relative).parent_path());
    std::ofstream(root_ / relative) << text;
  }

  // Copies each {path in site-packages, source file} and records them in
  // <name>-<version>.dist-info, whose METADATA lists `requires` as
  // Requires-Dist lines ("nvidia-cufft-cu12==11.3.3.83; platform_system == \"Linux\"").
  void install(const std::string& name, const std::string& version,
               const std::vector<std::pair<std::string, std::filesystem::path>>& files,
               const std::vector<std::string>& requires_dist = {}) const {
    std::string record;
    for (const auto& [relative, source] : files) {
      std::filesystem::create_directories((root_ / relative).parent_path());
      std::filesystem::copy_file(source, root_ / relative);
      record += relative + ",,\n";
    }
    std::string metadata = "Metadata-Version: 2.1\nName: " + name + "\nVersion: " + version + "\n";
    for (const auto& requirement : requires_dist) metadata += "Requires-Dist: " + requirement + "\n";
    write(name + "-" + version + ".dist-info/METADATA", metadata);
    write(name + "-" + version + ".dist-info/RECORD", record);
  }

 private:
  std::filesystem::path top_;
  std::filesystem::path root_;
};

}  // namespace archfit::testing
