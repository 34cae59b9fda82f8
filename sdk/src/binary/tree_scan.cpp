#include "tree_scan.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <utility>

#include "archive_scan.hpp"
#include "file_names.hpp"
#include "file_scan.hpp"
#include "parallel.hpp"
#include "pseudo_filesystem.hpp"
#include "sys/directory_listing.hpp"

namespace archfit::binary {

namespace fs = std::filesystem;

namespace {

using FileId = std::pair<dev_t, ino_t>;

FileStamp stamp_of(const struct stat& info) {
  FileStamp stamp;
  stamp.size = static_cast<uint64_t>(info.st_size);
  stamp.mtime_ns = static_cast<int64_t>(info.st_mtim.tv_sec) * 1'000'000'000 + info.st_mtim.tv_nsec;
  stamp.ctime_ns = static_cast<int64_t>(info.st_ctim.tv_sec) * 1'000'000'000 + info.st_ctim.tv_nsec;
  stamp.device = static_cast<uint64_t>(info.st_dev);
  stamp.inode = static_cast<uint64_t>(info.st_ino);
  return stamp;
}

struct Walker {
  FileList& out;
  const ReuseListing& reuse_listing;
  const ProgressCallback& on_progress;
  std::set<FileId> seen;
  // The real path of the directory named, which the walk never leaves
  // (tree_scan.hpp); "" while no directory is being walked.
  std::string root;

  void problem(const std::string& path, const std::string& message) {
    FileScan scan;
    scan.path = path;
    scan.unreadable = true;
    scan.problems.push_back({0, message});
    out.unreadable.push_back(std::move(scan));
  }

  // Whether the directory `path` (a symbolic link) resolves inside `root`;
  // one that does not is recorded as skipped.
  bool stays_inside_root(const std::string& path) {
    std::unique_ptr<char, decltype(&std::free)> real(::realpath(path.c_str(), nullptr), &std::free);
    if (!real) return false;  // gone or unreadable since listed: nothing to follow
    const std::string_view target = real.get();
    const bool inside =
        root == "/" || target == root || (target.starts_with(root) && target[root.size()] == '/');
    if (!inside) {
      out.skipped.push_back(
          {path, "a symbolic link to " + std::string(target) + ", outside " + root});
    }
    return inside;
  }

  // Paths are plain strings here: a tree of 17,000 files would spend more
  // time parsing std::filesystem::path components than reading directories.
  // `parent_device`: the file system of the directory listing `path`.
  void visit(const std::string& path, std::string_view name, bool named, dev_t parent_device) {
    struct stat info {};
    if (named) {
      if (::stat(path.c_str(), &info) != 0) {
        problem(path, "cannot read: " + std::string(std::strerror(errno)));
        return;
      }
    } else {
      if (::lstat(path.c_str(), &info) != 0) return;  // gone since it was listed
      if (S_ISLNK(info.st_mode)) {
        // A dangling symlink met inside a tree is not the user's question.
        if (::stat(path.c_str(), &info) != 0) return;
        if (S_ISDIR(info.st_mode) && !stays_inside_root(path)) return;
      }
    }
    if (!named && S_ISREG(info.st_mode) && never_device_code(name)) return;
    if (!seen.insert({info.st_dev, info.st_ino}).second) return;  // loop or alias
    if (S_ISREG(info.st_mode) && named && is_wheel(path)) {
      out.wheels.emplace_back(path);
    } else if (S_ISREG(info.st_mode)) {
      out.files.emplace_back(path);
      out.stamps.push_back(stamp_of(info));
    } else if (S_ISDIR(info.st_mode)) {
      // Asked where a file system may begin: once per mount, not per directory.
      if (named || info.st_dev != parent_device) {
        if (const std::string kind = pseudo_filesystem_of(path); !kind.empty()) {
          const std::string why =
              "on " + kind + ", a kernel pseudo-filesystem that holds no libraries";
          if (named) {
            problem(path, "not walked: it is " + why);
          } else {
            out.skipped.push_back({path, why});
          }
          return;
        }
      }
      if (named) {
        std::unique_ptr<char, decltype(&std::free)> real(::realpath(path.c_str(), nullptr),
                                                         &std::free);
        root = real ? real.get() : path;
      }
      walk_directory(path, stamp_of(info), info.st_dev);
    } else if (named) {
      out.files.emplace_back(path);  // scan_file says what it is
      out.stamps.push_back({});
    }
    // Inside a tree, a FIFO, socket or device is passed over: none holds
    // device code, and opening one can block or never end.
  }

  // sys::DirectoryListing (readdir) rather than std::filesystem: its entry
  // types (d_type) let the thousands of sources and headers in a
  // site-packages be passed over by name without a stat each (a torch venv:
  // 16,910 files, about 600 of them read). An
  // unchanged directory is not read at all when an earlier walk's listing
  // of it is offered (reuse_listing).
  void walk_directory(const std::string& dir, const FileStamp& stamp, dev_t device) {
    report_progress(dir);
    if (reuse_listing) {
      if (const std::vector<std::string>* names = reuse_listing(dir, stamp)) {
        ++out.listings_reused;
        out.directories.push_back({dir, stamp, *names});
        visit_children(dir, *names, device);  // not directories.back(): the walk below appends
        return;
      }
    }
    struct Child {
      std::string name;
      bool link = false;
    };
    std::vector<Child> children;
    bool complete = true;
    {  // closed before the children are visited: one open directory at a time
      using Type = sys::DirectoryListing::Type;
      sys::DirectoryListing listing = sys::DirectoryListing::open(dir);
      if (!listing.is_open()) {
        problem(dir, "cannot list directory: " + listing.problem());
        return;
      }
      while (const auto entry = listing.next()) {
        const bool file_or_link = entry->type == Type::file || entry->type == Type::link;
        if (file_or_link && never_device_code(entry->name)) continue;
        children.push_back({std::string(entry->name), entry->type == Type::link});
      }
      if (!listing.problem().empty()) {
        complete = false;
        problem(dir, "cannot list directory: " + listing.problem());
      }
    }
    // Real files before the symlinks that alias them, then by name.
    std::sort(children.begin(), children.end(), [](const Child& a, const Child& b) {
      return a.link != b.link ? !a.link : a.name < b.name;
    });
    std::vector<std::string> names;
    names.reserve(children.size());
    for (auto& child : children) names.push_back(std::move(child.name));
    if (complete) {
      out.directories.push_back({dir, stamp, names});  // a listing cut short is not kept
    }
    visit_children(dir, names, device);
  }

  void visit_children(const std::string& dir, const std::vector<std::string>& names, dev_t device) {
    std::string child_path = dir;
    if (!child_path.ends_with('/')) child_path += '/';
    const size_t base = child_path.size();
    for (const auto& name : names) {
      child_path.resize(base);
      child_path += name;
      visit(child_path, name, false, device);
    }
  }

  void report_progress(const std::string& dir) {
    if (!on_progress) return;
    ScanProgress progress;
    progress.walking = true;
    progress.directories = out.directories.size() + 1;
    progress.files_total = out.files.size() + out.wheels.size();
    progress.last = dir;
    on_progress(progress);
  }
};

int64_t wall_clock_ns() {
  struct timespec now {};
  ::clock_gettime(CLOCK_REALTIME, &now);
  return static_cast<int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
}

}  // namespace

FileList list_files(const std::vector<fs::path>& paths, const ReuseListing& reuse_listing,
                    const ProgressCallback& on_progress) {
  FileList list;
  list.started_ns = wall_clock_ns();
  Walker walker{list, reuse_listing, on_progress, {}, {}};
  for (const auto& path : paths) walker.visit(path.string(), path.filename().native(), true, 0);
  return list;
}

namespace {

// One unit of work: a file on disk, or a member of a wheel.
struct WorkItem {
  uint64_t size = 0;
  const fs::path* file = nullptr;
  FileStamp stamp;  // a file's
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
  FileList list = list_files(paths, options.reuse_listing, options.on_progress);
  std::vector<WorkItem> items;
  for (size_t i = 0; i < list.files.size(); ++i)
    items.push_back({list.stamps[i].size, &list.files[i], list.stamps[i], nullptr, {}});

  // Each wheel's device-code members; a wheel that will not open is a problem.
  std::vector<std::unique_ptr<ZipReaderPool>> wheels;
  for (const auto& path : list.wheels) {
    try {
      auto pool = std::make_unique<ZipReaderPool>(path, options.archive_limits);
      auto archive = pool->acquire();
      for (auto& member : archive->members()) {
        if (may_hold_device_code(member.name))
          items.push_back({member.size, nullptr, {}, pool.get(), std::move(member)});
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
  result.stamps.resize(items.size());
  std::atomic<size_t> reused{0};
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
      result.stamps[order[k].second] = item.stamp;
      if (options.reuse && item.stamp != FileStamp{}) {
        if (auto earlier = options.reuse(item.file->native(), item.stamp)) {
          scan = std::move(*earlier);
          ++reused;
          progress.finished(scan, item.size);
          return;
        }
      }
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
  result.reused = reused;
  result.directories = std::move(list.directories);
  result.listings_reused = list.listings_reused;
  result.started_ns = list.started_ns;
  result.skipped = std::move(list.skipped);
  for (auto& scan : list.unreadable) {
    result.files.push_back(std::move(scan));
    result.stamps.emplace_back();
  }
  for (const auto& scan : result.files) {
    if (!scan.unreadable) result.bytes += scan.file_size;  // a member not read was not scanned
  }
  return result;
}

}  // namespace archfit::binary
