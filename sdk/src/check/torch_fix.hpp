#pragma once
// The fix for a PyTorch stack: which torch build to install, with the
// torchvision, torchaudio and xformers releases pinned to it, from which
// index, and the driver it needs. Chosen from the knowledge base's table of
// builds (torch.yaml) for every GPU at once: for a GPU newer than the
// installed build, the newest build that runs on it (within this driver
// when one is known) and the oldest that does as the smallest change; for a
// GPU older than it, the newest build that still runs on it. A build the
// PyPI wheel is installs with a plain `pip install`; any other names its
// index URL and pins the +cuXYZ label so pip cannot keep a same-numbered
// build of another CUDA. On Windows every build names the index (PyPI's
// torch for Windows is CPU-only).
#include <optional>
#include <string>
#include <vector>

#include "check.hpp"
#include "kb/knowledge_base.hpp"

namespace archfit::check {

// What the fix moves, as installed.
struct InstalledTorchStack {
  std::string torch;  // "2.5.1+cu124"; "" when torch is not installed
  // Installed companions (torchvision, torchaudio): name and version.
  std::vector<std::pair<std::string, std::string>> companions;
  std::optional<std::string> xformers;  // installed xformers version
  // A Windows environment or wheel: PyPI's torch for Windows is CPU-only,
  // so every build comes from PyTorch's index, whatever its number.
  bool windows = false;
  // Whose numbers the driver has (report.hpp's DriverInfo::family): the
  // drivers a fix asks for are that OS's.
  kb::DriverFamily driver_family = kb::DriverFamily::linux_driver;

  kb::TorchPlatform platform() const { return {windows, driver_family}; }
  // The installed torch is built without CUDA (a +cpu build): it likely came
  // from an index pip is set to use, where `torch==X` also matches X+cpu, so
  // the fix names PyTorch's CUDA index and the +cuXYZ label.
  bool without_cuda = false;
};

// "NVIDIA driver", or "NVIDIA Windows driver" where the numbers are Windows'
// (under WSL2 too: the driver to update is the Windows one).
std::string nvidia_driver_words(kb::DriverFamily family);

// Never empty: with no build for every GPU it says so and what each needs.
Fix torch_stack_fix(const std::vector<DeviceInfo>& devices,
                    const std::optional<compat::DriverVersion>& driver,
                    const InstalledTorchStack& installed, const kb::KnowledgeBase& kb);

// The installed torch version rebuilt for another CUDA that this driver runs
// on every device: the smallest change when only the driver is wrong
// (2.11.0+cu130 on an R570 driver: 2.11.0+cu128). nullopt when none is.
std::optional<Fix> same_version_within_driver(const std::vector<DeviceInfo>& devices,
                                              const compat::DriverVersion& driver,
                                              const InstalledTorchStack& installed,
                                              const kb::KnowledgeBase& kb);

// The newest xformers release (components.yaml `releases`) that installs
// beside `torch_version` and runs on every device; nullptr when none does.
const kb::ComponentRelease* xformers_for(const std::string& torch_version,
                                         const std::vector<DeviceInfo>& devices,
                                         const kb::KnowledgeBase& kb);

}  // namespace archfit::check
