#include "tree_scan.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <set>
#include <utility>

#include "file_scan.hpp"
#include "parallel.hpp"

namespace archfit::binary {

namespace fs = std::filesystem;

namespace {

using FileId = std::pair<dev_t, ino_t>;

struct Walker {
  FileList& out;
  std::set<FileId> seen;

  void problem(const fs::path& path, const std::string& message) {
    FileScan scan;
    scan.path = path.string();
    scan.unreadable = true;
    scan.problems.push_back({0, message});
    out.unreadable.push_back(std::move(scan));
  }

  void visit(const fs::path& path, bool named) {
    struct stat info {};
    if (::stat(path.c_str(), &info) != 0) {
      // A dangling symlink met inside a tree is not the user's question.
      if (named) problem(path, "cannot read: " + std::string(std::strerror(errno)));
      return;
    }
    if (!seen.insert({info.st_dev, info.st_ino}).second) return;  // loop or alias
    if (S_ISREG(info.st_mode)) {
      out.files.push_back(path);
      out.sizes.push_back(static_cast<uint64_t>(info.st_size));
    } else if (S_ISDIR(info.st_mode)) {
      std::error_code error;
      std::vector<fs::path> children;
      for (fs::directory_iterator it(path, error), end; !error && it != end; it.increment(error)) {
        children.push_back(it->path());
      }
      if (error) problem(path, "cannot list directory: " + error.message());
      // Real files before the symlinks that alias them, then by name.
      std::sort(children.begin(), children.end(), [](const fs::path& a, const fs::path& b) {
        const bool a_link = fs::is_symlink(a), b_link = fs::is_symlink(b);
        return a_link != b_link ? !a_link : a < b;
      });
      for (const auto& child : children) visit(child, false);
    } else if (named) {
      out.files.push_back(path);  // scan_file says what it is
      out.sizes.push_back(0);
    }
  }
};

}  // namespace

FileList list_files(const std::vector<fs::path>& paths) {
  FileList list;
  Walker walker{list, {}};
  for (const auto& path : paths) walker.visit(path, true);
  return list;
}

TreeScan scan_tree(const std::vector<fs::path>& paths, const TreeScanOptions& options) {
  FileList list = list_files(paths);
  TreeScan result;
  result.files.resize(list.files.size());
  const unsigned threads = options.threads ? options.threads : default_threads();
  // Largest files first, so one big library does not finish last on one core;
  // when there are fewer files than threads, each file gets the spare ones.
  std::vector<std::pair<uint64_t, size_t>> order;
  for (size_t i = 0; i < list.files.size(); ++i) order.emplace_back(list.sizes[i], i);
  std::sort(order.begin(), order.end(), std::greater<>());
  ScanOptions per_file = options.scan;
  per_file.threads = std::max<unsigned>(1, threads / std::max<size_t>(1, list.files.size()));
  parallel_for(order.size(), threads, [&](size_t k) {
    const size_t i = order[k].second;
    result.files[i] = scan_file(list.files[i], per_file);
  });
  for (auto& scan : list.unreadable) result.files.push_back(std::move(scan));
  for (const auto& scan : result.files) result.bytes += scan.file_size;
  return result;
}

}  // namespace archfit::binary
