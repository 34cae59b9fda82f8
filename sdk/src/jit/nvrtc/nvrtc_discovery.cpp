#include "nvrtc_discovery.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <set>
#include <utility>

#include "binary/byte_reader.hpp"
#include "binary/elf.hpp"
#include "binary/elf_host_binary.hpp"
#include "binary/pe.hpp"
#include "binary/pe_host_binary.hpp"
#include "binary/scan_error.hpp"
#include "env/cuda_libraries.hpp"
#include "sys/file_status.hpp"
#include "sys/library_loading.hpp"
#include "sys/mapped_file.hpp"
#include "sys/trust.hpp"
#include "sys/utf8_path.hpp"

namespace archfit::jit {

namespace fs = std::filesystem;

namespace {

using FileId = std::pair<uint64_t, uint64_t>;  // device, inode

std::optional<FileId> file_id(const fs::path& path) {
  const auto status = sys::file_status(path, sys::Links::follow);
  if (!status) return std::nullopt;
  return FileId{status->stamp.device, status->stamp.inode};
}

std::vector<uint64_t> version_parts(const std::string& version) {
  std::vector<uint64_t> parts;
  uint64_t value = 0;
  bool digits = false;
  for (const char c : version) {
    if (c >= '0' && c <= '9') {
      value = value * 10 + static_cast<uint64_t>(c - '0');
      digits = true;
    } else if (c == '.') {
      parts.push_back(value);
      value = 0;
      digits = false;
    } else {
      break;  // "12.4.127rc1": the numbers before anything else
    }
  }
  if (digits) parts.push_back(value);
  return parts;
}

// The NVRTC copies of one kind of place, in env/cuda_libraries' order, that
// this OS can load: a Linux process lists a Windows folder's nvrtc64_*.dll
// (a Windows environment read from WSL) but cannot load it.
std::vector<NvrtcCandidate> listed(const env::CudaLibrarySearch& search,
                                   const std::string& origin) {
  std::vector<NvrtcCandidate> out;
  for (auto& library : env::find_cuda_libraries(search)) {
    if (library.name != "nvrtc" ||
        !sys::is_library_name_of_this_os(sys::utf8_of(library.path.filename())))
      continue;
    out.push_back({std::move(library.path), std::move(library.version),
                   std::move(library.version_source),
                   origin.empty() ? std::move(library.origin) : origin});
  }
  return out;
}

env::CudaLibrarySearch nothing() {
  env::CudaLibrarySearch search;
  search.default_toolkit.clear();
  return search;
}

// ARCHFIT_NVRTC: a directory is searched like a loader path entry; a file is
// a candidate whatever its name, with a version when the directory listing
// knows it.
std::vector<NvrtcCandidate> from_archfit_nvrtc(const fs::path& path) {
  std::error_code error;
  auto search = nothing();
  if (fs::is_directory(path, error)) {
    search.ld_library_path = {path};
    return listed(search, "ARCHFIT_NVRTC");
  }
  search.ld_library_path = {path.parent_path().empty() ? fs::path(".") : path.parent_path()};
  const auto id = file_id(path);
  if (id) {
    for (auto& candidate : listed(search, "ARCHFIT_NVRTC")) {
      if (file_id(candidate.path) == id) {
        candidate.path = path;  // as the user wrote it
        return {std::move(candidate)};
      }
    }
  }
  // Not named libnvrtc.so* (nvrtc64_*.dll), or missing: loading it says what is wrong.
  return {{path, "", "", "ARCHFIT_NVRTC"}};
}

// "13.0.88" from "…release 13.0, V13.0.88…" starting at `text`; "" if the
// text is not one ("release %d.%d, " is a format string beside it).
std::string release_at(std::string_view text) {
  const size_t v = text.find(", V");
  if (text.empty() || text[0] < '0' || text[0] > '9' || v == std::string_view::npos || v > 16)
    return {};
  std::string release;
  for (const char c : text.substr(v + 3)) {
    if ((c < '0' || c > '9') && c != '.') break;
    release += c;
  }
  return release;
}

// The searches find_nvrtc makes, one per kind of place, in rank order
// (ARCHFIT_NVRTC is handled apart).
std::vector<env::CudaLibrarySearch> searches(const NvrtcSearch& search) {
  std::vector<env::CudaLibrarySearch> out;
  if (!search.cuda_home.empty()) {
    auto cuda_home = nothing();
    cuda_home.cuda_home = search.cuda_home;
    cuda_home.cuda_home_variable = search.cuda_home_variable;
    out.push_back(std::move(cuda_home));
  }
  auto loader = nothing();
  loader.ld_library_path = search.ld_library_path;
  loader.loader_dirs = search.loader_dirs;
  out.push_back(std::move(loader));
  auto wheels = nothing();
  wheels.site_packages = search.site_packages;
  out.push_back(std::move(wheels));
  if (!search.default_toolkit.empty()) {
    auto toolkit = nothing();
    toolkit.default_toolkit = search.default_toolkit;
    out.push_back(std::move(toolkit));
  }
  return out;
}

}  // namespace

std::string read_nvrtc_release(const fs::path& library) {
  constexpr std::string_view kPrefix = "Cuda compilation tools, release ";
  std::error_code error;
  if (!fs::is_regular_file(library, error)) return {};  // not a FIFO to block on
  // Mapped: of a 100 MB library only the pages of its headers and of its
  // read-only data are read.
  const sys::MappedFile file = sys::MappedFile::open(library);
  if (file.kind() != sys::MappedFile::Kind::mapped) return {};
  const binary::ByteReader bytes(file.bytes());
  // The string sits in read-only data: .rodata on Linux, .rdata in a DLL.
  binary::HostBinary host;
  std::string_view data_section;
  try {
    if (binary::classify_elf(bytes) == binary::ElfClass::elf64_le) {
      host = binary::read_elf_host_binary(bytes);
      data_section = ".rodata";
    } else if (binary::classify_pe(bytes) == binary::PeClass::pe32_plus) {
      host = binary::read_pe_host_binary(bytes);
      data_section = ".rdata";
    } else {
      return {};
    }
  } catch (const binary::ScanError&) {
    return {};  // damaged: loading it says what is wrong
  }
  for (const auto& section : host.sections) {
    if (section.name != data_section || !bytes.contains(section.offset, section.size)) continue;
    const std::string_view text(reinterpret_cast<const char*>(file.bytes().data()) + section.offset,
                                static_cast<size_t>(section.size));
    for (size_t at = text.find(kPrefix); at != std::string_view::npos;
         at = text.find(kPrefix, at + 1)) {
      if (auto release = release_at(text.substr(at + kPrefix.size())); !release.empty())
        return release;
    }
  }
  return {};
}

int compare_versions(const std::string& a, const std::string& b) {
  auto left = version_parts(a);
  auto right = version_parts(b);
  const size_t size = std::max(left.size(), right.size());
  left.resize(size, 0);
  right.resize(size, 0);
  if (left < right) return -1;
  if (right < left) return 1;
  return 0;
}

NvrtcSearch nvrtc_search_over(const fs::path& archfit_nvrtc, const env::CudaLibrarySearch& loader) {
  NvrtcSearch search;
  search.archfit_nvrtc = archfit_nvrtc;
  search.cuda_home = loader.cuda_home;
  search.cuda_home_variable = loader.cuda_home_variable;
  search.ld_library_path = loader.ld_library_path;
  search.loader_dirs = loader.loader_dirs;
  search.site_packages = loader.site_packages;
  return search;
}

std::vector<fs::path> nvrtc_search_directories(const NvrtcSearch& search) {
  std::vector<fs::path> dirs;
  if (!search.archfit_nvrtc.empty()) {
    dirs.push_back(search.archfit_nvrtc);
    dirs.push_back(search.archfit_nvrtc.parent_path());
  }
  for (const auto& one : searches(search)) {
    for (auto& dir : env::searched_directories(one)) dirs.push_back(std::move(dir));
  }
  return dirs;
}

std::vector<NvrtcCandidate> find_nvrtc(const NvrtcSearch& search) {
  std::vector<std::vector<NvrtcCandidate>> groups;
  if (!search.archfit_nvrtc.empty()) groups.push_back(from_archfit_nvrtc(search.archfit_nvrtc));
  for (const auto& one : searches(search)) groups.push_back(listed(one, ""));

  std::vector<NvrtcCandidate> found;
  std::set<FileId> seen;
  for (auto& group : groups) {
    for (auto& candidate : group) {
      const auto id = file_id(candidate.path);
      if (id && !seen.insert(*id).second) continue;
      if (std::count(candidate.version.begin(), candidate.version.end(), '.') < 2) {
        const std::string release = read_nvrtc_release(candidate.path);
        const bool agrees = candidate.version.empty() ||
                            release.starts_with(candidate.version + ".");  // "13" and "13.0.88"
        if (!release.empty() && agrees) {
          candidate.version = release;
          candidate.version_source = "library";
        }
      }
      found.push_back(std::move(candidate));
    }
  }
  std::stable_sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
    return compare_versions(a.version, b.version) > 0;
  });
  return found;
}

}  // namespace archfit::jit
