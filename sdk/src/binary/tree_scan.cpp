#include "tree_scan.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <utility>

#include "archive_scan.hpp"
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
    if (S_ISREG(info.st_mode) && named && is_wheel(path)) {
      out.wheels.push_back(path);
    } else if (S_ISREG(info.st_mode)) {
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

namespace {

// One unit of work: a file on disk, or a member of a wheel.
struct WorkItem {
  uint64_t size = 0;
  const fs::path* file = nullptr;
  ZipReaderPool* archive = nullptr;
  ZipMember member;
};

// Serialises the progress callback: workers finish files concurrently.
class ProgressCounter {
 public:
  ProgressCounter(const ProgressCallback& callback, size_t files, uint64_t bytes)
      : callback_(callback) {
    progress_.files_total = files;
    progress_.bytes_total = bytes;
  }
  bool wanted() const { return static_cast<bool>(callback_); }
  // Part of a file read (a wheel member decompresses for seconds).
  void advanced(uint64_t bytes) {
    if (!callback_) return;
    const std::lock_guard lock(mutex_);
    progress_.bytes_done += bytes;
    callback_(progress_);
  }
  // `rest`: the file's bytes not yet reported through advanced().
  void finished(const FileScan& scan, uint64_t rest) {
    if (!callback_) return;
    const std::lock_guard lock(mutex_);
    ++progress_.files_done;
    progress_.bytes_done += rest;
    progress_.last = scan.path;
    callback_(progress_);
  }

 private:
  const ProgressCallback& callback_;
  std::mutex mutex_;
  ScanProgress progress_;
};

}  // namespace

TreeScan scan_tree(const std::vector<fs::path>& paths, const TreeScanOptions& options) {
  FileList list = list_files(paths);
  std::vector<WorkItem> items;
  for (size_t i = 0; i < list.files.size(); ++i)
    items.push_back({list.sizes[i], &list.files[i], nullptr, {}});

  // Each wheel's device-code members; a wheel that will not open is a problem.
  std::vector<std::unique_ptr<ZipReaderPool>> wheels;
  for (const auto& path : list.wheels) {
    try {
      auto pool = std::make_unique<ZipReaderPool>(path);
      auto archive = pool->acquire();
      for (auto& member : archive->members()) {
        if (may_hold_device_code(member.name))
          items.push_back({member.size, nullptr, pool.get(), std::move(member)});
      }
      pool->release(std::move(archive));
      wheels.push_back(std::move(pool));
    } catch (const ZipError& error) {
      FileScan scan;
      scan.path = path.string();
      scan.unreadable = true;
      scan.problems.push_back({0, error.what()});
      list.unreadable.push_back(std::move(scan));
    }
  }

  TreeScan result;
  result.files.resize(items.size());
  const unsigned threads = options.threads ? options.threads : default_threads();
  // Largest first, so one big library does not finish last on one core;
  // when there are fewer items than threads, each gets the spare ones.
  std::vector<std::pair<uint64_t, size_t>> order;
  uint64_t total_bytes = 0;
  for (size_t i = 0; i < items.size(); ++i) {
    order.emplace_back(items[i].size, i);
    total_bytes += items[i].size;
  }
  std::sort(order.begin(), order.end(), std::greater<>());
  ScanOptions per_item = options.scan;
  per_item.threads = std::max<unsigned>(1, threads / std::max<size_t>(1, items.size()));
  ProgressCounter progress(options.on_progress, items.size(), total_bytes);
  parallel_for(order.size(), threads, [&](size_t k) {
    const WorkItem& item = items[order[k].second];
    FileScan& scan = result.files[order[k].second];
    if (item.file) {
      scan = scan_file(*item.file, per_item);
      progress.finished(scan, item.size);
      return;
    }
    uint64_t reported = 0;
    std::function<void(uint64_t)> on_bytes;
    if (progress.wanted()) {
      on_bytes = [&](uint64_t bytes) {
        reported += bytes;
        progress.advanced(bytes);
      };
    }
    scan = scan_member(*item.archive, item.member, per_item, on_bytes);
    progress.finished(scan, item.size - std::min(item.size, reported));
  });
  for (auto& scan : list.unreadable) result.files.push_back(std::move(scan));
  for (const auto& scan : result.files) result.bytes += scan.file_size;
  return result;
}

}  // namespace archfit::binary
