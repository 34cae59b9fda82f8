#pragma once
// What a Python environment holds, read from disk without running Python:
// the installed distributions (*.dist-info: METADATA for name and version,
// RECORD for the files each one installed) and torch's version and CUDA tag
// from torch/version.py, which is read, never imported.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "requirement.hpp"

namespace archfit::env {

struct Distribution {
  std::string name;     // as METADATA spells it: "xformers"
  std::string key;      // the name as pip compares it (requirement.hpp): "nvidia-cublas-cu12"
  std::string version;  // "0.0.28.post1"
  std::filesystem::path dist_info;
  // The files RECORD lists that may hold device code, as absolute, lexically
  // normal paths: the others (sources, headers, text; binary::never_device_code)
  // are never scanned, so no one asks who owns them, and a torch venv's
  // RECORDs list 17,000 files of which about 600 are kept.
  std::vector<std::string> files;
  std::vector<Requirement> requirements;  // METADATA's Requires-Dist, in order
};

struct TorchBuild {
  std::string version;  // "2.5.1+cu124"
  std::string cuda;     // "12.4"; empty for a CPU or ROCm build
  std::string hip;      // "6.2.41133"; empty unless ROCm
  std::filesystem::path version_file;
};

// Something that could not be read, in a sentence naming the file.
struct EnvProblem {
  std::filesystem::path path;
  std::string message;
};

struct SitePackages {
  std::filesystem::path root;
  std::vector<Distribution> distributions;  // sorted by name
  std::optional<TorchBuild> torch;
  std::vector<EnvProblem> problems;

  // The distribution whose RECORD lists `file`, or nullptr (also for a
  // file that cannot hold device code: see Distribution::files).
  const Distribution* owner_of(const std::filesystem::path& file) const;
  // Every distribution whose RECORD lists `file`, owner_of's first; empty
  // when none does. Two list one file when pip installed both over one
  // folder: nvidia-cudnn-cu12 and nvidia-cudnn-cu13 both write
  // nvidia/cudnn/lib/libcudnn.so.9, and uninstall neither.
  std::vector<const Distribution*> owners_of(const std::filesystem::path& file) const;
  // Of those, the one whose install wrote the bytes on disk: the one whose
  // RECORD gives the file `size_on_disk` bytes (pip overwrote it last), else
  // owner_of's. nullptr when no RECORD lists it. Reads RECORDs only for a
  // file several list.
  const Distribution* installer_of(const std::filesystem::path& file,
                                   std::uintmax_t size_on_disk) const;
  // The distribution of that name (compared as pip compares names), or nullptr.
  const Distribution* find(std::string_view name) const;

 private:
  friend SitePackages read_site_packages(const std::filesystem::path& root);
  // A file's lexically normal path → its index in distributions; strings,
  // since a torch venv's RECORDs list 17,000 files and path compares are slow.
  std::unordered_map<std::string, std::vector<size_t>> owners_;  // first by name first
};

// Never throws for bad content: unreadable or malformed dist-info becomes a
// problem and the rest of the directory is still read.
SitePackages read_site_packages(const std::filesystem::path& root);

// The version of `distribution` installed in `site`, as its dist-info
// folder's name says ("xformers-0.0.28.post1.dist-info"), names compared as
// PEP 503 names; "" when none is there. Lists the folder; reads no METADATA.
std::string installed_version(const std::filesystem::path& site, std::string_view distribution);

// The size a distribution's RECORD gives the first file whose path (as
// RECORD writes it, relative to site-packages) `matches`; nullopt when no row
// matches, the row has no size, or RECORD cannot be read. Which of two
// distributions that write one file was installed last is the one whose
// RECORD size the file on disk has.
struct RecordRow {
  std::string path;  // relative to site-packages, as RECORD writes it
  std::uintmax_t size = 0;
};
std::optional<RecordRow> recorded_size(const Distribution& dist,
                                       const std::function<bool(std::string_view)>& matches);

// torch/version.py's __version__, cuda and hip assignments; nullopt when
// the text has no __version__.
std::optional<TorchBuild> parse_torch_version_py(const std::string& text);

// One header field of a METADATA (or WHEEL) text: "Name: xformers" → "xformers".
// Only the header block before the first blank line; "" when absent.
std::string metadata_field(const std::string& metadata, std::string_view field);
// Every value of a field that may repeat (Requires-Dist), in order.
std::vector<std::string> metadata_fields(const std::string& metadata, std::string_view field);

// The fields of one RECORD line (CSV: path,hash,size; fields may be quoted).
std::vector<std::string> parse_csv_line(const std::string& line);

}  // namespace archfit::env
