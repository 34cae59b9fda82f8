#pragma once
// `archfit scan PATH...`: every device image in files and directory trees.
#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace archfit::cli {

class ScanCommand {
 public:
  void add_to(CLI::App& app);
  int run() const;

 private:
  std::vector<std::string> paths_;
  bool json_ = false;
  bool images_ = false;
  bool deep_ = false;
  bool all_files_ = false;
  unsigned threads_ = 0;
  bool progress_ = false;
  bool no_progress_ = false;
};

}  // namespace archfit::cli
