// The C ABI of the plugin host (plugin/plugin_host): find and load plugins,
// list what they offer and why some were rejected, and make kernel modules
// from the modules they provide.
#include <cstddef>
#include <memory>
#include <nlohmann/json.hpp>

#include "guard.hpp"
#include "handles.hpp"
#include "plugin/plugin_json.hpp"
#include "string_list.hpp"
#include "sys/utf8_path.hpp"
#include "util/json_text.hpp"

using archfit::capi::ApiError;
using archfit::capi::guarded;
using archfit::capi::require_argument;
using archfit::capi::write_output;
namespace plugin = archfit::plugin;
namespace jit = archfit::jit;

namespace {

// The body of archfit_plugin_set_create, under the name it was called by
// (archfit_plugins_load, as the first release named it, is the same call).
archfit_status load_plugins_as(const char* function, archfit_context* context,
                               const archfit_plugin_search* given, archfit_plugin_set** out_set) {
  return guarded(function, [&] {
    require_argument(context, "context");
    require_argument(out_set, "out_set");
    const auto options = archfit::capi::read_options(given, "archfit_plugin_search");
    plugin::PluginSearch search;
    for (const auto& path : archfit::capi::string_list(options.paths, options.path_count, "paths"))
      search.paths.push_back(archfit::sys::path_of_utf8(path));
    search.environment = options.skip_environment == 0;
    search.install_dir = options.skip_install_dir == 0;
    auto handle = std::make_unique<archfit_plugin_set>();
    handle->set = context->session.plugins(search);
    for (const auto& loaded : handle->set.loaded)
      handle->manifest_paths.push_back(archfit::sys::utf8_of(loaded.manifest.path));
    for (const auto& rejected : handle->set.rejected)
      handle->rejected_paths.push_back(archfit::sys::utf8_of(rejected.path));
    *out_set = handle.release();
  });
}

}  // namespace

extern "C" {

archfit_status archfit_plugin_set_create(archfit_context* context,
                                         const archfit_plugin_search* search,
                                         archfit_plugin_set** out_set) noexcept {
  return load_plugins_as(__func__, context, search, out_set);
}

archfit_status archfit_plugins_load(archfit_context* context, const archfit_plugin_search* search,
                                    archfit_plugin_set** out_set) noexcept {
  return load_plugins_as(__func__, context, search, out_set);
}

void archfit_plugin_set_destroy(archfit_plugin_set* set) noexcept { delete set; }

size_t archfit_plugin_set_count(const archfit_plugin_set* set) noexcept {
  return set ? set->set.loaded.size() : 0;
}

archfit_status archfit_plugin_set_get(const archfit_plugin_set* set, size_t index,
                                      archfit_plugin_entry* out_entry) noexcept {
  return guarded(__func__, [&] {
    require_argument(set, "set");
    require_argument(out_entry, "out_entry");
    if (index >= set->set.loaded.size()) {
      throw ApiError{ARCHFIT_ERROR_INVALID_ARGUMENT,
                     "index " + std::to_string(index) + " is out of range: the set holds " +
                         std::to_string(set->set.loaded.size()) + " loaded plugins"};
    }
    const plugin::LoadedPlugin& loaded = set->set.loaded[index];
    archfit_plugin_entry entry{};
    entry.name = loaded.name.c_str();
    entry.version = loaded.version.c_str();
    entry.description = loaded.description.c_str();
    entry.manifest = set->manifest_paths[index].c_str();
    entry.abi = loaded.abi;
    entry.module_count = loaded.modules.size();
    entry.probe_json = loaded.probe_json.empty() ? nullptr : loaded.probe_json.c_str();
    entry.milliseconds = loaded.milliseconds;
    write_output(out_entry, entry, offsetof(archfit_plugin_entry, milliseconds) + sizeof(double),
                 "out_entry", "archfit_plugin_entry");
  });
}

const char* archfit_plugin_set_module_name(const archfit_plugin_set* set, size_t index,
                                           size_t module_index) noexcept {
  if (!set || index >= set->set.loaded.size()) return nullptr;
  const auto& modules = set->set.loaded[index].modules;
  return module_index < modules.size() ? modules[module_index].name.c_str() : nullptr;
}

archfit_status archfit_plugin_set_module_create(archfit_context* context,
                                                const archfit_plugin_set* set,
                                                const char* module_name,
                                                archfit_module** out_module) noexcept {
  return guarded(__func__, [&] {
    require_argument(context, "context");
    require_argument(set, "set");
    require_argument(module_name, "module_name");
    require_argument(out_module, "out_module");
    std::string offered;
    for (const auto& loaded : set->set.loaded) {
      for (const auto& spec : loaded.modules) {
        if (spec.name != module_name) {
          offered += (offered.empty() ? "" : ", ") + spec.name;
          continue;
        }
        auto handle = std::make_unique<archfit_module>();
        try {
          handle->module = context->session.module(spec);
        } catch (const jit::JitError& error) {
          throw ApiError{ARCHFIT_ERROR_INVALID_ARGUMENT, error.what()};
        }
        *out_module = handle.release();
        return;
      }
    }
    throw ApiError{ARCHFIT_ERROR_INVALID_ARGUMENT,
                   std::string("no loaded plugin offers a module named \"") + module_name +
                       "\"; offered: " + (offered.empty() ? "none" : offered)};
  });
}

size_t archfit_plugin_set_rejected_count(const archfit_plugin_set* set) noexcept {
  return set ? set->set.rejected.size() : 0;
}

const char* archfit_plugin_set_rejected_path(const archfit_plugin_set* set, size_t index) noexcept {
  return set && index < set->set.rejected.size() ? set->rejected_paths[index].c_str() : nullptr;
}

const char* archfit_plugin_set_rejected_reason(const archfit_plugin_set* set,
                                               size_t index) noexcept {
  return set && index < set->set.rejected.size() ? set->set.rejected[index].reason.c_str()
                                                 : nullptr;
}

archfit_status archfit_plugin_set_json(const archfit_plugin_set* set,
                                       const char** out_json) noexcept {
  return guarded(__func__, [&] {
    require_argument(set, "set");
    require_argument(out_json, "out_json");
    std::call_once(set->json_once, [&] {
      set->json = archfit::util::json_text(plugin::plugin_set_json(set->set));
    });
    *out_json = set->json.c_str();
  });
}

}  // extern "C"
