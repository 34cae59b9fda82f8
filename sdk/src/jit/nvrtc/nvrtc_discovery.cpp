#include "nvrtc_discovery.hpp"

#include <elf.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <set>
#include <utility>

#include "env/cuda_libraries.hpp"
#include "sys/trust.hpp"

namespace archfit::jit {

namespace fs = std::filesystem;

namespace {

using FileId = std::pair<dev_t, ino_t>;

std::optional<FileId> file_id(const fs::path& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return std::nullopt;
  return FileId{info.st_dev, info.st_ino};
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

// The libnvrtc copies of one kind of place, in env/cuda_libraries' order.
std::vector<NvrtcCandidate> listed(const env::CudaLibrarySearch& search,
                                   const std::string& origin) {
  std::vector<NvrtcCandidate> out;
  for (auto& library : env::find_cuda_libraries(search)) {
    if (library.name != "nvrtc") continue;
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
  // Not named libnvrtc.so*, or missing: loading it says what is wrong.
  return {{path, "", "", "ARCHFIT_NVRTC"}};
}

template <typename T>
bool read_at(std::ifstream& in, T* out, size_t count, uint64_t offset) {
  in.seekg(static_cast<std::streamoff>(offset));
  in.read(reinterpret_cast<char*>(out), static_cast<std::streamsize>(count * sizeof(T)));
  return in.good();
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
  constexpr size_t kPiece = size_t{1} << 20;
  constexpr size_t kOverlap = 128;  // a string cut by a piece's end is whole in the next
  std::error_code error;
  if (!fs::is_regular_file(library, error)) return {};  // not a FIFO to block on
  std::ifstream in(library, std::ios::binary);
  Elf64_Ehdr header{};
  if (!in || !read_at(in, &header, 1, 0) || std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 ||
      header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_shentsize != sizeof(Elf64_Shdr) ||
      header.e_shstrndx >= header.e_shnum)
    return {};
  std::vector<Elf64_Shdr> sections(header.e_shnum);
  if (!read_at(in, sections.data(), sections.size(), header.e_shoff)) return {};
  const Elf64_Shdr& names = sections[header.e_shstrndx];
  if (names.sh_size > (1u << 20)) return {};
  std::string name_table(names.sh_size, '\0');
  if (!read_at(in, name_table.data(), name_table.size(), names.sh_offset)) return {};
  for (const auto& section : sections) {
    if (section.sh_name >= name_table.size() || section.sh_type != SHT_PROGBITS ||
        std::string_view(name_table.c_str() + section.sh_name) != ".rodata")
      continue;
    std::string piece;
    for (uint64_t done = 0; done < section.sh_size;) {
      piece.resize(static_cast<size_t>(std::min<uint64_t>(kPiece, section.sh_size - done)));
      if (!read_at(in, piece.data(), piece.size(), section.sh_offset + done)) return {};
      for (size_t at = piece.find(kPrefix); at != std::string::npos;
           at = piece.find(kPrefix, at + 1)) {
        if (auto release = release_at(std::string_view(piece).substr(at + kPrefix.size()));
            !release.empty())
          return release;
      }
      if (done + piece.size() >= section.sh_size) break;
      done += piece.size() - kOverlap;
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
