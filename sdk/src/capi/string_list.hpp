#pragma once
// A C array of strings with its count, as the ABI's input structs pass them:
// NULL with a count, or a NULL entry, is an invalid argument naming the field.
#include <string>
#include <vector>

#include "guard.hpp"

namespace archfit::capi {

inline std::vector<std::string> string_list(const char* const* items, size_t count,
                                            const char* name) {
  if (count != 0 && items == nullptr) {
    throw ApiError{ARCHFIT_ERROR_INVALID_ARGUMENT,
                   std::string(name) + " is NULL but its count is not 0"};
  }
  std::vector<std::string> out;
  for (size_t i = 0; i < count; ++i) {
    if (items[i] == nullptr) {
      throw ApiError{ARCHFIT_ERROR_INVALID_ARGUMENT,
                     std::string(name) + "[" + std::to_string(i) + "] is NULL"};
    }
    out.emplace_back(items[i]);
  }
  return out;
}

}  // namespace archfit::capi
