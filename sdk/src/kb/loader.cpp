// Reads the YAML files of a knowledge base into KnowledgeBase and checks
// every entry; the first problem is thrown as a KbFormatError that names the
// file, line and field (yaml_file.hpp).
#include <algorithm>
#include <cctype>
#include <charconv>
#include <map>
#include <set>

#include "compat/arch.hpp"
#include "compat/compat_error.hpp"
#include "gpu_names.hpp"
#include "knowledge_base.hpp"
#include "yaml_file.hpp"

namespace archfit::kb {
namespace {

namespace fs = std::filesystem;

// A distribution name as pip compares names: lower case, digits and '-'.
bool written_as_pip_compares(std::string_view name) {
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::islower(static_cast<unsigned char>(c)) ||
           std::isdigit(static_cast<unsigned char>(c)) || c == '-';
  });
}

}  // namespace

// Fills a KnowledgeBase; a friend of it.
class Loader {
 public:
  Loader(fs::path dir, KbParts parts) : parts_(parts) { kb_.dir_ = std::move(dir); }

  KnowledgeBase load() {
    // ptx_isa.yaml first: torch.yaml's tags need its CUDA floors, and
    // gpus.yaml's architectures are checked against both.
    load_ptx_isa();
    load_torch();
    load_gpus();
    if (fs::exists(kb_.dir_ / "drivers.yaml")) load_drivers();
    if (fs::exists(kb_.dir_ / "components.yaml")) load_components();
    if (parts_ == KbParts::everything && fs::exists(kb_.dir_ / "errors.yaml")) load_errors();
    if (fs::exists(kb_.dir_ / "packages.yaml")) load_packages();
    return std::move(kb_);
  }

 private:
  void load_gpus() {
    YamlFile file(kb_.dir_ / "gpus.yaml", "gpus");
    const auto items = file.list(file.root(), "gpus", "", true);
    for (size_t i = 0; i < items.size(); ++i) {
      const YAML::Node entry = items[i];
      const auto path = indexed("gpus", i);
      file.expect_map(entry, path);
      GpuEntry gpu;
      gpu.name = file.string(entry, "name", path);
      gpu.cc = file.cc(file.required(entry, "cc", path), path + ".cc");
      gpu.aliases = file.string_list(entry, "aliases", path, false);
      gpu.machine = file.optional_string(entry, "machine", path);
      if (!gpu.machine.empty() && gpu.machine != "aarch64" && gpu.machine != "x86_64") {
        file.fail(entry["machine"], path + ".machine",
                  "expected \"aarch64\" or \"x86_64\", got \"" + gpu.machine + "\"");
      }
      gpu.note = file.optional_string(entry, "note", path);
      gpu.provenance = file.provenance(entry, path);
      kb_.gpus_.push_back(std::move(gpu));

      add_gpu_key(file, entry["name"], path + ".name", i);
      const auto aliases = YamlFile::child(entry, "aliases");
      for (size_t a = 0; aliases.IsDefined() && a < aliases.size(); ++a) {
        add_gpu_key(file, aliases[a], indexed(path + ".aliases", a), i);
      }
    }
    load_architectures(file);
  }

  // gpus.yaml's optional `architectures`: per capability the first CUDA
  // toolkit that targets it and that toolkit's driver.
  void load_architectures(const YamlFile& file) {
    const auto items = file.list(file.root(), "architectures", "", false);
    std::map<ComputeCapability, YAML::Node> driver_nodes;  // standard-platform entries
    for (size_t i = 0; items.IsDefined() && i < items.size(); ++i) {
      const YAML::Node entry = items[i];
      const auto path = indexed("architectures", i);
      file.expect_map(entry, path);
      ArchitectureEntry arch;
      const auto cc_node = file.required(entry, "cc", path);
      arch.cc = file.cc(cc_node, path + ".cc");
      if (kb_.architecture(arch.cc)) {
        file.fail(cc_node, path + ".cc",
                  "duplicate: compute capability " + arch.cc.to_string() + " is listed twice");
      }
      arch.name = file.optional_string(entry, "name", path);
      arch.first_cuda = file.cuda_release(entry, "first_cuda", path);
      const auto platform = file.optional_string(entry, "platform", path);
      if (platform == "jetson") {
        arch.platform = DriverPlatform::jetson;
      } else if (!platform.empty() && platform != "standard") {
        file.fail(entry["platform"], path + ".platform",
                  "expected \"standard\" or \"jetson\", got \"" + platform + "\"");
      }
      arch.min_driver = file.optional_driver(entry, "min_driver", path);
      if (!arch.min_driver && arch.platform == DriverPlatform::standard) {
        file.fail(entry, path + ".min_driver",
                  "missing: the driver of CUDA " + arch.first_cuda +
                      " (only a `platform: jetson` entry may leave it out)");
      }
      arch.note = file.optional_string(entry, "note", path);
      arch.provenance = file.provenance(entry, path);
      if (arch.platform == DriverPlatform::standard) {
        check_toolkit_driver(file, arch, entry["min_driver"], path + ".min_driver");
        driver_nodes.emplace(arch.cc, entry["min_driver"]);
      }
      kb_.architectures_.push_back(std::move(arch));
    }
    std::sort(kb_.architectures_.begin(), kb_.architectures_.end(),
              [](const auto& a, const auto& b) { return a.cc < b.cc; });
    // A later toolkit never needs an older driver; a slip in a number shows here.
    std::vector<const ArchitectureEntry*> by_cuda;
    for (const auto& arch : kb_.architectures_) {
      if (arch.platform == DriverPlatform::standard) by_cuda.push_back(&arch);
    }
    std::stable_sort(by_cuda.begin(), by_cuda.end(), [](const auto* a, const auto* b) {
      return two_part_version(a->first_cuda) < two_part_version(b->first_cuda);
    });
    for (size_t i = 1; i < by_cuda.size(); ++i) {
      const auto& previous = *by_cuda[i - 1];
      const auto& arch = *by_cuda[i];
      if (*arch.min_driver < *previous.min_driver) {
        file.fail(driver_nodes.at(arch.cc),
                  "architectures (cc " + arch.cc.to_string() + ").min_driver",
                  "driver " + arch.min_driver->to_string() + " of CUDA " + arch.first_cuda +
                      " is older than the " + previous.min_driver->to_string() + " of CUDA " +
                      previous.first_cuda + " (cc " + previous.cc.to_string() + ")");
      }
    }
  }

  // The driver of a CUDA release is one number wherever the knowledge base
  // names it: ptx_isa.yaml's min_driver and torch.yaml's toolkit_driver.
  void check_toolkit_driver(const YamlFile& file, const ArchitectureEntry& arch,
                            const YAML::Node& node, const std::string& field) const {
    const auto differs = [&](const DriverVersion& other, const std::string& where) {
      if (other == *arch.min_driver) return;
      file.fail(node, field,
                "driver " + arch.min_driver->to_string() + " differs from the " +
                    other.to_string() + " that " + where + " gives CUDA " + arch.first_cuda);
    };
    for (const auto& isa : kb_.ptx_isa_) {
      if (isa.cuda == arch.first_cuda && isa.min_driver) {
        differs(*isa.min_driver,
                isa.provenance.file + " (line " + std::to_string(isa.provenance.line) + ")");
      }
    }
    for (const auto& tag : kb_.cuda_tags_) {
      if (tag.cuda == arch.first_cuda && tag.toolkit_driver) {
        differs(*tag.toolkit_driver, tag.provenance.file + " (line " +
                                         std::to_string(tag.provenance.line) + ", " + tag.tag +
                                         ")");
      }
    }
  }

  // drivers.yaml: both OSes' driver per CUDA release and per major's floor.
  // Its Linux column must be the number the other files give that release.
  void load_drivers() {
    YamlFile file(kb_.dir_ / "drivers.yaml", "drivers");
    read_release_drivers(file, "toolkit_drivers", kb_.toolkit_drivers_, false);
    read_release_drivers(file, "cuda_major_floors", kb_.driver_floors_, true);
  }

  void read_release_drivers(const YamlFile& file, const char* key, std::vector<ReleaseDrivers>& out,
                            bool floors) const {
    const auto items = file.list(file.root(), key, "", true);
    for (size_t i = 0; i < items.size(); ++i) {
      const YAML::Node entry = items[i];
      const auto path = indexed(key, i);
      file.expect_map(entry, path);
      ReleaseDrivers release;
      YAML::Node release_node;
      if (floors) {
        release_node = file.required(entry, "cuda_major", path);
        release.cuda = std::to_string(file.number(release_node, path + ".cuda_major", 3));
      } else {
        release.cuda = file.cuda_release(entry, "cuda", path);
        release_node = entry["cuda"];
      }
      release.linux_driver = file.driver(file.required(entry, "linux", path), path + ".linux");
      release.windows_driver =
          file.driver(file.required(entry, "windows", path), path + ".windows");
      release.provenance = file.provenance(entry, path);
      const auto same = [&](const ReleaseDrivers& other) { return other.cuda == release.cuda; };
      if (std::any_of(out.begin(), out.end(), same))
        file.fail(release_node, path, "duplicate: CUDA " + release.cuda + " is listed twice");
      if (!out.empty()) {
        const auto& previous = out.back();
        const auto release_order = [&](const std::string& cuda) {
          return floors ? std::pair<uint32_t, uint32_t>(std::stoul(cuda), 0)
                        : *two_part_version(cuda);
        };
        if (!(release_order(previous.cuda) < release_order(release.cuda)))
          file.fail(release_node, path,
                    "out of order: CUDA " + release.cuda + " after " + previous.cuda);
        for (const auto family : {DriverFamily::linux_driver, DriverFamily::windows_driver}) {
          if (release.of(family) < previous.of(family)) {
            file.fail(entry, path + (family == DriverFamily::linux_driver ? ".linux" : ".windows"),
                      "driver " + release.of(family).to_string() + " of CUDA " + release.cuda +
                          " is older than the " + previous.of(family).to_string() + " of CUDA " +
                          previous.cuda);
          }
        }
      }
      const auto check_linux = [&](const std::optional<DriverVersion>& other,
                                   const Provenance& where) {
        if (!other || *other == release.linux_driver) return;
        file.fail(entry["linux"], path + ".linux",
                  "driver " + release.linux_driver.to_string() + " differs from the " +
                      other->to_string() + " that " + where.file + " (line " +
                      std::to_string(where.line) + ") gives CUDA " + release.cuda);
      };
      if (floors) {
        for (const auto& floor : kb_.cuda_floors_) {
          if (std::to_string(floor.cuda_major) == release.cuda)
            check_linux(floor.min_driver, floor.provenance);
        }
      } else {
        for (const auto& isa : kb_.ptx_isa_) {
          if (isa.cuda == release.cuda) check_linux(isa.min_driver, isa.provenance);
        }
        for (const auto& tag : kb_.cuda_tags_) {
          if (tag.cuda == release.cuda) check_linux(tag.toolkit_driver, tag.provenance);
        }
        for (const auto& arch : kb_.architectures_) {
          if (arch.first_cuda == release.cuda && arch.platform == DriverPlatform::standard)
            check_linux(arch.min_driver, arch.provenance);
        }
      }
      out.push_back(std::move(release));
    }
  }

  void add_gpu_key(const YamlFile& file, const YAML::Node& node, const std::string& field,
                   size_t index) {
    const auto text = node.Scalar();
    const auto key = gpu_name_key(text);
    if (key.empty()) file.fail(node, field, "has no letters or digits besides NVIDIA/GeForce");
    if (parse_compute_capability(text)) {
      file.fail(node, field, "\"" + text + "\" reads as a compute capability; give a name");
    }
    const auto [it, inserted] = kb_.gpu_keys_.emplace(key, index);
    if (!inserted && it->second != index) {
      const auto& other = kb_.gpus_[it->second];
      file.fail(node, field,
                "duplicate name: \"" + text + "\" is already a name or alias of \"" + other.name +
                    "\" (line " + std::to_string(other.provenance.line) + ")");
    }
  }

  void load_ptx_isa() {
    YamlFile file(kb_.dir_ / "ptx_isa.yaml", "ptx_isa");
    const auto items = file.list(file.root(), "ptx_isa", "", true);
    std::map<PtxIsa, YAML::Node> nodes;
    for (size_t i = 0; i < items.size(); ++i) {
      const YAML::Node entry = items[i];
      const auto path = indexed("ptx_isa", i);
      file.expect_map(entry, path);
      PtxIsaEntry isa;
      const auto isa_node = file.required(entry, "isa", path);
      const auto isa_text = file.scalar(isa_node, path + ".isa");
      const auto parsed = parse_ptx_isa(isa_text);
      if (!parsed)
        file.fail(isa_node, path + ".isa",
                  "expected a PTX ISA version like \"8.7\", got \"" + isa_text + "\"");
      isa.isa = *parsed;
      isa.cuda = file.cuda_release(entry, "cuda", path);
      isa.min_driver = file.optional_driver(entry, "min_driver", path);
      isa.note = file.optional_string(entry, "note", path);
      isa.provenance = file.provenance(entry, path);
      if (!nodes.emplace(isa.isa, isa_node).second) {
        file.fail(isa_node, path + ".isa", "duplicate: PTX ISA " + isa_text + " is listed twice");
      }
      kb_.ptx_isa_.push_back(std::move(isa));
    }
    std::sort(kb_.ptx_isa_.begin(), kb_.ptx_isa_.end(),
              [](const auto& a, const auto& b) { return a.isa < b.isa; });
    // A newer ISA never needs an older driver; a slip in a number shows here.
    const PtxIsaEntry* previous = nullptr;
    for (const auto& entry : kb_.ptx_isa_) {
      if (!entry.min_driver) continue;
      if (previous && *entry.min_driver < *previous->min_driver) {
        const auto& node = nodes.at(entry.isa);
        file.fail(node, "ptx_isa (isa " + entry.isa.to_string() + ").min_driver",
                  "driver " + entry.min_driver->to_string() + " is older than the " +
                      previous->min_driver->to_string() + " of PTX ISA " +
                      previous->isa.to_string());
      }
      previous = &entry;
    }

    const auto floors = file.list(file.root(), "cuda_major_floors", "", true);
    for (size_t i = 0; i < floors.size(); ++i) {
      const YAML::Node entry = floors[i];
      const auto path = indexed("cuda_major_floors", i);
      file.expect_map(entry, path);
      CudaFloor floor;
      const auto major_node = file.required(entry, "cuda_major", path);
      floor.cuda_major = file.number(major_node, path + ".cuda_major", 3);
      floor.min_driver =
          file.driver(file.required(entry, "min_driver", path), path + ".min_driver");
      floor.provenance = file.provenance(entry, path);
      for (const auto& other : kb_.cuda_floors_) {
        if (other.cuda_major == floor.cuda_major) {
          file.fail(major_node, path + ".cuda_major",
                    "duplicate: CUDA " + std::to_string(floor.cuda_major) + " is listed twice");
        }
      }
      kb_.cuda_floors_.push_back(std::move(floor));
    }
  }

  void load_torch() {
    YamlFile file(kb_.dir_ / "torch.yaml", "torch");
    const auto tags = file.list(file.root(), "cuda_tags", "", true);
    for (size_t i = 0; i < tags.size(); ++i) {
      const YAML::Node entry = tags[i];
      const auto path = indexed("cuda_tags", i);
      file.expect_map(entry, path);
      CudaTag tag;
      const auto tag_node = file.required(entry, "tag", path);
      tag.tag = file.scalar(tag_node, path + ".tag");
      tag.cuda = file.cuda_release(entry, "cuda", path);
      const auto cuda_node = entry["cuda"];
      const auto version = two_part_version(tag.cuda);
      const auto expected = "cu" + std::to_string(version->first) + std::to_string(version->second);
      if (tag.tag != expected) {
        file.fail(tag_node, path + ".tag",
                  "CUDA " + tag.cuda + " is tag \"" + expected + "\", not \"" + tag.tag + "\"");
      }
      if (!kb_.cuda_floor_for_major(version->first)) {
        file.fail(cuda_node, path + ".cuda",
                  "ptx_isa.yaml has no cuda_major_floors entry for CUDA " +
                      std::to_string(version->first));
      }
      const auto url_node = file.required(entry, "index_url", path);
      tag.index_url = file.scalar(url_node, path + ".index_url");
      if (!tag.index_url.starts_with("https://")) {
        file.fail(url_node, path + ".index_url",
                  "expected an https:// URL, got \"" + tag.index_url + "\"");
      }
      tag.toolkit_driver = file.optional_driver(entry, "toolkit_driver", path);
      tag.windows_ptx = file.flag(entry, "windows_ptx", path, true);
      tag.provenance = file.provenance(entry, path);
      if (kb_.cuda_tag(tag.tag))
        file.fail(tag_node, path + ".tag", "duplicate: tag " + tag.tag + " is listed twice");
      kb_.cuda_tags_.push_back(std::move(tag));
    }
    std::sort(kb_.cuda_tags_.begin(), kb_.cuda_tags_.end(), [](const auto& a, const auto& b) {
      return two_part_version(a.cuda) < two_part_version(b.cuda);
    });

    const auto releases = file.list(file.root(), "releases", "", true);
    std::map<std::pair<uint32_t, uint32_t>, TorchRelease> sorted;
    for (size_t i = 0; i < releases.size(); ++i) {
      const YAML::Node entry = releases[i];
      const auto path = indexed("releases", i);
      file.expect_map(entry, path);
      TorchRelease release;
      const auto release_node = file.required(entry, "release", path);
      release.release = file.scalar(release_node, path + ".release");
      const auto series = two_part_version(release.release);
      if (!series)
        file.fail(release_node, path + ".release",
                  "expected a release series like \"2.7\", got \"" + release.release + "\"");
      read_torch_versions(file, entry, path, release);
      const auto builds = file.list(entry, "builds", path, true);
      for (size_t b = 0; b < builds.size(); ++b) {
        const YAML::Node build_node = builds[b];
        const auto build_path = indexed(path + ".builds", b);
        file.expect_map(build_node, build_path);
        TorchBuild build;
        const auto tag_node = file.required(build_node, "tag", build_path);
        build.tag = file.scalar(tag_node, build_path + ".tag");
        if (!kb_.cuda_tag(build.tag)) {
          file.fail(tag_node, build_path + ".tag",
                    "unknown CUDA tag \"" + build.tag + "\" (not in cuda_tags)");
        }
        for (const auto& other : release.builds) {
          if (other.tag == build.tag)
            file.fail(tag_node, build_path + ".tag",
                      "duplicate: " + build.tag + " is listed twice for " + release.release);
        }
        build.sass = file.sm_list(build_node, "sass", build_path, true);
        build.ptx = file.sm_list(build_node, "ptx", build_path, false);
        if (build.sass.empty() && build.ptx.empty()) {
          file.fail(build_node, build_path + ".sass",
                    "a build needs at least one SASS or PTX architecture");
        }
        build.provenance = file.provenance(build_node, build_path);
        release.builds.push_back(std::move(build));
      }
      std::sort(release.builds.begin(), release.builds.end(), [this](const auto& a, const auto& b) {
        return two_part_version(kb_.cuda_tag(a.tag)->cuda) <
               two_part_version(kb_.cuda_tag(b.tag)->cuda);
      });
      read_pypi_tag(file, entry, path, release);
      if (sorted.contains(*series)) {
        file.fail(release_node, path + ".release",
                  "duplicate: release " + release.release + " is listed twice");
      }
      sorted.emplace(*series, std::move(release));
    }
    for (auto& [series, release] : sorted) kb_.torch_releases_.push_back(std::move(release));
  }

  // A release's `versions`: "2.8.0", or {version: "2.8.0", torchvision:
  // "0.23.0", torchaudio: "2.8.0" | {version: "2.11.1", per_cuda: false}}.
  void read_torch_versions(const YamlFile& file, const YAML::Node& entry, const std::string& path,
                           TorchRelease& release) const {
    const auto versions = file.list(entry, "versions", path, true);
    if (versions.size() == 0) file.fail(versions, path + ".versions", "must not be empty");
    for (size_t v = 0; v < versions.size(); ++v) {
      const auto where = indexed(path + ".versions", v);
      TorchVersion version;
      if (versions[v].IsMap()) {
        version.version = file.string(versions[v], "version", where);
        for (const char* companion : {"torchvision", "torchaudio"}) {
          const auto pin = YamlFile::child(versions[v], companion);
          if (!pin.IsDefined()) continue;
          const auto pin_path = where + "." + companion;
          Companion c;
          c.name = companion;
          if (pin.IsMap()) {
            c.version = file.string(pin, "version", pin_path);
            c.per_cuda = file.flag(pin, "per_cuda", pin_path, true);
          } else {
            c.version = file.scalar(pin, pin_path);
          }
          version.companions.push_back(std::move(c));
        }
      } else {
        version.version = file.scalar(versions[v], where);
      }
      if (!version.version.starts_with(release.release + ".")) {
        file.fail(versions[v], where,
                  "\"" + version.version + "\" is not a " + release.release + ".x version");
      }
      release.versions.push_back(std::move(version));
    }
  }

  // A release's optional `pypi: {tag, source}`: the build PyPI carries, one
  // of the release's own builds.
  void read_pypi_tag(const YamlFile& file, const YAML::Node& entry, const std::string& path,
                     TorchRelease& release) const {
    const auto pypi = YamlFile::child(entry, "pypi");
    if (!pypi.IsDefined()) return;
    file.expect_map(pypi, path + ".pypi");
    release.pypi_tag = file.string(pypi, "tag", path + ".pypi");
    const bool built = std::any_of(release.builds.begin(), release.builds.end(),
                                   [&](const TorchBuild& b) { return b.tag == release.pypi_tag; });
    if (!built) {
      file.fail(pypi["tag"], path + ".pypi.tag",
                "\"" + release.pypi_tag + "\" is not one of this release's builds");
    }
    release.provenance = file.provenance(pypi, path + ".pypi");
  }

  void load_components() {
    YamlFile file(kb_.dir_ / "components.yaml", "components");
    const auto items = file.list(file.root(), "components", "", true);
    std::set<std::string> distributions;
    for (size_t i = 0; i < items.size(); ++i) {
      const YAML::Node entry = items[i];
      const auto path = indexed("components", i);
      file.expect_map(entry, path);
      Component component;
      component.name = file.string(entry, "name", path);
      component.distributions = file.string_list(entry, "distributions", path, true);
      const auto names = YamlFile::child(entry, "distributions");
      for (size_t d = 0; d < component.distributions.size(); ++d) {
        if (!distributions.insert(component.distributions[d]).second) {
          file.fail(
              names[d], indexed(path + ".distributions", d),
              "duplicate: \"" + component.distributions[d] + "\" belongs to another component");
        }
      }
      component.rebuild = file.optional_string(entry, "rebuild", path);
      component.library_per_cuda = file.optional_string(entry, "library_per_cuda", path);
      const auto marker = component.library_per_cuda.find("{cuda}");
      if (!component.library_per_cuda.empty() &&
          (marker == std::string::npos ||
           component.library_per_cuda.find("{cuda}", marker + 1) != std::string::npos)) {
        file.fail(entry["library_per_cuda"], path + ".library_per_cuda",
                  "must hold {cuda} exactly once, where the CUDA release goes "
                  "(\"libbitsandbytes_cuda{cuda}\")");
      }
      component.cuda_override_env = file.optional_string(entry, "cuda_override_env", path);
      component.provenance = file.provenance(entry, path);
      const auto fixes = file.list(entry, "fixes", path, false);
      for (size_t f = 0; fixes.IsDefined() && f < fixes.size(); ++f) {
        const YAML::Node fix_node = fixes[f];
        const auto fix_path = indexed(path + ".fixes", f);
        file.expect_map(fix_node, fix_path);
        ComponentFix fix;
        if (const auto min = YamlFile::child(fix_node, "min_cc"); min.IsDefined())
          fix.min_cc = file.cc(min, fix_path + ".min_cc");
        if (const auto max = YamlFile::child(fix_node, "max_cc"); max.IsDefined())
          fix.max_cc = file.cc(max, fix_path + ".max_cc");
        if (fix.min_cc && fix.max_cc && *fix.max_cc < *fix.min_cc) {
          file.fail(fix_node["max_cc"], fix_path + ".max_cc", "below min_cc");
        }
        fix.summary = file.string(fix_node, "summary", fix_path);
        fix.commands = file.string_list(fix_node, "commands", fix_path, false);
        fix.provenance = file.provenance(fix_node, fix_path);
        component.fixes.push_back(std::move(fix));
      }
      read_component_releases(file, entry, path, component);
      if (component.fixes.empty() && component.rebuild.empty()) {
        file.fail(entry, path + ".fixes", "a component needs fixes or a rebuild command");
      }
      kb_.components_.push_back(std::move(component));
    }
  }

  // A component's optional `releases`: {version, torch, archs, source}.
  void read_component_releases(const YamlFile& file, const YAML::Node& entry,
                               const std::string& path, Component& component) const {
    const auto releases = file.list(entry, "releases", path, false);
    for (size_t r = 0; releases.IsDefined() && r < releases.size(); ++r) {
      const auto where = indexed(path + ".releases", r);
      file.expect_map(releases[r], where);
      ComponentRelease release;
      release.version = file.string(releases[r], "version", where);
      release.torch = file.string(releases[r], "torch", where);
      if (!release.torch.starts_with("==") && !release.torch.starts_with(">=")) {
        file.fail(releases[r]["torch"], where + ".torch",
                  "expected \"==X.Y.Z\" or \">=X.Y\", got \"" + release.torch + "\"");
      }
      release.archs = file.string_list(releases[r], "archs", where, true);
      const auto archs = YamlFile::child(releases[r], "archs");
      for (size_t a = 0; a < release.archs.size(); ++a) {
        const auto& arch = release.archs[a];
        bool valid = arch.starts_with("sm_") || arch.starts_with("compute_");
        if (valid) {
          try {
            compat::parse_arch(arch);
          } catch (const compat::CompatError&) {
            valid = false;
          }
        }
        if (!valid) {
          file.fail(archs[a], indexed(where + ".archs", a),
                    "expected an arch like sm_90a or compute_80, got \"" + arch + "\"");
        }
      }
      release.provenance = file.provenance(releases[r], where);
      component.releases.push_back(std::move(release));
    }
  }

  void load_errors() {
    YamlFile file(kb_.dir_ / "errors.yaml", "errors");
    const auto items = file.list(file.root(), "signatures", "", true);
    for (size_t i = 0; i < items.size(); ++i) {
      const YAML::Node entry = items[i];
      const auto path = indexed("signatures", i);
      file.expect_map(entry, path);
      ErrorSignature signature;
      const std::string category = file.string(entry, "category", path);
      const auto known_category = error_category_from_string(category);
      if (!known_category || *known_category == ErrorCategory::not_recognised) {
        std::string known;
        for (const auto& facts : error_category_table()) {
          if (facts.category != ErrorCategory::not_recognised)
            known += (known.empty() ? "" : ", ") + std::string(facts.name);
        }
        file.fail(entry["category"], path + ".category",
                  "unknown category \"" + category + "\"; expected one of " + known);
      }
      signature.category = *known_category;
      // A pattern is a string (text any caller relays), or {text, library,
      // versions, source}: a library's own message.
      const auto patterns = file.list(entry, "patterns", path, true);
      if (patterns.size() == 0) file.fail(patterns, path + ".patterns", "must not be empty");
      for (size_t p = 0; p < patterns.size(); ++p) {
        const auto where = indexed(path + ".patterns", p);
        PatternOrigin origin;
        std::string text;
        if (patterns[p].IsMap()) {
          text = file.string(patterns[p], "text", where);
          origin.library = file.string(patterns[p], "library", where);
          origin.versions = file.optional_string(patterns[p], "versions", where);
          origin.source = file.string(patterns[p], "source", where);
        } else {
          text = file.scalar(patterns[p], where);
        }
        signature.regexes.push_back(compile(file, patterns[p], where, text));
        signature.patterns.push_back(std::move(text));
        signature.origins.push_back(std::move(origin));
      }
      const auto codes = file.list(entry, "cuda_errors", path, false);
      for (size_t c = 0; codes.IsDefined() && c < codes.size(); ++c)
        signature.cuda_errors.push_back(
            static_cast<int>(file.number(codes[c], indexed(path + ".cuda_errors", c), 5)));
      signature.title = file.string(entry, "title", path);
      signature.title_with_component = file.optional_string(entry, "title_with_component", path);
      signature.explanation = file.string(entry, "explanation", path);
      const auto steps = file.list(entry, "fix", path, true);
      if (steps.size() == 0) file.fail(steps, path + ".fix", "must not be empty");
      for (size_t f = 0; f < steps.size(); ++f) {
        const auto where = indexed(path + ".fix", f);
        FixStep step;
        if (steps[f].IsMap()) {
          // {step: "…", about: torch} or {step: "…", unless: checked}
          step.text = file.string(steps[f], "step", where);
          step.about = file.optional_string(steps[f], "about", where);
          const auto unless = file.optional_string(steps[f], "unless", where);
          if (!unless.empty() && unless != "checked")
            file.fail(steps[f]["unless"], where + ".unless",
                      "unknown condition \"" + unless + "\"; expected \"checked\"");
          step.unless_checked = unless == "checked";
        } else {
          step.text = file.scalar(steps[f], where);
        }
        signature.fix.push_back(std::move(step));
      }
      signature.provenance = file.provenance(entry, path);
      kb_.error_signatures_.push_back(std::move(signature));
    }
    load_message_facts(file);
  }

  // Case-insensitive, in RE2's syntax (util/pattern.hpp): no backreferences
  // or lookaround, which would need a backtracking engine.
  static util::Pattern compile(const YamlFile& file, const YAML::Node& node,
                               const std::string& where, const std::string& text) {
    util::Pattern pattern(text, util::Pattern::Case::insensitive);
    if (!pattern.ok()) file.fail(node, where, "not a regular expression: " + pattern.error());
    return pattern;
  }

  // What a message says beyond its category: the GPU it ran on (`gpu_arch`)
  // and the archs a library says it was built for (`built_for`).
  // An entry {pattern, form}: its form one of `groups`' keys, its
  // expression compiled with exactly that many groups.
  static util::Pattern pattern_of_form(const YamlFile& file, const YAML::Node& entry,
                                       const std::string& where,
                                       const std::map<std::string, size_t>& groups,
                                       std::string& pattern, std::string& form) {
    pattern = file.string(entry, "pattern", where);
    form = file.string(entry, "form", where);
    const auto known = groups.find(form);
    if (known == groups.end()) {
      std::string expected;
      for (const auto& [name, count] : groups) expected += (expected.empty() ? "" : ", ") + name;
      file.fail(entry["form"], where + ".form",
                "unknown form \"" + form + "\"; expected one of " + expected);
    }
    auto regex = compile(file, entry["pattern"], where + ".pattern", pattern);
    if (static_cast<size_t>(regex.groups()) != known->second)
      file.fail(entry["pattern"], where + ".pattern",
                "a " + form + " pattern has " + std::to_string(known->second) + " group(s)");
    return regex;
  }

  void load_message_facts(const YamlFile& file) {
    const auto arches = file.list(file.root(), "gpu_arch", "", false);
    for (size_t i = 0; arches.IsDefined() && i < arches.size(); ++i) {
      GpuArchPattern arch;
      arch.regex =
          pattern_of_form(file, arches[i], indexed("gpu_arch", i),
                          {{"sm", 1}, {"dotted", 2}, {"tuple", 2}}, arch.pattern, arch.form);
      kb_.gpu_arch_patterns_.push_back(std::move(arch));
    }
    const auto names = file.list(file.root(), "gpu_name", "", false);
    for (size_t i = 0; names.IsDefined() && i < names.size(); ++i) {
      const auto where = indexed("gpu_name", i);
      const std::string pattern = file.scalar(names[i], where);
      auto regex = compile(file, names[i], where, pattern);
      if (regex.groups() != 1) file.fail(names[i], where, "a gpu_name pattern has 1 group");
      kb_.gpu_name_patterns_.push_back(std::move(regex));
    }
    const auto lists = file.list(file.root(), "built_for", "", false);
    for (size_t i = 0; lists.IsDefined() && i < lists.size(); ++i) {
      const auto where = indexed("built_for", i);
      BuiltForPattern built;
      built.regex = pattern_of_form(file, lists[i], where, {{"list", 1}, {"range", 4}},
                                    built.pattern, built.form);
      built.origin.library = file.string(lists[i], "library", where);
      built.origin.versions = file.optional_string(lists[i], "versions", where);
      built.origin.source = file.string(lists[i], "source", where);
      kb_.built_for_patterns_.push_back(std::move(built));
    }
  }

  void load_packages() {
    YamlFile file(kb_.dir_ / "packages.yaml", "packages");
    Packages& packages = kb_.packages_;
    const auto& root = file.root();
    const auto suppliers = file.list(root, "suppliers", "", false);
    for (size_t i = 0; suppliers.IsDefined() && i < suppliers.size(); ++i) {
      const auto path = indexed("suppliers", i);
      file.expect_map(suppliers[i], path);
      SupplierRule rule;
      rule.distributions = file.string_list(suppliers[i], "distributions", path, true);
      rule.binary_only = file.flag(suppliers[i], "binary_only", path, false);
      rule.provenance = file.provenance(suppliers[i], path);
      packages.suppliers.push_back(std::move(rule));
    }
    const auto stacks = file.list(root, "stacks", "", false);
    std::set<std::string> stacked;
    for (size_t i = 0; stacks.IsDefined() && i < stacks.size(); ++i) {
      const auto path = indexed("stacks", i);
      file.expect_map(stacks[i], path);
      StackRule stack;
      stack.name = file.string(stacks[i], "name", path);
      stack.anchor = file.string(stacks[i], "anchor", path);
      stack.members = file.string_list(stacks[i], "members", path, false);
      std::vector<std::string> names = stack.members;
      names.push_back(stack.anchor);
      for (const auto& name : names) {
        if (!written_as_pip_compares(name)) {
          file.fail(stacks[i], path,
                    "\"" + name + "\" is not written as pip compares names (lower case, '-')");
        }
        if (!stacked.insert(name).second)
          file.fail(stacks[i], path, "\"" + name + "\" belongs to another stack already");
      }
      stack.provenance = file.provenance(stacks[i], path);
      packages.stacks.push_back(std::move(stack));
    }
    const auto twins = file.list(root, "cpu_twins", "", false);
    for (size_t i = 0; twins.IsDefined() && i < twins.size(); ++i) {
      const auto path = indexed("cpu_twins", i);
      file.expect_map(twins[i], path);
      CpuTwin twin;
      twin.name = file.string(twins[i], "name", path);
      twin.cuda = file.string(twins[i], "cuda", path);
      twin.cpu = file.string(twins[i], "cpu", path);
      twin.core = file.string(twins[i], "core", path);
      for (const auto* key : {"cuda", "cpu"}) {
        const auto& name = std::string_view(key) == "cuda" ? twin.cuda : twin.cpu;
        if (!written_as_pip_compares(name))
          file.fail(twins[i][key], path + "." + key,
                    "\"" + name + "\" is not written as pip compares names (lower case, '-')");
      }
      if (twin.cuda == twin.cpu)
        file.fail(twins[i]["cpu"], path + ".cpu", "names the CUDA distribution again");
      twin.provenance = file.provenance(twins[i], path);
      packages.cpu_twins.push_back(std::move(twin));
    }
    const auto features = file.list(root, "features", "", false);
    for (size_t i = 0; features.IsDefined() && i < features.size(); ++i) {
      const auto path = indexed("features", i);
      file.expect_map(features[i], path);
      FeatureLibrary feature;
      feature.library = file.string(features[i], "library", path);
      feature.feature = file.string(features[i], "feature", path);
      if (const auto min = YamlFile::child(features[i], "min_cc"); min.IsDefined())
        feature.min_cc = file.cc(min, path + ".min_cc");
      if (const auto max = YamlFile::child(features[i], "max_cc"); max.IsDefined())
        feature.max_cc = file.cc(max, path + ".max_cc");
      feature.provenance = file.provenance(features[i], path);
      packages.features.push_back(std::move(feature));
    }
    const auto opens = file.list(root, "opens", "", false);
    for (size_t i = 0; opens.IsDefined() && i < opens.size(); ++i) {
      const auto path = indexed("opens", i);
      file.expect_map(opens[i], path);
      OpensRule rule;
      rule.library = file.string(opens[i], "library", path);
      rule.opens = file.string_list(opens[i], "opens", path, true);
      rule.provenance = file.provenance(opens[i], path);
      packages.opens.push_back(std::move(rule));
    }
    const auto directories = file.list(root, "dll_directories", "", false);
    for (size_t i = 0; directories.IsDefined() && i < directories.size(); ++i) {
      const auto path = indexed("dll_directories", i);
      file.expect_map(directories[i], path);
      DllDirectories rule;
      rule.package = file.string(directories[i], "package", path);
      rule.folders = file.string_list(directories[i], "folders", path, true);
      rule.provenance = file.provenance(directories[i], path);
      packages.dll_directories.push_back(std::move(rule));
    }
    const auto provided = file.list(root, "provided_libraries", "", false);
    for (size_t i = 0; provided.IsDefined() && i < provided.size(); ++i) {
      const auto path = indexed("provided_libraries", i);
      file.expect_map(provided[i], path);
      ProvidedLibrary rule;
      rule.libraries = file.string_list(provided[i], "libraries", path, true);
      rule.distribution = file.string(provided[i], "distribution", path);
      if (!written_as_pip_compares(rule.distribution))
        file.fail(
            provided[i]["distribution"], path + ".distribution",
            "\"" + rule.distribution + "\" is not written as pip compares names (lower case, '-')");
      rule.requirement = file.string(provided[i], "requirement", path);
      if (!rule.requirement.starts_with(rule.distribution))
        file.fail(provided[i]["requirement"], path + ".requirement",
                  "\"" + rule.requirement + "\" does not name " + rule.distribution);
      rule.provenance = file.provenance(provided[i], path);
      packages.provided_libraries.push_back(std::move(rule));
    }
    // binary_only, pass_through and hosts: lists of distributions, each with its source.
    const auto read_lists = [&](const char* key, std::vector<DistributionList>& into) {
      const auto lists = file.list(root, key, "", false);
      for (size_t i = 0; lists.IsDefined() && i < lists.size(); ++i) {
        const auto path = indexed(key, i);
        file.expect_map(lists[i], path);
        DistributionList list;
        list.distributions = file.string_list(lists[i], "distributions", path, true);
        list.provenance = file.provenance(lists[i], path);
        into.push_back(std::move(list));
      }
    };
    read_lists("binary_only", packages.binary_only);
    read_lists("pass_through", packages.pass_through);
    read_lists("hosts", packages.hosts);
  }

  KbParts parts_;
  KnowledgeBase kb_;
};

KnowledgeBase load_knowledge_base(const std::filesystem::path& dir, KbParts parts) {
  if (!fs::is_directory(dir)) throw KbError(dir.string() + ": not a knowledge-base directory");
  return Loader(dir, parts).load();
}

}  // namespace archfit::kb
