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
  // their paths. `layout`: where in that folder the site-packages is, for
  // an environment laid out as a venv ("venv/lib/python3.12/site-packages")
  // or ComfyUI portable ("python_embeded/Lib/site-packages").
  explicit FixtureSite(const std::string& name, const std::string& layout = "site-packages")
      : top_(std::filesystem::temp_directory_path() /
             ("archfit_" + name + "_" + std::to_string(::getpid()))),
        root_(top_ / layout) {
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
  const std::filesystem::path& top() const { return top_; }

  void write(const std::string& relative, const std::string& text) const {
    std::filesystem::create_directories((root_ / relative).parent_path());
    std::ofstream(root_ / relative) << text;
  }

  // Copies each {path in site-packages, source file} and records them in
  // <name>-<version>.dist-info, whose METADATA lists `requires` as
  // Requires-Dist lines ("nvidia-cufft-cu12==11.3.3.83; platform_system == \"Linux\"").
  // As pip does, a file another distribution installed is overwritten and
  // stays in that one's RECORD; RECORD gives each file's size (no hash).
  void install(const std::string& name, const std::string& version,
               const std::vector<std::pair<std::string, std::filesystem::path>>& files,
               const std::vector<std::string>& requires_dist = {}) const {
    std::string record;
    for (const auto& [relative, source] : files) {
      std::filesystem::create_directories((root_ / relative).parent_path());
      std::filesystem::copy_file(source, root_ / relative,
                                 std::filesystem::copy_options::overwrite_existing);
      record += relative + ",," + std::to_string(std::filesystem::file_size(source)) + "\n";
    }
    std::string metadata = "Metadata-Version: 2.1\nName: " + name + "\nVersion: " + version + "\n";
    for (const auto& requirement : requires_dist)
      metadata += "Requires-Dist: " + requirement + "\n";
    write(name + "-" + version + ".dist-info/METADATA", metadata);
    write(name + "-" + version + ".dist-info/RECORD", record);
  }

 private:
  std::filesystem::path top_;
  std::filesystem::path root_;
};

// The nvcc fixtures the three-build site is made of; empty when they are
// all built, else the first one missing.
inline std::string missing_three_build_fixture() {
  const std::filesystem::path fixtures = ARCHFIT_FIXTURE_DIR;
  for (const char* name : {"sm_86_sm_89.so", "sm_80.so", "compute_90.so"}) {
    if (!std::filesystem::exists(fixtures / name)) return (fixtures / name).string();
  }
  return {};
}

// torch 2.5.1+cu124 with SASS sm_86 and sm_89 and no PTX, xformers
// 0.0.28.post1 with SASS sm_80 only, fastops 1.0 with compute_90 PTX only:
// the site the diagnosis and report-reading tests weigh.
inline void install_three_builds(const FixtureSite& site) {
  const std::filesystem::path fixtures = ARCHFIT_FIXTURE_DIR;
  site.install("torch", "2.5.1+cu124",
               {{"torch/lib/libtorch_cuda.so", fixtures / "sm_86_sm_89.so"}});
  site.write("torch/version.py", "__version__ = '2.5.1+cu124'\ncuda = '12.4'\n");
  site.install("xformers", "0.0.28.post1", {{"xformers/_C.so", fixtures / "sm_80.so"}});
  site.install("fastops", "1.0", {{"fastops/_C.so", fixtures / "compute_90.so"}});
}

}  // namespace archfit::testing
