#include "rules.hpp"

#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "binary/summary.hpp"
#include "compat_error.hpp"

namespace archfit::compat {

using binary::ArchKey;
using binary::Image;
using binary::ImageKind;
using binary::Variant;

namespace {

// Orders candidate images as the runtime would prefer them among equals:
// the highest capability (closest to the device), then the variant built
// most narrowly for it, then, for PTX, the newest ISA. The driver's exact
// tie-break is not documented; the verdict never depends on it.
int specificity(Variant variant) {
  switch (variant) {
    case Variant::arch_specific:
      return 2;
    case Variant::family_specific:
      return 1;
    case Variant::plain:
      break;
  }
  return 0;
}

auto preference(const Image& image) {
  return std::make_tuple(image.sm, specificity(image.variant), image.ptx_isa.major,
                         image.ptx_isa.minor);
}

bool isa_less(binary::Version a, binary::Version b) {
  return std::tie(a.major, a.minor) < std::tie(b.major, b.minor);
}

std::string join(const std::vector<std::string>& items, std::string_view separator) {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += separator;
    out += item;
  }
  return out;
}

std::string device_words(ComputeCapability device) {
  return device.sm_name() + " (" + device.to_string() + ")";
}

std::string kind_words(ImageKind kind) { return kind == ImageKind::ptx ? "PTX" : "SASS"; }

// What a binary holds, collected once per distinct arch: libraries carry
// thousands of images of a handful of archs.
struct Inventory {
  std::set<ArchKey> sass;
  std::map<ArchKey, std::set<std::pair<uint16_t, uint16_t>>> ptx;  // arch → ISA versions
  std::set<std::string> link_inputs;                               // "sm_80", "lto_90"
  std::set<uint16_t> unknown_kinds;
};

Inventory take_inventory(const binary::FileScan& scan) {
  Inventory inventory;
  for (const Image& image : scan.images) {
    const ArchKey key{image.sm, image.variant};
    if (image.relocatable || image.kind == ImageKind::lto) {
      inventory.link_inputs.insert(image.arch_name());
    } else if (image.kind == ImageKind::sass) {
      inventory.sass.insert(key);
    } else if (image.kind == ImageKind::ptx) {
      inventory.ptx[key].insert({image.ptx_isa.major, image.ptx_isa.minor});
    } else {
      inventory.unknown_kinds.insert(image.kind_code);
    }
  }
  return inventory;
}

std::string ptx_with_isas(const ArchKey& key, const std::set<std::pair<uint16_t, uint16_t>>& isas) {
  std::vector<std::string> versions;
  for (const auto& [major, minor] : isas) {
    versions.push_back(std::to_string(major) + "." + std::to_string(minor));
  }
  return binary::arch_label("compute_", key) + " (ISA " + join(versions, ", ") + ")";
}

std::string describe(const Inventory& inventory, ComputeCapability device, const Driver& driver) {
  std::vector<std::string> sass;
  for (const auto& key : inventory.sass) sass.push_back(binary::arch_label("sm_", key));
  std::vector<std::string> ptx;
  for (const auto& [key, isas] : inventory.ptx) ptx.push_back(ptx_with_isas(key, isas));

  std::string out = sass.empty() ? "no SASS" : "SASS " + join(sass, " ");
  out += ptx.empty() ? ", no PTX" : ", PTX " + join(ptx, " ");
  if (!inventory.link_inputs.empty()) {
    out += ", device-link inputs " +
           join({inventory.link_inputs.begin(), inventory.link_inputs.end()}, " ");
  }
  if (!inventory.unknown_kinds.empty()) {
    std::vector<std::string> kinds;
    for (const auto kind : inventory.unknown_kinds) kinds.push_back(std::to_string(kind));
    out += ", entries of unknown kind " + join(kinds, " ");
  }
  out += "; device is " + device_words(device);
  if (!inventory.ptx.empty() && driver.max_ptx_isa) {
    out += "; driver " +
           (driver.version.empty() ? std::string("(version unknown)") : driver.version) +
           " knows PTX ISA up to " + driver.max_ptx_isa->to_string();
  }
  return out;
}

// One reason per distinct arch that cannot run, for the no-image and
// ptx-jit explanations.
std::vector<std::string> mismatches(const binary::FileScan& scan, ComputeCapability device,
                                    ImageKind kind) {
  std::set<ArchKey> seen;
  std::vector<std::string> reasons;
  for (const Image& image : scan.images) {
    if (image.kind != kind || image.relocatable) continue;
    if (!seen.insert({image.sm, image.variant}).second) continue;
    const Arch arch = arch_of(image);
    const bool fits =
        kind == ImageKind::sass ? sass_runs_on(arch, device) : ptx_jits_for(arch, device);
    if (!fits) reasons.push_back(where_it_runs(kind, arch));
  }
  return reasons;
}

std::string driver_words(const Driver& driver) {
  return driver.version.empty() ? "the driver" : "driver " + driver.version;
}

std::string explain(Verdict verdict, const binary::FileScan& scan, const Inventory& inventory,
                    const std::optional<std::size_t>& chosen, ComputeCapability device,
                    const Driver& driver, bool assumes_driver) {
  const std::string on = device_words(device);
  const Image* image = chosen ? &scan.images[*chosen] : nullptr;
  switch (verdict) {
    case Verdict::native:
      return "The runtime loads " + image->arch_name() + " SASS on " + on + ".";
    case Verdict::ptx_jit: {
      std::string out = "No SASS image runs on " + on + ", so the driver JIT-compiles " +
                        image->arch_name() + " PTX (ISA " + image->ptx_isa.to_string() +
                        ") for it. The first run compiles, which can take minutes; the driver "
                        "caches the result in ~/.nv/ComputeCache (on Windows in "
                        "%APPDATA%\\NVIDIA\\ComputeCache; CUDA_CACHE_PATH moves the cache, "
                        "CUDA_CACHE_MAXSIZE sets its size, and a cache too small compiles "
                        "again on every run).";
      if (assumes_driver) {
        out += " This assumes the driver knows PTX ISA " + image->ptx_isa.to_string() +
               "; its version is unknown.";
      }
      return out;
    }
    case Verdict::ptx_too_new_for_driver:
      return "No SASS image runs on " + on + "; " + image->arch_name() +
             " PTX would, but it is ISA " + image->ptx_isa.to_string() + " and " +
             driver_words(driver) + " JIT-compiles PTX only up to ISA " +
             driver.max_ptx_isa->to_string() +
             " (CUDA_ERROR_UNSUPPORTED_PTX_VERSION). A newer driver fixes this.";
    case Verdict::no_image: {
      std::vector<std::string> reasons = mismatches(scan, device, ImageKind::sass);
      const auto ptx_reasons = mismatches(scan, device, ImageKind::ptx);
      reasons.insert(reasons.end(), ptx_reasons.begin(), ptx_reasons.end());
      if (inventory.ptx.empty()) reasons.push_back("there is no PTX for the driver to JIT-compile");
      if (!inventory.unknown_kinds.empty()) {
        reasons.push_back("entries of a kind archfit does not know were not judged");
      }
      return "No image here runs on " + on + ": " + join(reasons, "; ") + ".";
    }
    case Verdict::relocatable_only:
      return "Holds only device-link inputs (" +
             join({inventory.link_inputs.begin(), inventory.link_inputs.end()}, " ") +
             "): relocatable code or LTO-IR that a later device link consumes; the runtime "
             "never launches it.";
    case Verdict::driver_too_old:
    case Verdict::wrong_platform:
    case Verdict::no_cuda_build:
    case Verdict::missing_library:
    case Verdict::unknown:
      // Judged over a whole stack (check/), never from one binary's images.
      return {};
    case Verdict::no_device_code:
      break;
  }
  return "Holds no CUDA device code.";
}

}  // namespace

bool sass_runs_on(const Arch& image, ComputeCapability device) {
  switch (image.variant) {
    case Variant::arch_specific:
      return image.cc == device;
    case Variant::family_specific:
      return same_family(image.cc, device) && device >= image.cc;
    case Variant::plain:
      break;
  }
  return image.cc.major == device.major && device.minor >= image.cc.minor;
}

bool ptx_jits_for(const Arch& image, ComputeCapability device) {
  // `a` and `f` PTX uses features outside the forward-compatible ISA, so
  // it keeps the limits its SASS would have.
  if (image.variant != Variant::plain) return sass_runs_on(image, device);
  return device >= image.cc;
}

std::optional<bool> driver_knows_ptx_isa(const Driver& driver, binary::Version isa) {
  if (!driver.max_ptx_isa) return std::nullopt;
  return !isa_less(*driver.max_ptx_isa, isa);
}

std::string where_it_runs(ImageKind kind, const Arch& arch) {
  const std::string image =
      (kind == ImageKind::ptx ? "compute_" : "sm_") + std::to_string(arch.cc.sm()) +
      std::string(binary::variant_suffix(arch.variant)) + " " + kind_words(kind) + " runs only on ";
  const std::string cc = arch.cc.to_string();
  switch (arch.variant) {
    case Variant::arch_specific:
      return image + "exactly " + cc;
    case Variant::family_specific:
      return image + "the " + family_name(arch.cc) + " family at " + cc + " or above";
    case Variant::plain:
      break;
  }
  if (kind == ImageKind::ptx) return image + "devices at " + cc + " or above";
  return image + family_name(arch.cc) + " devices at " + cc + " or above";
}

std::string_view to_string(ImageFit fit) {
  switch (fit) {
    case ImageFit::runs:
      return "runs";
    case ImageFit::jit:
      return "jit";
    case ImageFit::ptx_too_new:
      return "ptx-too-new";
    case ImageFit::wrong_arch:
      return "wrong-arch";
    case ImageFit::link_input:
      return "link-input";
    case ImageFit::unrecognised:
      break;
  }
  return "unrecognised";
}

ImageFit judge_image(const Image& image, ComputeCapability device, const Driver& driver) {
  if (image.relocatable || image.kind == ImageKind::lto) return ImageFit::link_input;
  // SM numbers start at 10 (sm_10); a smaller one is a field archfit misread.
  if (image.sm < 10) return ImageFit::unrecognised;
  const Arch arch = arch_of(image);
  switch (image.kind) {
    case ImageKind::sass:
      return sass_runs_on(arch, device) ? ImageFit::runs : ImageFit::wrong_arch;
    case ImageKind::ptx:
      if (!ptx_jits_for(arch, device)) return ImageFit::wrong_arch;
      return driver_knows_ptx_isa(driver, image.ptx_isa).value_or(true) ? ImageFit::jit
                                                                        : ImageFit::ptx_too_new;
    case ImageKind::lto:
    case ImageKind::unknown:
      break;
  }
  return ImageFit::unrecognised;
}

BinaryJudgement judge_binary(const binary::FileScan& scan, ComputeCapability device,
                             const Driver& driver) {
  BinaryJudgement judgement;
  judgement.scan_incomplete = scan.unreadable || !scan.problems.empty();

  std::optional<std::size_t> best_sass, best_jit, best_too_new;
  const auto consider = [&](std::optional<std::size_t>& best, std::size_t index) {
    if (!best || preference(scan.images[*best]) < preference(scan.images[index])) best = index;
  };
  for (std::size_t i = 0; i < scan.images.size(); ++i) {
    switch (judge_image(scan.images[i], device, driver)) {
      case ImageFit::runs:
        consider(best_sass, i);
        break;
      case ImageFit::jit:
        consider(best_jit, i);
        break;
      case ImageFit::ptx_too_new:
        consider(best_too_new, i);
        break;
      case ImageFit::wrong_arch:
      case ImageFit::link_input:
      case ImageFit::unrecognised:
        break;
    }
  }

  const Inventory inventory = take_inventory(scan);
  const bool launchable =
      !inventory.sass.empty() || !inventory.ptx.empty() || !inventory.unknown_kinds.empty();
  // The runtime prefers SASS over PTX, so a PTX verdict only when no SASS runs.
  if (best_sass) {
    judgement.verdict = Verdict::native;
    judgement.chosen = best_sass;
  } else if (best_jit) {
    judgement.verdict = Verdict::ptx_jit;
    judgement.chosen = best_jit;
    judgement.assumes_driver = !driver.max_ptx_isa;
  } else if (best_too_new) {
    judgement.verdict = Verdict::ptx_too_new_for_driver;
    judgement.chosen = best_too_new;
  } else if (launchable) {
    judgement.verdict = Verdict::no_image;
  } else if (!inventory.link_inputs.empty()) {
    judgement.verdict = Verdict::relocatable_only;
  } else {
    judgement.verdict = Verdict::no_device_code;
  }

  if (judgement.chosen) judgement.chosen_arch = scan.images[*judgement.chosen].arch_name();
  for (const auto& key : inventory.sass) judgement.sass.push_back(binary::arch_label("sm_", key));
  for (const auto& [key, isas] : inventory.ptx) {
    judgement.ptx.push_back(binary::arch_label("compute_", key));
  }
  judgement.evidence = describe(inventory, device, driver);
  if (judgement.scan_incomplete) {
    judgement.evidence += "; scan incomplete (" + std::to_string(scan.problems.size()) +
                          " problems" + (scan.unreadable ? ", file unreadable" : "") + ")";
  }
  judgement.explanation = explain(judgement.verdict, scan, inventory, judgement.chosen, device,
                                  driver, judgement.assumes_driver);
  return judgement;
}

BinaryJudgement judge_binary(const binary::FileScan& scan, ComputeCapability device,
                             const Driver& driver, const Placement& placement) {
  BinaryJudgement judgement = judge_binary(scan, device, driver);
  const auto& built_for = placement.binary_machine;
  const auto& runs_on = placement.device_machine;
  if (built_for.empty() || runs_on.empty() || built_for == runs_on) return judgement;
  judgement.verdict = Verdict::wrong_platform;
  judgement.evidence = std::string("built for ") + std::string(built_for) + "; " +
                       std::string(placement.device_name) + " sits in an " + std::string(runs_on) +
                       " machine";
  judgement.explanation = std::string("The dynamic loader refuses a library built for ") +
                          std::string(built_for) + " on " + std::string(runs_on) +
                          " before any GPU code is looked at.";
  return judgement;
}

std::optional<std::size_t> worst_binary(std::span<const BinaryJudgement> binaries) {
  std::optional<std::size_t> worst;
  for (std::size_t i = 0; i < binaries.size(); ++i) {
    if (!worst || worse(binaries[i].verdict, binaries[*worst].verdict)) worst = i;
  }
  return worst;
}

Verdict judge_arch_list(std::span<const std::string> targets, ComputeCapability device) {
  bool any = false, runs = false, jits = false;
  for (const std::string& target : targets) {
    const bool ptx = target.starts_with("compute_");
    if (!ptx && !target.starts_with("sm_")) continue;
    Arch arch;
    try {
      arch = parse_arch(target);
    } catch (const CompatError&) {
      continue;
    }
    any = true;
    if (ptx ? ptx_jits_for(arch, device) : sass_runs_on(arch, device)) (ptx ? jits : runs) = true;
  }
  if (!any) return Verdict::no_device_code;
  return runs ? Verdict::native : jits ? Verdict::ptx_jit : Verdict::no_image;
}

}  // namespace archfit::compat
