// archfit — a header-only C++17 wrapper over the C ABI in archfit.h.
// Every handle becomes a move-only RAII owner (Context, Scan, Report,
// Diagnosis, Module, LoadedModule, PluginSet); a failing status becomes
// archfit::Error carrying the status and archfit_last_error(). Strings
// returned as std::string_view are borrowed from their owner and live as long
// as it does.
#ifndef ARCHFIT_ARCHFIT_HPP
#define ARCHFIT_ARCHFIT_HPP

#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "archfit/archfit.h"

namespace archfit {

class Error : public std::runtime_error {
 public:
  Error(archfit_status status, const std::string& message)
      : std::runtime_error(message), status_(status) {}
  archfit_status status() const noexcept { return status_; }

 private:
  archfit_status status_;
};

namespace detail {
inline void check(archfit_status status) {
  if (status != ARCHFIT_OK) {
    const char* message = archfit_last_error();
    throw Error(status, message && *message ? message : archfit_status_string(status));
  }
}
template <typename T, void (*Destroy)(T*)>
struct Deleter {
  void operator()(T* handle) const noexcept { Destroy(handle); }
};
template <typename T, void (*Destroy)(T*)>
using Owner = std::unique_ptr<T, Deleter<T, Destroy>>;
// A borrowed C string as a view; NULL (an index out of range) as empty.
inline std::string_view view(const char* text) noexcept {
  return text ? std::string_view(text) : std::string_view();
}
}  // namespace detail

// True when the loaded library speaks the ABI this header was written for.
inline bool library_is_compatible() noexcept {
  return archfit_version() / 10000 == ARCHFIT_VERSION_MAJOR;
}

class Scan {
 public:
  archfit_file_format format() const noexcept { return archfit_scan_format(handle_.get()); }
  std::size_t image_count() const noexcept { return archfit_scan_image_count(handle_.get()); }
  archfit_image_info image(std::size_t index) const {
    archfit_image_info info{};
    info.struct_size = sizeof info;
    detail::check(archfit_scan_image(handle_.get(), index, &info));
    return info;
  }
  // Empty when the input was well formed.
  std::string_view error() const noexcept {
    const char* message = archfit_scan_error(handle_.get());
    return message ? std::string_view(message) : std::string_view();
  }
  std::size_t error_count() const noexcept { return archfit_scan_error_count(handle_.get()); }
  // The archfit.scan/1 document; the view lives as long as this Scan.
  std::string_view json() const {
    const char* text = nullptr;
    detail::check(archfit_scan_json(handle_.get(), &text));
    return text;
  }
  const archfit_scan* get() const noexcept { return handle_.get(); }

 private:
  friend class Context;
  explicit Scan(archfit_scan* handle) : handle_(handle) {}
  std::unique_ptr<archfit_scan, detail::Deleter<archfit_scan, archfit_scan_destroy>> handle_;
};

// The result of one check (archfit_check_run).
class Report {
 public:
  archfit_overall_verdict verdict() const noexcept { return archfit_report_verdict(get()); }
  // The answer in one line: "fails: PyTorch 2.5.1+cu124 has no image for …".
  std::string_view summary() const noexcept { return detail::view(archfit_report_summary(get())); }
  std::size_t stack_count() const noexcept { return archfit_report_stack_count(get()); }
  std::string_view stack_name(std::size_t i) const noexcept {
    return detail::view(archfit_report_stack_name(get(), i));
  }
  std::string_view stack_verdict(std::size_t i) const noexcept {
    return detail::view(archfit_report_stack_verdict(get(), i));
  }
  // The core's answer: does this stack fail? (false past the last)
  bool stack_blocks(std::size_t i) const noexcept {
    return archfit_report_stack_blocks(get(), i) == 1;
  }
  std::string_view stack_fix(std::size_t i) const noexcept {
    return detail::view(archfit_report_stack_fix(get(), i));
  }
  // Command `command` of the stack's fix; empty past the last.
  std::string_view stack_fix_command(std::size_t i, std::size_t command) const noexcept {
    return detail::view(archfit_report_stack_fix_command(get(), i, command));
  }
  std::size_t component_count() const noexcept { return archfit_report_component_count(get()); }
  std::string_view component_name(std::size_t i) const noexcept {
    return detail::view(archfit_report_component_name(get(), i));
  }
  std::string_view component_verdict(std::size_t i) const noexcept {
    return detail::view(archfit_report_component_verdict(get(), i));
  }
  bool component_blocks(std::size_t i) const noexcept {
    return archfit_report_component_blocks(get(), i) == 1;
  }
  // The archfit.check/1 document.
  std::string_view json() const {
    const char* text = nullptr;
    detail::check(archfit_report_json(get(), &text));
    return text;
  }
  // The checklist as `archfit check` prints it; flags: archfit_text_flags.
  std::string_view text(uint32_t flags = ARCHFIT_TEXT_DEFAULT) const {
    const char* out = nullptr;
    detail::check(archfit_report_text(get(), flags, &out));
    return out;
  }
  const archfit_report* get() const noexcept { return handle_.get(); }

 private:
  friend class Context;
  explicit Report(archfit_report* handle) : handle_(handle) {}
  detail::Owner<archfit_report, archfit_report_destroy> handle_;
};

// One error explained (archfit_diagnose_run).
class Diagnosis {
 public:
  archfit_diagnosis_info info() const {
    archfit_diagnosis_info out{};
    out.struct_size = sizeof out;
    detail::check(archfit_diagnosis_get_info(get(), &out));
    return out;
  }
  // Step `i` of the fix, and sentence `i` of the environment's evidence;
  // empty past the last.
  std::string_view fix(std::size_t i) const noexcept {
    return detail::view(archfit_diagnosis_fix(get(), i));
  }
  std::string_view evidence(std::size_t i) const noexcept {
    return detail::view(archfit_diagnosis_evidence(get(), i));
  }
  // The archfit.diagnosis/1 document.
  std::string_view json() const {
    const char* text = nullptr;
    detail::check(archfit_diagnosis_json(get(), &text));
    return text;
  }
  // The diagnosis as `archfit explain` prints it.
  std::string_view text(uint32_t flags = ARCHFIT_TEXT_DEFAULT) const {
    const char* out = nullptr;
    detail::check(archfit_diagnosis_text(get(), flags, &out));
    return out;
  }
  const archfit_diagnosis* get() const noexcept { return handle_.get(); }

 private:
  friend class Context;
  explicit Diagnosis(archfit_diagnosis* handle) : handle_(handle) {}
  detail::Owner<archfit_diagnosis, archfit_diagnosis_destroy> handle_;
};

// A module loaded on one device (Module::load).
class LoadedModule {
 public:
  // The kernel (a CUfunction) registered under that entry point.
  void* function(const std::string& entry_point) const {
    void* out = nullptr;
    detail::check(archfit_loaded_module_function(get(), entry_point.c_str(), &out));
    return out;
  }
  void launch(void* function, const archfit_launch_config& config, void** parameters) const {
    detail::check(archfit_loaded_module_launch(get(), function, &config, parameters));
  }
  // Which path the load took and why; strings borrowed from this module.
  archfit_load_info info() const {
    archfit_load_info out{};
    out.struct_size = sizeof out;
    detail::check(archfit_loaded_module_info(get(), &out));
    return out;
  }
  archfit_loaded_module* get() const noexcept { return handle_.get(); }

 private:
  friend class Module;
  explicit LoadedModule(archfit_loaded_module* handle) : handle_(handle) {}
  detail::Owner<archfit_loaded_module, archfit_loaded_module_destroy> handle_;
};

// An op's kernels, registered once and loaded per device
// (archfit_module_create, Context::module).
class Module {
 public:
  // Loaded on device `ordinal` the first time; the same module after.
  LoadedModule load(int ordinal) const {
    archfit_loaded_module* loaded = nullptr;
    detail::check(archfit_loaded_module_create(handle_.get(), ordinal, &loaded));
    return LoadedModule(loaded);
  }
  archfit_module* get() const noexcept { return handle_.get(); }

 private:
  friend class Context;
  explicit Module(archfit_module* handle) : handle_(handle) {}
  detail::Owner<archfit_module, archfit_module_destroy> handle_;
};

// The plugins found and loaded (archfit_plugin_set_create): copies, so nothing in
// it needs a plugin library to stay loaded.
class PluginSet {
 public:
  std::size_t count() const noexcept { return archfit_plugin_set_count(get()); }
  archfit_plugin_entry entry(std::size_t i) const {
    archfit_plugin_entry out{};
    out.struct_size = sizeof out;
    detail::check(archfit_plugin_set_get(get(), i, &out));
    return out;
  }
  std::string_view module_name(std::size_t i, std::size_t module) const noexcept {
    return detail::view(archfit_plugin_set_module_name(get(), i, module));
  }
  std::size_t rejected_count() const noexcept { return archfit_plugin_set_rejected_count(get()); }
  std::string_view rejected_path(std::size_t i) const noexcept {
    return detail::view(archfit_plugin_set_rejected_path(get(), i));
  }
  std::string_view rejected_reason(std::size_t i) const noexcept {
    return detail::view(archfit_plugin_set_rejected_reason(get(), i));
  }
  // {searched, loaded, rejected}, as `archfit plugins list --json` prints it.
  std::string_view json() const {
    const char* text = nullptr;
    detail::check(archfit_plugin_set_json(get(), &text));
    return text;
  }
  const archfit_plugin_set* get() const noexcept { return handle_.get(); }

 private:
  friend class Context;
  explicit PluginSet(archfit_plugin_set* handle) : handle_(handle) {}
  detail::Owner<archfit_plugin_set, archfit_plugin_set_destroy> handle_;
};

class Context {
 public:
  Context() : Context(nullptr) {}
  explicit Context(const archfit_context_options* options) {
    archfit_context* handle = nullptr;
    detail::check(archfit_context_create(options, &handle));
    handle_.reset(handle);
  }

  Scan scan_file(const std::string& path, uint32_t flags = ARCHFIT_SCAN_DEFAULT) const {
    const archfit_scan_options options{sizeof(archfit_scan_options), flags};
    archfit_scan* scan = nullptr;
    detail::check(archfit_scan_file_run(handle_.get(), path.c_str(), &options, &scan));
    return Scan(scan);
  }
  Scan scan_buffer(const void* data, std::size_t size, const std::string& name = "(buffer)",
                   uint32_t flags = ARCHFIT_SCAN_DEFAULT) const {
    const archfit_scan_options options{sizeof(archfit_scan_options), flags};
    archfit_scan* scan = nullptr;
    detail::check(
        archfit_scan_buffer_run(handle_.get(), data, size, name.c_str(), &options, &scan));
    return Scan(scan);
  }
  // Probe, scan, judge and advise: a failing environment is a Report whose
  // verdict() is ARCHFIT_FAILS; only a check that cannot run throws.
  Report check(const archfit_check_options& options) const {
    archfit_report* report = nullptr;
    detail::check(archfit_check_run(handle_.get(), &options, &report));
    return Report(report);
  }
  Diagnosis diagnose(const archfit_diagnose_options& options) const {
    archfit_diagnosis* diagnosis = nullptr;
    detail::check(archfit_diagnose_run(handle_.get(), &options, &diagnosis));
    return Diagnosis(diagnosis);
  }
  Module module(const archfit_module_desc& desc) const {
    archfit_module* module = nullptr;
    detail::check(archfit_module_create(handle_.get(), &desc, &module));
    return Module(module);
  }
  // search: nullptr for ARCHFIT_PLUGIN_PATH, then the install's plugin folder.
  PluginSet plugins(const archfit_plugin_search* search = nullptr) const {
    archfit_plugin_set* set = nullptr;
    detail::check(archfit_plugin_set_create(handle_.get(), search, &set));
    return PluginSet(set);
  }
  // The kernel module of that name a loaded plugin offers.
  Module module(const PluginSet& plugins, const std::string& module_name) const {
    archfit_module* module = nullptr;
    detail::check(archfit_plugin_set_module_create(handle_.get(), plugins.get(),
                                                   module_name.c_str(), &module));
    return Module(module);
  }
  archfit_context* get() const noexcept { return handle_.get(); }

 private:
  detail::Owner<archfit_context, archfit_context_destroy> handle_;
};

}  // namespace archfit

#endif  // ARCHFIT_ARCHFIT_HPP
