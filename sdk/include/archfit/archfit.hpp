// archfit — a header-only C++17 wrapper over the C ABI in archfit.h.
// Handles become move-only RAII owners; a failing status becomes
// archfit::Error carrying the status and archfit_last_error().
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
    detail::check(archfit_scan_file(handle_.get(), path.c_str(), &options, &scan));
    return Scan(scan);
  }
  Scan scan_buffer(const void* data, std::size_t size, const std::string& name = "(buffer)",
                   uint32_t flags = ARCHFIT_SCAN_DEFAULT) const {
    const archfit_scan_options options{sizeof(archfit_scan_options), flags};
    archfit_scan* scan = nullptr;
    detail::check(archfit_scan_buffer(handle_.get(), data, size, name.c_str(), &options, &scan));
    return Scan(scan);
  }
  archfit_context* get() const noexcept { return handle_.get(); }

 private:
  std::unique_ptr<archfit_context, detail::Deleter<archfit_context, archfit_context_destroy>>
      handle_;
};

}  // namespace archfit

#endif  // ARCHFIT_ARCHFIT_HPP
