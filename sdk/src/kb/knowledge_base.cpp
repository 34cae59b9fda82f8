// The questions advice asks of a loaded knowledge base.
#include "knowledge_base.hpp"

#include "compat/rules.hpp"

#include <algorithm>
#include <numeric>

#include "gpu_names.hpp"

namespace archfit::kb {
namespace {

std::string fill_arch_list(std::string text, ComputeCapability cc) {
  static constexpr std::string_view kPlaceholder = "{arch_list}";
  const auto value = cc.to_string();
  for (auto at = text.find(kPlaceholder); at != std::string::npos;
       at = text.find(kPlaceholder, at + value.size())) {
    text.replace(at, kPlaceholder.size(), value);
  }
  return text;
}

}  // namespace

std::string_view to_string(Confidence confidence) {
  return confidence == Confidence::inferred ? "inferred" : "quoted";
}

std::string_view to_string(DriverPlatform platform) {
  return platform == DriverPlatform::jetson ? "jetson" : "standard";
}

ResolvedGpu KnowledgeBase::resolve_gpu(std::string_view query) const {
  const auto words = gpu_name_words(query);
  const auto key = std::accumulate(words.begin(), words.end(), std::string());
  const auto found = [&](const std::string& k, ResolvedGpu::How how) -> std::optional<ResolvedGpu> {
    const auto it = gpu_keys_.find(k);
    if (it == gpu_keys_.end()) return std::nullopt;
    const auto& entry = gpus_[it->second];
    if (how == ResolvedGpu::How::name && gpu_name_key(entry.name) != k)
      how = ResolvedGpu::How::alias;
    return ResolvedGpu{entry.name, entry.cc, how, &entry};
  };
  if (auto exact = found(key, ResolvedGpu::How::name)) return *exact;
  if (const auto cc = parse_compute_capability(query)) {
    return ResolvedGpu{"sm_" + std::to_string(cc->sm()), *cc, ResolvedGpu::How::capability,
                       nullptr};
  }
  // "NVIDIA H100 80GB HBM3": the longest entry the name starts with, whole words only.
  std::string prefix;
  std::vector<std::string> prefixes;
  for (size_t i = 0; i + 1 < words.size(); ++i) prefixes.push_back(prefix += words[i]);
  for (auto it = prefixes.rbegin(); it != prefixes.rend(); ++it) {
    if (auto match = found(*it, ResolvedGpu::How::prefix)) {
      match->how = ResolvedGpu::How::prefix;
      return *match;
    }
  }
  throw UnknownGpuError(std::string(query), closest_gpu_names(query));
}

std::vector<std::string> KnowledgeBase::closest_gpu_names(std::string_view query,
                                                          size_t count) const {
  const auto key = gpu_name_key(query);
  std::vector<std::pair<size_t, size_t>> scored;  // (distance, entry index)
  scored.reserve(gpus_.size());
  for (size_t i = 0; i < gpus_.size(); ++i) scored.emplace_back(SIZE_MAX, i);
  for (const auto& [entry_key, index] : gpu_keys_) {
    auto distance = edit_distance(key, entry_key);
    // A name that contains what was typed ("5090" in "rtx5090") is close.
    if (!key.empty() && entry_key.find(key) != std::string::npos)
      distance = std::min<size_t>(distance, 1);
    scored[index].first = std::min(scored[index].first, distance);
  }
  std::stable_sort(scored.begin(), scored.end());
  std::vector<std::string> names;
  for (const auto& [distance, index] : scored) {
    if (names.size() == count) break;
    names.push_back(gpus_[index].name);
  }
  return names;
}

std::optional<DriverVersion> KnowledgeBase::min_driver_for_ptx_isa(PtxIsa isa,
                                                                   DriverFamily family) const {
  const auto listed = std::find_if(ptx_isa_.begin(), ptx_isa_.end(),
                                   [&](const auto& entry) { return entry.isa == isa; });
  if (listed == ptx_isa_.end()) return std::nullopt;
  // An ISA whose CUDA release shipped no driver is first known by the next one that did.
  for (auto it = listed; it != ptx_isa_.end(); ++it) {
    if (!it->min_driver) continue;
    if (family == DriverFamily::linux_driver) return it->min_driver;
    if (auto windows = toolkit_driver(it->cuda, family)) return windows;
  }
  return std::nullopt;
}

std::optional<PtxIsa> KnowledgeBase::max_ptx_isa_for_driver(const DriverVersion& driver,
                                                            DriverFamily family) const {
  std::optional<PtxIsa> best;
  for (const auto& entry : ptx_isa_) {
    if (!entry.min_driver) continue;
    const auto needed = family == DriverFamily::linux_driver ? entry.min_driver
                                                             : toolkit_driver(entry.cuda, family);
    if (needed && *needed <= driver) best = entry.isa;
  }
  return best;
}

std::optional<PtxIsa> KnowledgeBase::max_ptx_isa_for_driver(std::string_view driver,
                                                            DriverFamily family) const {
  const auto version = parse_driver_version(driver);
  if (!version) {
    throw KbError("\"" + std::string(driver) + "\" is not a driver version like 570.86.16");
  }
  return max_ptx_isa_for_driver(*version, family);
}

std::optional<DriverVersion> KnowledgeBase::cuda_floor_for_major(uint32_t cuda_major,
                                                                 DriverFamily family) const {
  if (family == DriverFamily::windows_driver) {
    const auto major = std::to_string(cuda_major);
    for (const auto& floor : driver_floors_) {
      if (floor.cuda == major) return floor.windows_driver;
    }
    return std::nullopt;
  }
  for (const auto& floor : cuda_floors_) {
    if (floor.cuda_major == cuda_major) return floor.min_driver;
  }
  return std::nullopt;
}

std::optional<DriverVersion> KnowledgeBase::toolkit_driver(std::string_view cuda,
                                                           DriverFamily family) const {
  for (const auto& release : toolkit_drivers_) {
    if (release.cuda == cuda) return release.of(family);
  }
  return std::nullopt;
}

std::optional<DriverVersion> KnowledgeBase::driver_reporting_cuda(std::string_view cuda,
                                                                  DriverFamily family) const {
  const auto reported = two_part_version(cuda);
  if (!reported) return std::nullopt;
  const ReleaseDrivers* newest = nullptr;
  for (const auto& release : toolkit_drivers_) {  // by CUDA release
    if (two_part_version(release.cuda) <= reported) newest = &release;
  }
  if (!newest) return std::nullopt;
  return newest->of(family);
}

const CudaTag* KnowledgeBase::cuda_tag(std::string_view tag) const {
  for (const auto& entry : cuda_tags_) {
    if (entry.tag == tag) return &entry;
  }
  return nullptr;
}

const TorchBuild* KnowledgeBase::torch_build(std::string_view version, std::string_view tag) const {
  if (const auto plus = version.find('+'); plus != std::string_view::npos) {
    if (tag.empty()) tag = version.substr(plus + 1);
    version = version.substr(0, plus);
  }
  for (const auto& release : torch_releases_) {
    const bool matches = release.release == version ||
                         std::any_of(release.versions.begin(), release.versions.end(),
                                     [&](const TorchVersion& v) { return v.version == version; });
    if (!matches) continue;
    for (const auto& build : release.builds) {
      if (build.tag == tag) return &build;
    }
    return nullptr;
  }
  return nullptr;
}

const ArchitectureEntry* KnowledgeBase::architecture(ComputeCapability cc) const {
  const auto it = std::find_if(architectures_.begin(), architectures_.end(),
                               [&](const auto& entry) { return entry.cc == cc; });
  return it == architectures_.end() ? nullptr : &*it;
}

std::optional<DriverVersion> KnowledgeBase::first_driver_for(ComputeCapability cc,
                                                             DriverFamily family) const {
  const auto* entry = architecture(cc);
  if (!entry || !entry->min_driver) return std::nullopt;
  if (family == DriverFamily::linux_driver) return entry->min_driver;
  return toolkit_driver(entry->first_cuda, family);
}

std::vector<TorchImage> KnowledgeBase::torch_images_for(ComputeCapability cc,
                                                        TorchPlatform platform) const {
  // The rule table judges (docs/design.md, decision 3); torch's lists hold plain archs.
  auto plain = [](uint32_t sm) {
    return compat::Arch{ComputeCapability::from_sm(sm), binary::Variant::plain};
  };
  std::vector<TorchImage> images;
  for (const auto& release : torch_releases_) {
    for (const auto& version : release.versions) {
      for (const auto& build : release.builds) {
        uint32_t sass = 0;
        for (auto sm : build.sass) {
          if (compat::sass_runs_on(plain(sm), cc)) sass = std::max(sass, sm);
        }
        const CudaTag* tag = cuda_tag(build.tag);
        uint32_t ptx = 0;
        for (auto sm : build.ptx) {
          if (platform.windows_wheels && !tag->windows_ptx) break;
          if (compat::ptx_jits_for(plain(sm), cc)) ptx = std::max(ptx, sm);
        }
        if (!sass && !ptx) continue;
        TorchImage image;
        image.version = &version;
        image.release = &release;
        image.build = &build;
        image.tag = tag;
        image.via_ptx = sass == 0;
        image.arch = sass ? sass : ptx;
        const auto major = static_cast<uint32_t>(std::stoul(image.tag->cuda));
        image.min_driver = *cuda_floor_for_major(major);  // the loader checked it exists
        image.needed_driver = image.via_ptx ? image.tag->toolkit_driver : image.min_driver;
        if (platform.driver == DriverFamily::windows_driver) {
          // Every number the Windows column has; none where drivers.yaml lacks it.
          const auto floor = cuda_floor_for_major(major, platform.driver);
          if (floor) image.min_driver = *floor;
          image.needed_driver =
              image.via_ptx ? toolkit_driver(image.tag->cuda, platform.driver) : floor;
        }
        // A driver older than the first CUDA release that targets this device
        // does not know the device at all, whatever the tag's floor says: an
        // RTX 50 (sm_120, first in CUDA 12.8) needs 570, not cu128's floor 525.
        if (const auto first = first_driver_for(cc, platform.driver);
            first && image.needed_driver && *image.needed_driver < *first) {
          image.needed_driver = first;
        }
        image.on_pypi = release.pypi_tag == build.tag;
        images.push_back(image);
      }
    }
  }
  return images;
}

const Component* KnowledgeBase::component_for(std::string_view distribution) const {
  for (const auto& component : components_) {
    const auto& names = component.distributions;
    if (std::find(names.begin(), names.end(), distribution) != names.end()) return &component;
  }
  return nullptr;
}

std::optional<ComponentAdvice> KnowledgeBase::component_advice(std::string_view distribution,
                                                               ComputeCapability cc) const {
  const Component* component = component_for(distribution);
  if (!component) return std::nullopt;
  ComponentAdvice advice;
  advice.component = component;
  for (const auto& fix : component->fixes) {
    if ((fix.min_cc && cc < *fix.min_cc) || (fix.max_cc && *fix.max_cc < cc)) continue;
    advice.fixes.push_back(&fix);
    for (const auto& command : fix.commands) advice.commands.push_back(fill_arch_list(command, cc));
  }
  if (!component->rebuild.empty()) advice.rebuild_command = fill_arch_list(component->rebuild, cc);
  return advice;
}

}  // namespace archfit::kb
