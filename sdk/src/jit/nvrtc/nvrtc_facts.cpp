#include "nvrtc_facts.hpp"

#include <nlohmann/json.hpp>

#include "jit/cache/cache_key.hpp"
#include "sys/file_status.hpp"
#include "sys/library_loading.hpp"
#include "sys/utf8_path.hpp"

namespace archfit::jit {

namespace fs = std::filesystem;

namespace {

// A record's payload: this magic, then JSON.
constexpr std::string_view kRecordMagic = "AFN1";

// What changes when a file or directory is replaced, or written in place.
std::string identity(const fs::path& path) {
  const auto status = sys::file_status(path, sys::Links::follow);
  if (!status) return "absent";
  const sys::FileStamp& stamp = status->stamp;
  return std::to_string(stamp.device) + ":" + std::to_string(stamp.inode) + " " +
         std::to_string(stamp.size) + " " + std::to_string(stamp.mtime_ns) + " " +
         std::to_string(stamp.ctime_ns);
}

std::vector<std::byte> encode(const NvrtcFacts& facts) {
  const nlohmann::json json{{"path", sys::utf8_of(facts.path)},
                            {"origin", facts.origin},
                            {"version", {facts.version.major, facts.version.minor}},
                            {"build", facts.build},
                            {"build_source", facts.build_source},
                            {"supported_archs", facts.supported_archs},
                            {"description", facts.description},
                            {"library", identity(facts.path)}};
  const std::string text = std::string(kRecordMagic) + json.dump();
  const auto* bytes = reinterpret_cast<const std::byte*>(text.data());
  return {bytes, bytes + text.size()};
}

// The facts a record holds, when it parses and its library is still the
// file it described; nothing otherwise.
std::optional<NvrtcFacts> decode_current(const std::vector<std::byte>& payload) {
  const std::string_view text(reinterpret_cast<const char*>(payload.data()), payload.size());
  if (!text.starts_with(kRecordMagic)) return std::nullopt;
  const auto json = nlohmann::json::parse(text.substr(kRecordMagic.size()), nullptr,
                                          /*allow_exceptions=*/false);
  if (!json.is_object()) return std::nullopt;
  try {
    NvrtcFacts facts;
    facts.path = sys::path_of_utf8(json.at("path").get<std::string>());
    facts.origin = json.at("origin").get<std::string>();
    const auto version = json.at("version").get<std::vector<uint16_t>>();
    if (version.size() != 2) return std::nullopt;
    facts.version = {version[0], version[1]};
    facts.build = json.at("build").get<std::string>();
    facts.build_source = json.at("build_source").get<std::string>();
    facts.supported_archs = json.at("supported_archs").get<std::vector<int>>();
    facts.description = json.at("description").get<std::string>();
    if (json.at("library").get<std::string>() != identity(facts.path)) return std::nullopt;
    return facts;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;  // another layout: rebuilt
  }
}

}  // namespace

KernelCache::Options record_cache_options(const KernelCache& images) {
  KernelCache::Options options;
  if (const auto dir = images.directory()) options.dir = *dir / "records";
  options.max_bytes = 1u << 20;  // a record is under a kilobyte
  // The image cache has already said what is wrong with the directory.
  options.on_warning = [](const std::string&) {};
  return options;
}

NvrtcFacts facts_of(const Nvrtc& nvrtc) {
  return {nvrtc.info().path,    nvrtc.info().origin,          nvrtc.info().version, nvrtc.build(),
          nvrtc.build_source(), nvrtc.info().supported_archs, nvrtc.describe()};
}

bool same_compiler(const NvrtcFacts& a, const NvrtcFacts& b) {
  return a.path == b.path && a.version == b.version && a.build == b.build &&
         a.supported_archs == b.supported_archs;
}

LazyNvrtc::LazyNvrtc(NvrtcSearch search, std::function<Nvrtc(const NvrtcSearch&)> discover)
    : search_(std::move(search)), discover_(std::move(discover)) {}

std::string LazyNvrtc::record_key() const {
  std::string depends;
  const auto add = [&](std::string_view label, const std::string& value) {
    depends.append(label).append("=").append(value).append("\n");
  };
  add("ARCHFIT_NVRTC", sys::utf8_of(search_.archfit_nvrtc));
  add("CUDA_HOME", sys::utf8_of(search_.cuda_home));
  for (const auto& dir : search_.ld_library_path) add(sys::kLibraryPathVariable, sys::utf8_of(dir));
  for (const auto& dir : search_.loader_dirs) add("loader", sys::utf8_of(dir));
  for (const auto& dir : search_.site_packages) add("site-packages", sys::utf8_of(dir));
  add("default toolkit", sys::utf8_of(search_.default_toolkit));
  for (const auto& dir : nvrtc_search_directories(search_)) add(sys::utf8_of(dir), identity(dir));
  return store::record_key("nvrtc discovery", depends);
}

const Nvrtc& LazyNvrtc::load_locked() {
  if (!nvrtc_) nvrtc_ = discover_(search_);
  return *nvrtc_;
}

void LazyNvrtc::record(KernelCache& records, const std::string& key, const NvrtcFacts& facts) {
  records.discard(key);
  records.get_or_build(key, [&] { return encode(facts); });
}

NvrtcFacts LazyNvrtc::facts(const KernelCache& images) {
  const std::lock_guard lock(mutex_);
  if (facts_) return *facts_;
  KernelCache records(record_cache_options(images));
  const std::string key = record_key();
  bool built = false;
  const CacheResult result = records.get_or_build(key, [&] {
    built = true;
    return encode(facts_of(load_locked()));
  });
  if (auto recorded = decode_current(*result.image)) {
    facts_ = std::move(*recorded);
    from_record_ = !built;
  } else {
    // Unreadable, or its library was replaced in place: load and record anew.
    facts_ = facts_of(load_locked());
    from_record_ = false;
    record(records, key, *facts_);
  }
  return *facts_;
}

const Nvrtc& LazyNvrtc::loaded(const KernelCache& images) {
  const std::lock_guard lock(mutex_);
  const Nvrtc& nvrtc = load_locked();
  const NvrtcFacts actual = facts_of(nvrtc);
  if (facts_ && !same_compiler(*facts_, actual)) {
    const std::string recorded = facts_->description;
    facts_ = actual;
    from_record_ = false;
    KernelCache records(record_cache_options(images));
    record(records, record_key(), actual);
    throw StaleNvrtcFacts("the NVRTC discovery record described " + recorded + ", but " +
                          actual.description + " loaded; the record is replaced");
  }
  if (!facts_) facts_ = actual;
  return nvrtc;
}

bool LazyNvrtc::is_loaded() {
  const std::lock_guard lock(mutex_);
  return nvrtc_.has_value();
}

bool LazyNvrtc::facts_from_record() {
  const std::lock_guard lock(mutex_);
  return facts_ && from_record_;
}

}  // namespace archfit::jit
