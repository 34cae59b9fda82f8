#include "environment_settings.hpp"

#include <charconv>
#include <cstdlib>
#include <string_view>

#include "env/cuda_libraries.hpp"
#include "store/store_location.hpp"
#include "sys/trust.hpp"
#include "sys/utf8_path.hpp"

namespace archfit::session {

namespace fs = std::filesystem;

namespace {

binary::ArchiveLimits archive_limits_from_environment(std::vector<std::string>& warnings) {
  binary::ArchiveLimits limits;
  if (const char* text = std::getenv(kWheelMaxRatioVariable); text && *text) {
    const std::string_view value = text;
    uint64_t ratio = 0;
    const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), ratio);
    if (error == std::errc() && end == value.data() + value.size() && ratio > 0) {
      limits.max_ratio = ratio;
    } else {
      warnings.push_back(std::string("archfit: ") + kWheelMaxRatioVariable + "=" +
                         std::string(value) + " is not a whole number above 0; using " +
                         std::to_string(limits.max_ratio));
    }
  }
  if (const char* text = std::getenv(kWheelMaxBytesVariable); text && *text) {
    if (const auto bytes = store::parse_byte_count(text)) {
      limits.max_bytes = *bytes;
    } else {
      warnings.push_back(std::string("archfit: ") + kWheelMaxBytesVariable + "=" + text +
                         " is not a byte count (such as 8589934592, 512M or 16G); using " +
                         std::to_string(limits.max_bytes));
    }
  }
  return limits;
}

}  // namespace

jit::JitSettings read_jit_settings() {
  jit::JitSettings settings;
  jit::KernelCache::Options& cache = settings.cache.emplace();
  std::string why;
  cache.dir = store::cache_dir_from_environment(why);
  if (!cache.dir)
    cache.notes.push_back("kernel cache: " + why + "; kernels are cached in memory only");
  cache.readonly_dirs = store::readonly_dirs_from_environment();
  if (const char* text = std::getenv(store::kCacheMaxBytesVariable); text && *text) {
    if (auto bytes = store::parse_byte_count(text)) {
      cache.max_bytes = *bytes;
    } else {
      cache.notes.push_back(std::string("kernel cache: ") + store::kCacheMaxBytesVariable + "=" +
                            text +
                            " is not a byte count (such as 1073741824, 512M or 1G); using 1 GiB");
    }
  }
  // A library archfit loads: ignored when setuid.
  const char* nvrtc = sys::trusted_path_variable("ARCHFIT_NVRTC");
  settings.nvrtc_search = jit::nvrtc_search_over(
      nvrtc ? sys::path_of_utf8(nvrtc) : fs::path(),
      env::default_cuda_library_search(env::site_packages_of_loaded_torch()));
  return settings;
}

jit::FatbinarySearch read_fatbinary_search() {
  // A program archfit runs: the variables that name it are ignored when setuid.
  jit::FatbinarySearch search;
  if (const char* given = sys::trusted_path_variable("ARCHFIT_FATBINARY"))
    search.given = sys::path_of_utf8(given);
  for (const char* variable : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* root = sys::trusted_path_variable(variable))
      search.toolkits.push_back(sys::path_of_utf8(root));
  if (const char* path = sys::trusted_path_variable("PATH")) search.path = path;
  return search;
}

EnvironmentSettings read_environment_settings() {
  EnvironmentSettings settings;
  settings.archive_limits = archive_limits_from_environment(settings.warnings);
  std::string why;
  settings.cache_dir = store::cache_dir_from_environment(why);
  // What archfit believes about GPUs, and code it loads: ignored when setuid.
  if (const char* dir = sys::trusted_path_variable("ARCHFIT_KB_DIR"))
    settings.kb_dir = sys::path_of_utf8(dir);
  settings.plugins =
      plugin::plugin_environment(sys::trusted_path_variable(plugin::kPluginPathVariable),
                                 std::getenv(plugin::kPluginTimeoutVariable));
  return settings;
}

}  // namespace archfit::session
