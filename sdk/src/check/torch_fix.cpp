#include "torch_fix.hpp"

#include <algorithm>
#include <set>

#include "compat/rules.hpp"
#include "env/requirement.hpp"

namespace archfit::check {

namespace {

// A Jetson's driver is part of JetPack, and PyPI's torch is not built for it.
constexpr const char* kJetson =
    "On Jetson, install the PyTorch build for your JetPack from NVIDIA's Jetson wheels "
    "(https://developer.nvidia.com/embedded/downloads), and update JetPack rather than a driver";

// One build of one torch version, judged for every device at once.
struct Candidate {
  const kb::TorchImage* image = nullptr;  // the first device's; version, build and tag agree
  bool native_everywhere = true;          // no device needs the driver's PTX JIT
  std::optional<compat::DriverVersion> needed_driver;  // the most any device needs
};

std::string release_of(const std::string& version) { return version.substr(0, version.find('+')); }

std::string devices_phrase(const std::vector<DeviceInfo>& devices) {
  std::string out;
  for (size_t d = 0; d < devices.size(); ++d) {
    if (d) out += d + 1 == devices.size() ? " and " : ", ";
    out += devices[d].name + " (" + devices[d].cc.sm_name() + ")";
  }
  return out;
}

std::string build_name(const kb::TorchImage& image) {
  return image.version->version + "+" + image.build->tag;
}

// Builds that serve every device: in the knowledge base's order (oldest
// version first, then by CUDA tag).
std::vector<Candidate> candidates_for(const std::vector<DeviceInfo>& devices,
                                      const std::vector<std::vector<kb::TorchImage>>& per_device) {
  std::vector<Candidate> out;
  if (devices.empty()) return out;
  for (const auto& image : per_device[0]) {
    Candidate candidate{&image, !image.via_ptx, image.needed_driver};
    bool everywhere = true;
    for (size_t d = 1; d < devices.size() && everywhere; ++d) {
      const auto match = std::find_if(
          per_device[d].begin(), per_device[d].end(), [&](const kb::TorchImage& other) {
            return other.version == image.version && other.build == image.build;
          });
      if (match == per_device[d].end()) {
        everywhere = false;
        break;
      }
      candidate.native_everywhere &= !match->via_ptx;
      if (match->needed_driver &&
          (!candidate.needed_driver || *candidate.needed_driver < *match->needed_driver))
        candidate.needed_driver = match->needed_driver;
    }
    if (everywhere) out.push_back(candidate);
  }
  return out;
}

bool fits(const Candidate& candidate, const std::optional<compat::DriverVersion>& driver) {
  return !driver || !candidate.needed_driver || *driver >= *candidate.needed_driver;
}

// Of the builds of the newest (or oldest) version, the one to install:
// within the driver, native, PyPI's, then the newest CUDA.
const Candidate* pick(const std::vector<const Candidate*>& pool, bool newest,
                      const std::optional<compat::DriverVersion>& driver) {
  if (pool.empty()) return nullptr;
  const auto version_of = [](const Candidate* c) { return c->image->version->version; };
  std::string chosen_version = version_of(pool.front());
  for (const auto* c : pool) {
    const int order = env::compare_versions(version_of(c), chosen_version);
    if (newest ? order > 0 : order < 0) chosen_version = version_of(c);
  }
  const Candidate* best = nullptr;
  const auto score = [&](const Candidate* c) {
    return std::tuple(fits(*c, driver), c->native_everywhere, c->image->on_pypi);
  };
  for (const auto* c : pool) {
    if (version_of(c) != chosen_version) continue;
    // Later builds of a version have newer CUDA: ties go to them.
    if (!best || score(c) >= score(best)) best = c;
  }
  return best;
}

// The pip commands that install `image` and the companions installed now,
// with xformers pinned when given (or removed when asked).
void add_install(Fix& fix, const kb::TorchImage& image, const InstalledTorchStack& installed,
                 const kb::ComponentRelease* xformers, bool remove_xformers) {
  // PyPI's wheel carries no +cuXYZ label, so pip keeps an installed build of
  // the same number from another index: such a move needs the index and the label.
  const bool same_number =
      !installed.torch.empty() && release_of(installed.torch) == image.version->version;
  const bool from_pypi =
      image.on_pypi && !same_number && !installed.windows && !installed.without_cuda;
  const std::string label = from_pypi ? "" : "+" + image.build->tag;
  std::vector<std::string> pinned = {"torch==" + image.version->version + label};
  std::vector<std::string> from_pypi_alone;
  for (const auto& installed_companion : installed.companions) {
    // A named reference, not a structured binding: clang 14 cannot capture those.
    const std::string& name = installed_companion.first;
    const auto companion =
        std::find_if(image.version->companions.begin(), image.version->companions.end(),
                     [&](const kb::Companion& c) { return c.name == name; });
    if (companion == image.version->companions.end()) continue;
    if (companion->per_cuda) {
      pinned.push_back(name + "==" + companion->version + label);
    } else if (from_pypi) {
      pinned.push_back(name + "==" + companion->version);
    } else {
      from_pypi_alone.push_back(name + "==" + companion->version);
    }
  }
  if (xformers) pinned.push_back("xformers==" + xformers->version);
  std::string command = "pip install";
  for (const auto& requirement : pinned) command += " " + requirement;
  if (!from_pypi) command += " --index-url " + image.tag->index_url;
  fix.commands.push_back(command);
  if (!from_pypi_alone.empty()) {
    std::string pypi = "pip install";
    for (const auto& requirement : from_pypi_alone) pypi += " " + requirement;
    fix.commands.push_back(pypi);
  }
  // Last: pip only warns that the old xformers pins another torch.
  if (remove_xformers) fix.commands.push_back("pip uninstall -y xformers");
  fix.requirements = pinned;
  fix.requirements.insert(fix.requirements.end(), from_pypi_alone.begin(), from_pypi_alone.end());
  fix.index_url = from_pypi ? "" : image.tag->index_url;
}

// " with torchvision 0.23.0, torchaudio 2.8.0 and xformers 0.0.32.post2".
std::string companions_phrase(const kb::TorchImage& image, const InstalledTorchStack& installed,
                              const kb::ComponentRelease* xformers) {
  std::vector<std::string> names;
  for (const auto& [name, version] : installed.companions) {
    for (const auto& companion : image.version->companions) {
      if (companion.name == name) names.push_back(name + " " + companion.version);
    }
  }
  if (xformers) names.push_back("xformers " + xformers->version);
  if (names.empty()) return "";
  std::string out = " with ";
  for (size_t i = 0; i < names.size(); ++i) {
    if (i) out += i + 1 == names.size() ? " and " : ", ";
    out += names[i];
  }
  return out;
}

// A complete fix for one build: the commands, and a sentence that names the
// build, why it was chosen and the driver it needs.
Fix fix_for(const Candidate& candidate, const std::string& why,
            const std::vector<DeviceInfo>& devices,
            const std::optional<compat::DriverVersion>& driver,
            const InstalledTorchStack& installed, const kb::KnowledgeBase& kb) {
  const auto& image = *candidate.image;
  Fix fix;
  const kb::ComponentRelease* xformers = nullptr;
  bool remove_xformers = false;
  if (installed.xformers) {
    xformers = xformers_for(image.version->version, devices, kb);
    remove_xformers = xformers == nullptr;
  }
  add_install(fix, image, installed, xformers, remove_xformers);
  fix.summary = "Install torch " + build_name(image) +
                companions_phrase(image, installed, xformers) + ": " + why;
  if (remove_xformers) {
    fix.summary += "; no xformers release for torch " + image.version->version + " runs on " +
                   devices_phrase(devices) +
                   ", so it is removed (ComfyUI and diffusers fall back to PyTorch's own "
                   "attention)";
  }
  if (candidate.needed_driver) {
    fix.driver = candidate.needed_driver->to_string();
    if (why.find("driver to " + fix.driver) != std::string::npos) {
      // The reason already names the driver update.
    } else if (driver && *driver < *candidate.needed_driver) {
      fix.summary += ". It needs " + nvidia_driver_words(installed.driver_family) + " " +
                     fix.driver + " or newer; update driver " + driver->to_string() + " first";
    } else {
      fix.summary += ". It needs " + nvidia_driver_words(installed.driver_family) + " " +
                     fix.driver + " or newer";
    }
  }
  if (!candidate.native_everywhere)
    fix.summary += " (it runs by JIT-compiling PTX, so the first run is slow)";
  return fix;
}

std::string oldest_phrase(const std::vector<const Candidate*>& all) {
  const Candidate* oldest = pick(all, false, std::nullopt);
  return oldest ? build_name(*oldest->image) : "";
}

}  // namespace

std::optional<Fix> same_version_within_driver(const std::vector<DeviceInfo>& devices,
                                              const compat::DriverVersion& driver,
                                              const InstalledTorchStack& installed,
                                              const kb::KnowledgeBase& kb) {
  if (installed.torch.empty() || devices.empty()) return std::nullopt;
  std::vector<std::vector<kb::TorchImage>> per_device;
  for (const auto& device : devices)
    per_device.push_back(kb.torch_images_for(device.cc, installed.platform()));
  const auto candidates = candidates_for(devices, per_device);
  std::vector<const Candidate*> same;
  for (const auto& candidate : candidates) {
    if (candidate.image->version->version == release_of(installed.torch) &&
        fits(candidate, driver) && build_name(*candidate.image) != installed.torch)
      same.push_back(&candidate);
  }
  const Candidate* best = pick(same, true, driver);
  if (!best) return std::nullopt;
  return fix_for(*best,
                 "the same torch built for a CUDA that driver " + driver.to_string() + " runs",
                 devices, driver, installed, kb);
}

const kb::ComponentRelease* xformers_for(const std::string& torch_version,
                                         const std::vector<DeviceInfo>& devices,
                                         const kb::KnowledgeBase& kb) {
  const kb::Component* xformers = kb.component_for("xformers");
  if (!xformers) return nullptr;
  const kb::ComponentRelease* best = nullptr;
  for (const auto& release : xformers->releases) {
    if (!env::satisfies(torch_version, release.torch)) continue;
    const bool runs = std::all_of(devices.begin(), devices.end(), [&](const DeviceInfo& device) {
      const auto verdict = compat::judge_arch_list(release.archs, device.cc);
      return verdict == compat::Verdict::native || verdict == compat::Verdict::ptx_jit;
    });
    if (runs && (!best || env::compare_versions(release.version, best->version) > 0))
      best = &release;
  }
  return best;
}

namespace {

// A GPU on a platform PyPI's torch wheels the knowledge base lists are not
// built for (Jetson; any aarch64 machine): said so, nothing to install.
std::optional<Fix> platform_without_listed_builds(const std::vector<DeviceInfo>& devices,
                                                  const kb::KnowledgeBase& kb) {
  for (const auto& device : devices) {
    Fix fix;
    const auto* architecture = kb.architecture(device.cc);
    if (architecture && architecture->platform == kb::DriverPlatform::jetson) {
      fix.summary = std::string(kJetson) + "; PyPI's torch wheels are not built for it";
      return fix;
    }
    if (device.machine == "aarch64") {
      fix.summary = device.name +
                    " sits in an aarch64 machine, and the knowledge base lists "
                    "PyTorch's x86_64 builds only: install PyTorch on that machine, where pip "
                    "picks its aarch64 wheels (https://pytorch.org/get-started/locally/)";
      return fix;
    }
  }
  return std::nullopt;
}

// No one build runs on every GPU: for one GPU, none is listed at all; for
// several, what each needs, one fix apiece.
Fix no_build_runs_on_all(const std::vector<DeviceInfo>& devices,
                         const std::vector<std::vector<kb::TorchImage>>& per_device,
                         const std::optional<compat::DriverVersion>& driver,
                         const InstalledTorchStack& installed, const kb::KnowledgeBase& kb) {
  Fix fix;
  if (devices.size() == 1) {
    // Older than every PyTorch the knowledge base lists: nothing to install,
    // and no alternative to offer.
    fix.summary = "No PyTorch build in the knowledge base runs on " + devices.front().name + " (" +
                  devices.front().cc.sm_name() + "); the GPU is older than every listed build";
    return fix;
  }
  std::string needs;
  for (size_t d = 0; d < devices.size(); ++d) {
    if (d) needs += "; ";
    Fix single = torch_stack_fix({devices[d]}, driver, installed, kb);
    if (per_device[d].empty()) {
      needs += devices[d].name + " (" + devices[d].cc.sm_name() +
               ") has no PyTorch build in the knowledge base";
    } else {
      needs += devices[d].name + " (" + devices[d].cc.sm_name() + ") needs " +
               single.requirements.front();
      single.summary = "For " + devices[d].name + " alone: " + single.summary;
      fix.alternatives.push_back(std::move(single));
    }
  }
  fix.summary = "No PyTorch build runs on all of " + devices_phrase(devices) + ": " + needs +
                ". Use one environment per GPU (choose the GPU with CUDA_VISIBLE_DEVICES)";
  return fix;
}

// "sm_120", "sm_89 and sm_120": each architecture once, in the devices' order.
std::string sm_list_of(const std::vector<DeviceInfo>& devices) {
  std::string out;
  std::set<std::string> seen;
  for (const auto& device : devices) {
    if (seen.insert(device.cc.sm_name()).second)
      out += (out.empty() ? "" : " and ") + device.cc.sm_name();
  }
  return out;
}

// An old GPU is one below every architecture the installed build has (a GTX
// 1080 under a cu128 torch): it wants the newest build that still runs it,
// not the oldest. Without a known installed build, a GPU is old when every
// build for it is older than the installed version.
bool older_than_the_installed_build(const std::vector<DeviceInfo>& devices,
                                    const std::vector<const Candidate*>& all,
                                    const InstalledTorchStack& installed,
                                    const kb::KnowledgeBase& kb) {
  if (installed.torch.empty()) return false;
  if (const auto* build = kb.torch_build(installed.torch); build && !build->sass.empty()) {
    const auto lowest = compat::ComputeCapability::from_sm(build->sass.front());
    return std::any_of(devices.begin(), devices.end(),
                       [&](const DeviceInfo& d) { return d.cc < lowest; });
  }
  return std::all_of(all.begin(), all.end(), [&](const Candidate* c) {
    return env::compare_versions(c->image->version->version, installed.torch) < 0;
  });
}

// To keep xformers: the newest build of `pool` for which an xformers release
// runs, when the primary has none; nullptr when none or not needed.
const Candidate* build_keeping_xformers(const std::vector<const Candidate*>& pool,
                                        const Candidate& primary,
                                        const std::vector<DeviceInfo>& devices,
                                        const std::optional<compat::DriverVersion>& driver,
                                        const InstalledTorchStack& installed,
                                        const kb::KnowledgeBase& kb) {
  if (!installed.xformers || xformers_for(primary.image->version->version, devices, kb))
    return nullptr;
  const Candidate* keeping = nullptr;
  for (const auto* c : pool) {
    if (!xformers_for(c->image->version->version, devices, kb)) continue;
    if (!keeping ||
        env::compare_versions(c->image->version->version, keeping->image->version->version) > 0)
      keeping = c;
  }
  if (!keeping) return nullptr;
  std::vector<const Candidate*> same;
  for (const auto* c : pool) {
    if (c->image->version == keeping->image->version) same.push_back(c);
  }
  return pick(same, true, driver);
}

}  // namespace

std::string nvidia_driver_words(kb::DriverFamily family) {
  return family == kb::DriverFamily::windows_driver ? "NVIDIA Windows driver" : "NVIDIA driver";
}

Fix torch_stack_fix(const std::vector<DeviceInfo>& devices,
                    const std::optional<compat::DriverVersion>& driver,
                    const InstalledTorchStack& installed, const kb::KnowledgeBase& kb) {
  if (devices.empty()) return {};
  if (auto fix = platform_without_listed_builds(devices, kb)) return *fix;

  std::vector<std::vector<kb::TorchImage>> per_device;
  for (const auto& device : devices)
    per_device.push_back(kb.torch_images_for(device.cc, installed.platform()));
  const auto candidates = candidates_for(devices, per_device);
  std::vector<const Candidate*> all;
  std::vector<const Candidate*> within_driver;
  for (const auto& candidate : candidates) {
    all.push_back(&candidate);
    if (fits(candidate, driver)) within_driver.push_back(&candidate);
  }
  if (all.empty()) return no_build_runs_on_all(devices, per_device, driver, installed, kb);

  const std::string sm_list = sm_list_of(devices);
  const bool old_gpu = older_than_the_installed_build(devices, all, installed, kb);
  const auto& pool = within_driver.empty() ? all : within_driver;
  const Candidate* primary = pick(pool, true, driver);
  std::string why;
  if (old_gpu) {
    why = "the newest PyTorch that still runs on " + sm_list + " (newer builds dropped it)";
  } else {
    why = "the newest build for " + sm_list +
          (driver && !within_driver.empty() ? " that driver " + driver->to_string() + " runs" : "");
    const std::string oldest = oldest_phrase(all);
    if (!oldest.empty() && oldest != build_name(*primary->image))
      why += "; " + sm_list + " runs from torch " + oldest + " on";
  }
  if (!installed.torch.empty() && build_name(*primary->image) == installed.torch) {
    why = "torch " + installed.torch + " itself is built for " + sm_list +
          ", so reinstall the stack to bring every member in line";
  }
  Fix fix = fix_for(*primary, why, devices, driver, installed, kb);

  // The smallest change for a new GPU: its oldest build, when that differs.
  if (!old_gpu) {
    const Candidate* oldest = pick(pool, false, driver);
    if (oldest && oldest->image->version != primary->image->version) {
      fix.alternatives.push_back(
          fix_for(*oldest, "the oldest build for " + sm_list + ", the smallest change", devices,
                  driver, installed, kb));
    }
  }
  if (const Candidate* keeping =
          build_keeping_xformers(pool, *primary, devices, driver, installed, kb)) {
    fix.alternatives.push_back(fix_for(
        *keeping, "the newest build with an xformers release for " + sm_list + ", to keep xformers",
        devices, driver, installed, kb));
  }
  // Within a driver that cannot run the newest build, updating the driver is
  // the other way.
  if (driver && !within_driver.empty() && within_driver.size() < all.size()) {
    const Candidate* newest = pick(all, true, std::nullopt);
    if (newest && newest->image->version != primary->image->version && newest->needed_driver) {
      fix.alternatives.push_back(fix_for(*newest,
                                         "the newest build for " + sm_list +
                                             ", after updating the " +
                                             nvidia_driver_words(installed.driver_family) + " to " +
                                             newest->needed_driver->to_string() + " or newer",
                                         devices, std::nullopt, installed, kb));
    }
  }
  return fix;
}

}  // namespace archfit::check
