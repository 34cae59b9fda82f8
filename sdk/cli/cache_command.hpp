#pragma once
// `archfit cache list|stats|verify|clear`: the JIT kernel cache
// (sdk/src/jit/cache/) as the environment configures it.
#include <CLI/CLI.hpp>

namespace archfit::cli {

class CacheCommand {
 public:
  void add_to(CLI::App& app);
  bool chosen() const;
  int run() const;

 private:
  CLI::App* cache_ = nullptr;
  CLI::App* list_ = nullptr;
  CLI::App* stats_ = nullptr;
  CLI::App* verify_ = nullptr;
  CLI::App* clear_ = nullptr;
  bool json_ = false;
};

}  // namespace archfit::cli
