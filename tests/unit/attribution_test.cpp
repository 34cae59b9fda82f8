#include "env/attribution.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

namespace fs = std::filesystem;
using archfit::env::attribute;
using archfit::env::ComponentKind;
using archfit::env::read_site_packages;

namespace {

struct Tree {
  Tree() {
    root = fs::temp_directory_path() / ("archfit_attr_" + std::to_string(::getpid()));
    fs::remove_all(root);
    write("site/xformers-0.0.28.post1.dist-info/METADATA",
          "Name: xformers\nVersion: 0.0.28.post1\n");
    write("site/xformers-0.0.28.post1.dist-info/RECORD", "xformers/_C.so,sha256=x,1\n");
    write("site/xformers/_C.so", "");
    write("comfy/custom_nodes/ComfyUI-GGUF/ops/kernels.so", "");
    write("comfy/custom_nodes/loose.so", "");
    write("elsewhere/libfoo.so", "");
  }
  ~Tree() { fs::remove_all(root); }
  void write(const std::string& relative, const std::string& text) {
    fs::create_directories((root / relative).parent_path());
    std::ofstream(root / relative) << text;
  }
  fs::path root;
};

}  // namespace

TEST(Attribution, DistributionThenCustomNodePackThenLibrary) {
  const Tree tree;
  const auto site = read_site_packages(tree.root / "site");
  const std::optional<fs::path> nodes = tree.root / "comfy" / "custom_nodes";

  const auto xformers = attribute(tree.root / "site/xformers/./_C.so", &site, nodes);
  EXPECT_EQ(xformers.kind, ComponentKind::distribution);
  EXPECT_EQ(xformers.name, "xformers");
  EXPECT_EQ(xformers.version, "0.0.28.post1");

  const auto pack =
      attribute(tree.root / "comfy/custom_nodes/ComfyUI-GGUF/ops/kernels.so", &site, nodes);
  EXPECT_EQ(pack.kind, ComponentKind::custom_node);
  EXPECT_EQ(pack.name, "ComfyUI-GGUF");
  EXPECT_EQ(pack.root, tree.root / "comfy/custom_nodes/ComfyUI-GGUF");

  // A file directly in custom_nodes is not inside any pack.
  EXPECT_EQ(attribute(tree.root / "comfy/custom_nodes/loose.so", &site, nodes).kind,
            ComponentKind::library);

  const auto library = attribute(tree.root / "elsewhere/libfoo.so", &site, nodes);
  EXPECT_EQ(library.kind, ComponentKind::library);
  EXPECT_EQ(library.name, "libfoo.so");
  EXPECT_EQ(archfit::env::to_string(library.kind), "library");
}

TEST(Attribution, WorksWithoutSitePackagesOrCustomNodes) {
  const auto component = attribute("/opt/lib/../lib/libbar.so", nullptr, std::nullopt);
  EXPECT_EQ(component.kind, ComponentKind::library);
  EXPECT_EQ(component.root, fs::path("/opt/lib/libbar.so"));
}
