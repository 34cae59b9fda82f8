#pragma once
// The one place where C++ meets the C ABI: every extern "C" body runs inside
// guarded(), which turns any exception into an archfit_status plus a
// thread-local message, so nothing C++ ever crosses the boundary.
#include <cstddef>
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <string_view>
#include <system_error>

#include "archfit/archfit.h"

namespace archfit::capi {

// An error the shims raise on purpose, with the status it maps to.
struct ApiError {
  archfit_status status;
  std::string message;
};

// Sets this thread's message to "<function>: <what><detail>". The text is
// put together inside, under its own try: building it in a catch handler of
// a noexcept function would turn an out-of-memory into std::terminate.
void set_last_error(const char* function, std::string_view what,
                    std::string_view detail = {}) noexcept;
void clear_last_error() noexcept;

template <typename Body>
archfit_status guarded(const char* function, Body&& body) noexcept {
  try {
    body();
    return ARCHFIT_OK;
  } catch (const ApiError& error) {
    set_last_error(function, error.message);
    return error.status;
  } catch (const std::bad_alloc&) {
    set_last_error(function, "out of memory");
    return ARCHFIT_ERROR_OUT_OF_MEMORY;
  } catch (const std::system_error& error) {
    set_last_error(function, error.what());
    return ARCHFIT_ERROR_IO;
  } catch (const std::exception& error) {
    set_last_error(function, "internal error: ", error.what());
    return ARCHFIT_ERROR_INTERNAL;
  } catch (...) {
    set_last_error(function, "internal error (unknown exception)");
    return ARCHFIT_ERROR_INTERNAL;
  }
}

template <typename T>
void require_argument(const T* pointer, const char* name) {
  if (pointer == nullptr)
    throw ApiError{ARCHFIT_ERROR_INVALID_ARGUMENT, std::string(name) + " is NULL"};
}

// Input structs: NULL means defaults; a known struct_size prefix is read, and a
// struct larger than this library knows is accepted only when the unknown
// tail is zero (fields this library would otherwise silently ignore).
template <typename T>
T read_options(const T* given, const char* name) {
  T options{};
  options.struct_size = sizeof(T);
  if (given == nullptr) return options;
  if (given->struct_size < sizeof(uint32_t) * 2 || given->struct_size > sizeof(T) + 1024) {
    throw ApiError{ARCHFIT_ERROR_INVALID_ARGUMENT, std::string(name) + "->struct_size is " +
                                                       std::to_string(given->struct_size) +
                                                       "; set it to sizeof(" + name + ")"};
  }
  const size_t known = given->struct_size < sizeof(T) ? given->struct_size : sizeof(T);
  const auto* bytes = reinterpret_cast<const unsigned char*>(given);
  for (size_t i = sizeof(T); i < given->struct_size; ++i) {
    if (bytes[i] != 0) {
      throw ApiError{ARCHFIT_ERROR_UNSUPPORTED, std::string(name) +
                                                    " sets fields newer than this library (" +
                                                    archfit_version_string() + ") knows"};
    }
  }
  std::memcpy(&options, given, known);
  options.struct_size = sizeof(T);
  return options;
}

// Output structs, the other way: the caller sets `struct_size`; a caller
// built against any release since `first_release` bytes is answered with the
// fields both know (what fits its struct_size), and a newer caller's tail is
// left as it was. Smaller than any release: INVALID_ARGUMENT naming `name`.
template <typename T>
void write_output(T* out, T filled, std::size_t first_release, const char* name, const char* type) {
  if (out->struct_size < first_release) {
    throw ApiError{ARCHFIT_ERROR_INVALID_ARGUMENT,
                   std::string(name) + "->struct_size is " + std::to_string(out->struct_size) +
                       ", smaller than any " + type + " (" + std::to_string(first_release) +
                       "): set it to sizeof(" + type + ")"};
  }
  filled.struct_size = out->struct_size;
  std::memcpy(out, &filled, out->struct_size < sizeof(T) ? out->struct_size : sizeof(T));
}

}  // namespace archfit::capi
