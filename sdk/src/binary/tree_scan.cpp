#include "tree_scan.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <utility>

#include "archive_scan.hpp"
#include "file_names.hpp"
#include "file_scan.hpp"
#include "parallel.hpp"
#include "sys/directory_listing.hpp"
#include "sys/file_status.hpp"
#include "sys/pseudo_filesystem.hpp"
#include "sys/utf8_path.hpp"

namespace archfit::binary {

namespace fs = std::filesystem;

namespace {

using FileId = std::pair<uint64_t, uint64_t>;  // device, inode

using sys::FileType;

// The real path of `path`, every link resolved; "" when it cannot be had.
std::string resolved(const std::string& path) { return sys::real_path(path); }

// The OS's own separator: '/' on POSIX, a backslash on Windows, so the
// paths a walk reports read as the user's own (C:\ComfyUI\python_embeded).
constexpr char kSeparator = static_cast<char>(fs::path::preferred_separator);

bool ends_with_separator(const std::string& path) {
  return path.ends_with(kSeparator) || path.ends_with('/');
}

std::string child_of(const std::string& dir, std::string_view name) {
  std::string child = dir;
  if (!ends_with_separator(child)) child += kSeparator;
  child += name;
  return child;
}

struct Walker {
  FileList& out;
  const ReuseListing& reuse_listing;
  const ProgressCallback& on_progress;
  // Every file and directory met, with the index of the file in out.files
  // (kNotAFile for a directory or a wheel).
  static constexpr size_t kNotAFile = static_cast<size_t>(-1);
  std::map<FileId, size_t> seen;
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

  // Whether the directory `path` (a symbolic link that resolves to `target`)
  // lies inside `root`; one that does not is recorded as skipped.
  bool stays_inside_root(const std::string& path, const std::string& target) {
    if (target.empty()) return false;  // gone or unreadable since listed: nothing to follow
    const bool inside =
        ends_with_separator(root)
            ? target.starts_with(root)
            : target == root || (target.starts_with(root) && (target[root.size()] == kSeparator));
    if (!inside)
      out.skipped.push_back({path, "a symbolic link to " + target + ", outside " + root});
    return inside;
  }

  void add_file(const std::string& path, const FileStamp& stamp, std::string real_path) {
    seen[{stamp.device, stamp.inode}] = out.files.size();
    out.files.push_back(sys::path_of_utf8(path));
    out.stamps.push_back(stamp);
    out.real_paths.push_back(std::move(real_path));
  }

  // Paths are plain strings here: a tree of 17,000 files would spend more
  // time parsing std::filesystem::path components than reading directories.
  // `parent_device`: the file system of the directory listing `path`;
  // `parent_real`: that directory's real path ("" for a path named).
  void visit(const std::string& path, std::string_view name, bool named, uint64_t parent_device,
             const std::string& parent_real) {
    std::optional<sys::FileStatus> found;
    sys::StatusFailure failure;
    bool link = false;
    if (named) {
      found = sys::file_status(sys::path_of_utf8(path), sys::Links::follow, &failure);
      if (!found) {
        problem(path, "cannot read: " + stat_failure(failure));
        return;
      }
    } else {
      found = sys::file_status(sys::path_of_utf8(path), sys::Links::not_followed, &failure);
      if (!found) {
        // Gone since it was listed: nothing to judge. Anything else (a path
        // longer than the OS takes, an I/O error) is a file not read.
        if (!failure.missing) problem(path, "cannot read: " + stat_failure(failure));
        return;
      }
      if (found->type == FileType::link) {
        link = true;
        // A dangling symlink met inside a tree is not the user's question.
        found = sys::file_status(sys::path_of_utf8(path), sys::Links::follow);
        if (!found) return;
      }
    }
    const FileType type = found->type;
    const FileStamp& stamp = found->stamp;
    if (!named && type == FileType::file && never_device_code(name)) return;
    // Where it really is: known from the walk for what is not a link.
    std::string real_path = named || link ? resolved(path) : child_of(parent_real, name);
    if (link && type == FileType::directory && !stays_inside_root(path, real_path)) return;
    const auto [earlier, first_time] = seen.try_emplace({stamp.device, stamp.inode}, kNotAFile);
    if (!first_time) {
      // A loop or an alias is passed over; another name of a regular file
      // that is not a link is a hard link, judged under its own name too.
      if (type == FileType::file && !link && earlier->second != kNotAFile)
        out.hard_links.push_back({path, earlier->second});
      return;
    }
    if (type == FileType::file && named && is_wheel(path)) {
      out.wheels.push_back(sys::path_of_utf8(path));
    } else if (type == FileType::file) {
      add_file(path, stamp, std::move(real_path));
    } else if (type == FileType::directory) {
      // Asked where a file system may begin: once per mount, not per directory.
      if (named || stamp.device != parent_device) {
        if (const std::string kind = sys::pseudo_filesystem_of(path); !kind.empty()) {
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
      if (named) root = real_path.empty() ? path : real_path;
      walk_directory(path, real_path.empty() ? path : real_path, stamp, stamp.device);
    } else if (named) {
      out.files.push_back(sys::path_of_utf8(path));  // scan_file says what it is
      out.stamps.push_back({});
      out.real_paths.emplace_back();
    }
    // Inside a tree, a FIFO, socket or device is passed over: none holds
    // device code, and opening one can block or never end.
  }

  static std::string stat_failure(const sys::StatusFailure& failure) {
    return failure.name_too_long ? too_long() : failure.reason;
  }

  static std::string too_long() {
    return "its path is longer than this system lets a program name a file (PATH_MAX, " +
           std::to_string(PATH_MAX) + " bytes), so it was not read";
  }

  // sys::DirectoryListing (readdir) rather than std::filesystem: its entry
  // types (d_type) let the thousands of sources and headers in a
  // site-packages be passed over by name without a stat each (a torch venv:
  // 16,910 files, about 600 of them read). An
  // unchanged directory is not read at all when an earlier walk's listing
  // of it is offered (reuse_listing).
  // `stamp`: the directory as the walk stat'ed it; `real_dir`: where it
  // really is.
  void walk_directory(const std::string& dir, const std::string& real_dir, const FileStamp& stamp,
                      uint64_t device) {
    report_progress(dir);
    if (reuse_listing) {
      if (const std::vector<std::string>* names = reuse_listing(dir, stamp)) {
        ++out.listings_reused;
        out.directories.push_back({dir, stamp, *names});
        // Not directories.back(): the walk below appends.
        visit_children(dir, real_dir, *names, device);
        return;
      }
    }
    struct Child {
      std::string name;
      bool link = false;
    };
    std::vector<Child> children;
    bool complete = true;
    FileStamp listed;  // the directory actually opened: a link may have changed since the stat
    {                  // closed before the children are visited: one open directory at a time
      using Type = sys::DirectoryListing::Type;
      sys::DirectoryListing listing = sys::DirectoryListing::open(sys::path_of_utf8(dir));
      if (!listing.is_open()) {
        const bool too_long = listing.problem() == std::strerror(ENAMETOOLONG);
        problem(dir,
                "cannot list directory: " + (too_long ? Walker::too_long() : listing.problem()));
        return;
      }
      listed = listing.stamp();
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
    // A listing cut short is not kept, nor one of another directory than the
    // walk stat'ed: a link flipped between the two, and the names belong to
    // the directory listed, under whose stamp alone they may be kept.
    if (complete) out.directories.push_back({dir, listed == stamp ? stamp : FileStamp{}, names});
    visit_children(dir, real_dir, names, device);
  }

  void visit_children(const std::string& dir, const std::string& real_dir,
                      const std::vector<std::string>& names, uint64_t device) {
    std::string child_path = dir;
    if (!ends_with_separator(child_path)) child_path += kSeparator;
    const size_t base = child_path.size();
    for (const auto& name : names) {
      child_path.resize(base);
      child_path += name;
      visit(child_path, name, false, device, real_dir);
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
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

FileList list_files(const std::vector<fs::path>& paths, const ReuseListing& reuse_listing,
                    const ProgressCallback& on_progress) {
  FileList list;
  list.started_ns = wall_clock_ns();
  Walker walker{list, reuse_listing, on_progress, {}, {}};
  for (const auto& path : paths)
    walker.visit(sys::utf8_of(path), sys::utf8_of(path.filename()), true, 0, "");
  return list;
}

namespace {

// One unit of work: a file on disk, or a member of a wheel.
struct WorkItem {
  uint64_t size = 0;
  const fs::path* file = nullptr;
  FileStamp stamp;  // a file's, as the walk found it
  const std::string* real_path = nullptr;
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
    items.push_back(
        {list.stamps[i].size, &list.files[i], list.stamps[i], &list.real_paths[i], nullptr, {}});

  // Each wheel's device-code members; a wheel that will not open is a problem.
  std::vector<std::unique_ptr<ZipReaderPool>> wheels;
  for (const auto& path : list.wheels) {
    try {
      auto pool = std::make_unique<ZipReaderPool>(path, options.archive_limits);
      auto archive = pool->acquire();
      for (auto& member : archive->members()) {
        if (may_hold_device_code(member.name))
          items.push_back({member.size, nullptr, {}, nullptr, pool.get(), std::move(member)});
      }
      pool->release(std::move(archive));
      wheels.push_back(std::move(pool));
    } catch (const ZipError& error) {
      FileScan scan;
      scan.path = sys::utf8_of(path);
      scan.unreadable = true;
      scan.problems.push_back({0, error.what()});
      list.unreadable.push_back(std::move(scan));
    }
  }

  TreeScan result;
  result.files.resize(items.size());
  result.stamps.resize(items.size());
  result.real_paths.resize(items.size());
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
      if (options.reuse && item.stamp != FileStamp{}) {
        if (auto earlier = options.reuse(sys::utf8_of(*item.file), item.stamp, *item.real_path)) {
          scan = std::move(*earlier);
          result.stamps[order[k].second] = item.stamp;
          result.real_paths[order[k].second] = *item.real_path;
          ++reused;
          progress.finished(scan, item.size);
          return;
        }
      }
      // What was read is kept under the file actually opened, which a link
      // flipped since the walk's stat may have changed.
      OpenedFile opened;
      scan = scan_file(*item.file, per_item, &opened);
      if (!opened.real_path.empty()) {
        result.stamps[order[k].second] = opened.stamp;
        result.real_paths[order[k].second] = std::move(opened.real_path);
      }
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
  for (const auto& scan : result.files) {
    if (!scan.unreadable) result.bytes += scan.file_size;  // a member not read was not scanned
  }
  // Each hard link: what its file's scan found, under its own name.
  for (const HardLink& link : list.hard_links) {
    FileScan copy = result.files.at(link.same_as);
    copy.path = link.path;
    result.files.push_back(std::move(copy));
    result.stamps.emplace_back();
    result.real_paths.emplace_back();
  }
  result.hard_links = list.hard_links.size();
  for (auto& scan : list.unreadable) {
    result.files.push_back(std::move(scan));
    result.stamps.emplace_back();
    result.real_paths.emplace_back();
  }
  return result;
}

}  // namespace archfit::binary
