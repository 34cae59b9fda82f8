// Reads the YAML files of a knowledge base into KnowledgeBase and checks
// every entry; the first problem is thrown as a KbFormatError that names the
// file, line and field. yaml-cpp stays inside this file.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <map>
#include <set>

#include "gpu_names.hpp"
#include "knowledge_base.hpp"

namespace archfit::kb {
namespace {

namespace fs = std::filesystem;

std::string indexed(const std::string& path, size_t index) {
  return path + "[" + std::to_string(index) + "]";
}

// One YAML file, with helpers that read typed fields and fail with the
// file, line and field of whatever is wrong.
class YamlFile {
 public:
  YamlFile(fs::path path, std::string_view kind) : path_(std::move(path)) {
    try {
      root_ = YAML::LoadFile(path_.string());
    } catch (const YAML::BadFile&) {
      throw KbError(path_.string() + ": cannot read the file");
    } catch (const YAML::ParserException& e) {
      throw KbFormatError(path_.string(), e.mark.line + 1, e.mark.column + 1, "",
                          "YAML syntax: " + e.msg);
    }
    const std::string expected = "archfit.kb." + std::string(kind) + "/1";
    if (!root_.IsMap())
      fail(root_, "", "expected a mapping that starts with `schema: " + expected + "`");
    const auto schema = string(root_, "schema", "");
    if (schema != expected) {
      fail(root_["schema"], "schema", "expected \"" + expected + "\", got \"" + schema + "\"");
    }
  }

  const YAML::Node& root() const { return root_; }
  std::string name() const { return path_.filename().string(); }

  [[noreturn]] void fail(const YAML::Node& at, const std::string& field,
                         const std::string& problem) const {
    int line = 0;
    int column = 0;
    if (at.IsDefined()) {
      const auto mark = at.Mark();
      if (mark.line >= 0) {
        line = mark.line + 1;
        column = mark.column + 1;
      }
    }
    throw KbFormatError(path_.string(), line, column, field, problem);
  }

  static std::string join(const std::string& path, const char* key) {
    return path.empty() ? key : path + "." + key;
  }

  // The value under `key`, or an undefined node when it is absent or null.
  static YAML::Node child(const YAML::Node& map, const char* key) {
    YAML::Node value = map[key];
    if (!value.IsDefined() || value.IsNull()) return YAML::Node(YAML::NodeType::Undefined);
    return value;
  }

  YAML::Node required(const YAML::Node& map, const char* key, const std::string& path) const {
    auto value = child(map, key);
    if (!value.IsDefined()) fail(map, join(path, key), "missing (required)");
    return value;
  }

  void expect_map(const YAML::Node& node, const std::string& path) const {
    if (!node.IsMap()) fail(node, path, "expected a mapping (key: value entries)");
  }

  std::string scalar(const YAML::Node& node, const std::string& field) const {
    if (!node.IsScalar()) fail(node, field, "expected a string, got " + describe(node));
    std::string text = node.Scalar();
    const auto first = text.find_first_not_of(" \t");
    const auto last = text.find_last_not_of(" \t");
    text = first == std::string::npos ? "" : text.substr(first, last - first + 1);
    if (text.empty()) fail(node, field, "must not be empty");
    return text;
  }

  std::string string(const YAML::Node& map, const char* key, const std::string& path) const {
    return scalar(required(map, key, path), join(path, key));
  }

  std::string optional_string(const YAML::Node& map, const char* key,
                              const std::string& path) const {
    const auto value = child(map, key);
    return value.IsDefined() ? scalar(value, join(path, key)) : std::string();
  }

  // A list under `key`; empty when absent unless required.
  YAML::Node list(const YAML::Node& map, const char* key, const std::string& path,
                  bool is_required) const {
    auto value = is_required ? required(map, key, path) : child(map, key);
    if (value.IsDefined() && !value.IsSequence()) {
      fail(value, join(path, key), "expected a list, got " + describe(value));
    }
    return value;
  }

  std::vector<std::string> string_list(const YAML::Node& map, const char* key,
                                       const std::string& path, bool is_required) const {
    std::vector<std::string> values;
    const auto items = list(map, key, path, is_required);
    if (!items.IsDefined()) return values;
    for (size_t i = 0; i < items.size(); ++i) {
      values.push_back(scalar(items[i], indexed(join(path, key), i)));
    }
    if (is_required && values.empty()) fail(items, join(path, key), "must not be empty");
    return values;
  }

  ComputeCapability cc(const YAML::Node& node, const std::string& field) const {
    const auto text = scalar(node, field);
    // Strict here: the file says "12.0", the user may say "sm_120".
    const auto value = parse_compute_capability(text);
    if (!value || text.find('.') == std::string::npos) {
      fail(node, field, "expected a compute capability like \"12.0\", got \"" + text + "\"");
    }
    return *value;
  }

  DriverVersion driver(const YAML::Node& node, const std::string& field) const {
    const auto text = scalar(node, field);
    const auto value = parse_driver_version(text);
    if (!value)
      fail(node, field, "expected a driver version like \"570.86.16\", got \"" + text + "\"");
    return *value;
  }

  std::optional<DriverVersion> optional_driver(const YAML::Node& map, const char* key,
                                               const std::string& path) const {
    const auto value = child(map, key);
    if (!value.IsDefined()) return std::nullopt;
    return driver(value, join(path, key));
  }

  // A CUDA release under `key`: "12.8".
  std::string cuda_release(const YAML::Node& map, const char* key, const std::string& path) const {
    const auto node = required(map, key, path);
    auto text = scalar(node, join(path, key));
    if (!two_part_version(text)) {
      fail(node, join(path, key), "expected a CUDA release like \"12.8\", got \"" + text + "\"");
    }
    return text;
  }

  uint32_t number(const YAML::Node& node, const std::string& field, size_t max_digits) const {
    const auto text = scalar(node, field);
    const auto value = small_number(text, max_digits);
    if (!value) fail(node, field, "expected a whole number, got \"" + text + "\"");
    return *value;
  }

  // SM numbers as get_arch_list() has them without the prefix: 75, 120.
  std::vector<uint32_t> sm_list(const YAML::Node& map, const char* key, const std::string& path,
                                bool is_required) const {
    std::vector<uint32_t> values;
    const auto items = list(map, key, path, is_required);
    if (!items.IsDefined()) return values;
    for (size_t i = 0; i < items.size(); ++i) {
      const auto field = indexed(join(path, key), i);
      const auto text = scalar(items[i], field);
      const auto value = small_number(text, 3);
      if (!value || *value < 10) {
        fail(items[i], field, "expected an SM number like 120 (for sm_120), got \"" + text + "\"");
      }
      if (std::find(values.begin(), values.end(), *value) != values.end()) {
        fail(items[i], field, "duplicate: " + text + " is already listed");
      }
      values.push_back(*value);
    }
    std::sort(values.begin(), values.end());
    return values;
  }

  Provenance provenance(const YAML::Node& entry, const std::string& path) const {
    Provenance p;
    // One source, or a list of them when an entry combines facts from several.
    const auto source = required(entry, "source", path);
    if (source.IsSequence()) {
      for (const auto& part : string_list(entry, "source", path, true))
        p.source += (p.source.empty() ? "" : "; ") + part;
    } else {
      p.source = scalar(source, join(path, "source"));
    }
    const auto confidence = optional_string(entry, "confidence", path);
    if (confidence == "inferred") {
      p.confidence = Confidence::inferred;
    } else if (!confidence.empty() && confidence != "quoted") {
      fail(entry["confidence"], join(path, "confidence"),
           "expected \"quoted\" or \"inferred\", got \"" + confidence + "\"");
    }
    p.basis = optional_string(entry, "basis", path);
    if (p.confidence == Confidence::inferred && p.basis.empty()) {
      fail(entry, join(path, "basis"),
           "missing: an inferred entry must say what it was inferred from");
    }
    p.file = name();
    p.line = entry.Mark().line + 1;
    return p;
  }

 private:
  static std::string describe(const YAML::Node& node) {
    switch (node.Type()) {
      case YAML::NodeType::Map:
        return "a mapping";
      case YAML::NodeType::Sequence:
        return "a list";
      case YAML::NodeType::Scalar:
        return "\"" + node.Scalar() + "\"";
      case YAML::NodeType::Null:
        return "nothing";
      default:
        return "no value";
    }
  }

  fs::path path_;
  YAML::Node root_;
};

}  // namespace

// Fills a KnowledgeBase; a friend of it.
class Loader {
 public:
  explicit Loader(fs::path dir) { kb_.dir_ = std::move(dir); }

  KnowledgeBase load() {
    // ptx_isa.yaml first: torch.yaml's tags need its CUDA floors, and
    // gpus.yaml's architectures are checked against both.
    load_ptx_isa();
    load_torch();
    load_gpus();
    if (fs::exists(kb_.dir_ / "components.yaml")) load_components();
    if (fs::exists(kb_.dir_ / "errors.yaml")) load_errors();
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
      release.versions = file.string_list(entry, "versions", path, true);
      const auto versions = YamlFile::child(entry, "versions");
      for (size_t v = 0; v < release.versions.size(); ++v) {
        if (!release.versions[v].starts_with(release.release + ".")) {
          file.fail(versions[v], indexed(path + ".versions", v),
                    "\"" + release.versions[v] + "\" is not a " + release.release + ".x version");
        }
      }
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
      if (sorted.contains(*series)) {
        file.fail(release_node, path + ".release",
                  "duplicate: release " + release.release + " is listed twice");
      }
      sorted.emplace(*series, std::move(release));
    }
    for (auto& [series, release] : sorted) kb_.torch_releases_.push_back(std::move(release));
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
      if (component.fixes.empty() && component.rebuild.empty()) {
        file.fail(entry, path + ".fixes", "a component needs fixes or a rebuild command");
      }
      kb_.components_.push_back(std::move(component));
    }
  }

  void load_errors() {
    static const std::set<std::string> kCategories = {
        "no-kernel-image",     "ptx-too-new-for-driver", "driver-too-old",
        "no-device",           "invalid-device-function", "library-arch-mismatch",
        "compiler-unknown-arch", "async-error",          "out-of-memory"};
    YamlFile file(kb_.dir_ / "errors.yaml", "errors");
    const auto items = file.list(file.root(), "signatures", "", true);
    for (size_t i = 0; i < items.size(); ++i) {
      const YAML::Node entry = items[i];
      const auto path = indexed("signatures", i);
      file.expect_map(entry, path);
      ErrorSignature signature;
      signature.category = file.string(entry, "category", path);
      if (!kCategories.count(signature.category)) {
        std::string known;
        for (const auto& category : kCategories) known += (known.empty() ? "" : ", ") + category;
        file.fail(entry["category"], path + ".category",
                  "unknown category \"" + signature.category + "\"; expected one of " + known);
      }
      signature.patterns = file.string_list(entry, "patterns", path, true);
      const auto patterns = YamlFile::child(entry, "patterns");
      for (size_t p = 0; p < signature.patterns.size(); ++p) {
        try {
          signature.regexes.emplace_back(signature.patterns[p],
                                         std::regex::ECMAScript | std::regex::icase |
                                             std::regex::optimize);
        } catch (const std::regex_error& error) {
          file.fail(patterns[p], indexed(path + ".patterns", p),
                    std::string("not a regular expression: ") + error.what());
        }
      }
      const auto codes = file.list(entry, "cuda_errors", path, false);
      for (size_t c = 0; codes.IsDefined() && c < codes.size(); ++c)
        signature.cuda_errors.push_back(
            static_cast<int>(file.number(codes[c], indexed(path + ".cuda_errors", c), 5)));
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
  }

  KnowledgeBase kb_;
};

KnowledgeBase load_knowledge_base(const std::filesystem::path& dir) {
  if (!fs::is_directory(dir)) throw KbError(dir.string() + ": not a knowledge-base directory");
  return Loader(dir).load();
}

}  // namespace archfit::kb
