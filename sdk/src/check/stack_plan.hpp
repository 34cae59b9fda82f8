#pragma once
// Which packages move together, and which of their binaries a process loads
// first. A stack is a packages.yaml stack (torch with torchvision, torchaudio
// and triton), any other package that is not a supplier wheel, a custom-node
// pack or a library named alone; each takes in the supplier wheels (nvidia-*)
// its members require, following Requires-Dist with the extras asked for.
// Its roots are its own members' binaries: what Python imports and what the
// package opens itself. Supplier wheels are never roots: only what links or
// opens them loads them.
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "binary/image.hpp"
#include "env/attribution.hpp"
#include "env/python_env.hpp"
#include "env/wheel.hpp"
#include "kb/packages.hpp"

namespace archfit::check {

struct StackPlan {
  std::string name;     // "PyTorch", "xformers", "ComfyUI-GGUF", "libfoo.so"
  std::string anchor;   // the distribution whose build decides; "" for a pack or file
  std::string version;  // the anchor's
  env::ComponentKind kind = env::ComponentKind::distribution;
  std::vector<std::string> members;         // distribution, pack or file names, the anchor first
  std::vector<size_t> roots;                // indices into the scanned files
  const env::SitePackages* site = nullptr;  // where its distributions are; null otherwise
};

// The owner of every scanned file that could be loaded (a host ELF or a file
// with device code), as env::attribute names it; parallel to `files`, with
// an empty name for files of neither kind.
struct FileOwners {
  std::vector<env::Component> owner;
  std::vector<const env::SitePackages*> site;  // the site whose RECORD lists it; null otherwise
};

FileOwners attribute_files(const std::vector<binary::FileScan>& files,
                           const std::vector<env::SitePackages>& sites,
                           const std::vector<env::Wheel>& wheels,
                           const std::optional<std::filesystem::path>& custom_nodes);

// `excluded`: files never loaded whatever links them (a bitsandbytes copy
// for another CUDA); they are not roots.
std::vector<StackPlan> plan_stacks(const std::vector<binary::FileScan>& files,
                                   const FileOwners& owners,
                                   const std::vector<env::SitePackages>& sites,
                                   const kb::Packages& packages, const std::vector<bool>& excluded);

// The supplier wheels `roots` require, directly or through other suppliers,
// as installed in `site` (normalized names). Extras gate requirements as pip
// reads them: cuda-toolkit[cublas] pulls in only the cublas extra's wheels.
std::vector<std::string> required_suppliers(const env::SitePackages& site,
                                            const std::vector<std::string>& roots,
                                            const kb::Packages& packages);

}  // namespace archfit::check
