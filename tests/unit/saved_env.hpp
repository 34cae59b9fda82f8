#pragma once
// Remembers environment variables and puts them back as they were, set or
// unset, when it goes out of scope: a test can then set them freely.
#include <cstdlib>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace archfit::testing {

// setenv/unsetenv where POSIX has them, _putenv_s on Windows (the tests also
// run cross-built under Wine); an empty value unsets a variable there.
inline void set_env(const char* name, const char* value) {
#ifdef _WIN32
  ::_putenv_s(name, value);
#else
  ::setenv(name, value, 1);
#endif
}
inline void unset_env(const char* name) {
#ifdef _WIN32
  ::_putenv_s(name, "");
#else
  ::unsetenv(name);
#endif
}

class SavedEnv {
 public:
  SavedEnv(std::initializer_list<const char*> names) {
    for (const char* name : names) {
      const char* value = std::getenv(name);
      saved_.emplace_back(name, value ? std::optional<std::string>(value) : std::nullopt);
    }
  }
  ~SavedEnv() {
    for (const auto& [name, value] : saved_) {
      if (value) {
        set_env(name.c_str(), value->c_str());
      } else {
        unset_env(name.c_str());
      }
    }
  }
  SavedEnv(const SavedEnv&) = delete;
  SavedEnv& operator=(const SavedEnv&) = delete;

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

}  // namespace archfit::testing
