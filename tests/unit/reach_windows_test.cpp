// What a Windows extension module loads (check/reach): its own folder first,
// then the folders packages add with os.add_dll_directory (packages.yaml
// `dll_directories`: torch adds torch\lib and the nvidia\*\bin folders of the
// CUDA wheels), then a DLL of that name loaded already; names compared
// without case, as Windows does. The files are described, not read: the
// graph follows each file's import table as a scan left it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <string>
#include <vector>

#include "binary/image.hpp"
#include "check/reach.hpp"
#include "kb/knowledge_base.hpp"

namespace {

using archfit::binary::FileFormat;
using archfit::binary::FileScan;
using archfit::check::LinkGraph;

const std::string kSite = "/portable/python_embeded/Lib/site-packages/";

const archfit::kb::KnowledgeBase& real_kb() {
  static const auto kb = archfit::kb::load_knowledge_base(ARCHFIT_KB_SOURCE_DIR);
  return kb;
}

FileScan dll(const std::string& relative, std::vector<std::string> needed = {}) {
  FileScan scan;
  scan.path = kSite + relative;
  scan.format = FileFormat::pe;
  scan.machine = 62;
  scan.linkage = archfit::binary::Linkage{};
  scan.linkage->needed = std::move(needed);
  return scan;
}

std::string lower_file_name(const std::string& path) {
  std::string name = std::filesystem::path(path).filename().string();
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return name;
}

// The file `from` reaches by linking `name`, as a path under site-packages;
// "" when it reaches none.
std::string reached(const std::vector<FileScan>& files, size_t from, const std::string& name) {
  const LinkGraph graph(files, real_kb().packages());
  for (const auto& step : graph.reach_from({from})) {
    if (step.from == from && lower_file_name(files[step.file].path) == lower_file_name(name))
      return files[step.file].path.substr(kSite.size());
  }
  return "";
}

TEST(WindowsReach, AFolderTorchAddsComesBeforeAnyOtherCopy) {
  // A stray copy, listed first and as near as the wheel's: the nvidia wheel's
  // bin folder, which torch adds, is where Windows finds it.
  const std::vector<FileScan> files = {
      dll("xformers/_C.pyd", {"cudart64_12.dll", "c10.dll"}),
      dll("a_node_pack/cudart64_12.dll"),
      dll("nvidia/cuda_runtime/bin/cudart64_12.dll"),
      dll("torch/lib/c10.dll"),
  };
  EXPECT_EQ(reached(files, 0, "cudart64_12.dll"), "nvidia/cuda_runtime/bin/cudart64_12.dll");
  EXPECT_EQ(reached(files, 0, "c10.dll"), "torch/lib/c10.dll");
}

TEST(WindowsReach, TheModulesOwnFolderComesFirstWhateverTheCase) {
  const std::vector<FileScan> files = {
      dll("bitsandbytes/libbitsandbytes_cuda128.dll", {"CUDART64_12.DLL"}),
      dll("nvidia/cuda_runtime/bin/cudart64_12.dll"),
      dll("bitsandbytes/cudart64_12.dll"),
  };
  EXPECT_EQ(reached(files, 0, "cudart64_12.dll"), "bitsandbytes/cudart64_12.dll");
}

TEST(WindowsReach, WithoutAnAddedFolderTheNearestCopyLoadedAlreadyServes) {
  const std::vector<FileScan> files = {
      dll("pack/sub/_C.pyd", {"helper.dll"}),
      dll("elsewhere/helper.dll"),
      dll("pack/helper.dll"),
  };
  EXPECT_EQ(reached(files, 0, "helper.dll"), "pack/helper.dll");
}

}  // namespace
