#pragma once
// The environments a node is labelled for (`archfit check --labels nfd
// --labels-config FILE`, docs/fleet.md): one entry per environment or image a
// job may bring, each named for its label (archfit.dev/fits.<name>).
//
//   schema: archfit.fleet/1
//   environments:
//     - name: comfyui-cu124
//       venv: /shared/envs/comfyui
//     - name: flux-image
//       site_packages: [/images/flux/rootfs/usr/local/lib/python3.11/site-packages]
//
// Each entry takes what `archfit check` takes to name an environment: venv,
// python, comfyui, custom_nodes, site_packages, wheels, paths.
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

namespace archfit::fleet {

// The file cannot be read or says something this archfit cannot use; the
// message names the file, the line and the field.
class FleetConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct FleetEnvironment {
  std::string name;  // a label name part: [A-Za-z0-9] at both ends, -_. inside
  std::vector<std::string> venvs;
  std::string python;
  std::string comfyui;
  std::string custom_nodes;
  std::vector<std::string> site_packages;
  std::vector<std::string> wheels;
  std::vector<std::string> paths;
};

struct FleetConfig {
  std::filesystem::path file;
  std::vector<FleetEnvironment> environments;  // in the file's order, names unique
};

// Relative paths in the file are taken from the file's folder.
FleetConfig read_fleet_config(const std::filesystem::path& file);

}  // namespace archfit::fleet
