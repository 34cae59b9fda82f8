#include "scan_text.hpp"

#include <cstdio>
#include <string>
#include <string_view>

#include "binary/summary.hpp"

namespace archfit::render {

using binary::ScanSummary;

namespace {

std::string human_bytes(uint64_t bytes) {
  char buffer[32];
  const char* units[] = {"B", "KB", "MB", "GB", "TB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1000 && unit < 4) {
    value /= 1000;
    ++unit;
  }
  std::snprintf(buffer, sizeof buffer, unit == 0 ? "%.0f %s" : "%.1f %s", value, units[unit]);
  return buffer;
}

struct Style {
  bool color;
  std::string bold(const std::string& s) const { return color ? "\033[1m" + s + "\033[0m" : s; }
  std::string red(const std::string& s) const { return color ? "\033[31m" + s + "\033[0m" : s; }
  std::string dim(const std::string& s) const { return color ? "\033[2m" + s + "\033[0m" : s; }
};

void print_counts_line(std::ostream& out, std::string_view label, const std::string& body) {
  out << "  " << label;
  for (size_t pad = label.size(); pad < 14; ++pad) out << ' ';
  out << body << '\n';
}

// "SASS 5832": the kind and how many images of it the file holds.
std::string kind_label(const ScanSummary& s, binary::ImageKind kind, const char* name) {
  const auto it = s.kind_images.find(kind);
  return std::string(name) + " " + std::to_string(it == s.kind_images.end() ? 0 : it->second);
}

void print_summary(std::ostream& out, const ScanSummary& s) {
  std::string line;
  for (const auto& [key, n] : s.sass) line += binary::arch_label("sm_", key) + " ";
  if (!line.empty()) print_counts_line(out, kind_label(s, binary::ImageKind::sass, "SASS"), line);
  line.clear();
  for (const auto& [key, isas] : s.ptx) {
    line += binary::arch_label("compute_", key) + " (ISA";
    for (const auto& isa : isas) line += " " + isa;
    line += ") ";
  }
  if (!line.empty()) print_counts_line(out, kind_label(s, binary::ImageKind::ptx, "PTX"), line);
  line.clear();
  for (const auto& [key, n] : s.lto) line += binary::arch_label("lto_", key) + " ";
  if (!line.empty()) print_counts_line(out, kind_label(s, binary::ImageKind::lto, "LTO-IR"), line);
  line.clear();
  for (const auto& [abi, n] : s.elf_abi) {
    line += abi ? "V" : "unknown";  // piece by piece: GCC 12 -Wrestrict false positive (PR 105651)
    if (abi) line += std::to_string(abi);
    line += ' ';
    line += std::to_string(n);
    line += "  ";
  }
  if (!line.empty()) print_counts_line(out, "ELF ABI", line);
  line.clear();
  for (const auto& [compression, n] : s.compression) {
    line += std::string(binary::to_string(compression)) + " " + std::to_string(n) + "  ";
  }
  print_counts_line(out, "compression", line);
  line.clear();
  for (const auto& [section, n] : s.section_images)
    line += section + " " + std::to_string(n) + "  ";
  print_counts_line(out, "sections", line);
  if (s.relocatable)
    print_counts_line(out, "relocatable",
                      std::to_string(s.relocatable) + " (device-link inputs, not launchable)");
  if (s.debug) print_counts_line(out, "debug", std::to_string(s.debug) + " (-G)");
  if (const auto unknown = s.kind_images.find(binary::ImageKind::unknown);
      unknown != s.kind_images.end()) {
    print_counts_line(out, "unknown",
                      std::to_string(unknown->second) + " entries of an unknown kind");
  }
}

void print_image(std::ostream& out, const binary::Image& image, bool deep) {
  char line[256];
  std::string detail;
  if (image.kind == binary::ImageKind::ptx) detail = "ISA " + image.ptx_isa.to_string();
  if (image.kind == binary::ImageKind::sass && image.elf_abi)
    detail = "ELF V" + std::to_string(image.elf_abi);
  std::string size = binary::hex(image.size);
  if (image.compression != binary::Compression::none) {
    size = std::string(binary::to_string(image.compression)) + " " +
           std::to_string(image.compressed_size) + " -> " + std::to_string(image.uncompressed_size);
  }
  std::snprintf(line, sizeof line, "    %-5s %-14s %-8s %-26s %s @%s%s%s",
                std::string(binary::to_string(image.kind)).c_str(), image.arch_name().c_str(),
                detail.c_str(), size.c_str(), image.section.c_str(),
                binary::hex(image.offset).c_str(), image.relocatable ? " relocatable" : "",
                image.debug ? " debug" : "");
  out << line;
  if (!image.identifier.empty()) out << " (" << image.identifier << ")";
  out << '\n';
  if (deep && image.payload) {
    const auto& payload = *image.payload;
    if (!payload.toolkit.empty()) out << "        " << payload.toolkit << '\n';
    if (!payload.producer_options.empty())
      out << "        ptxas " << payload.producer_options << '\n';
    for (const auto& disagreement : payload.disagreements)
      out << "        disagreement: " << disagreement << '\n';
    if (!payload.error.empty()) out << "        payload error: " << payload.error << '\n';
  }
}

}  // namespace

void print_scan_text(std::ostream& out, const binary::TreeScan& scan, double elapsed_ms,
                     const ScanTextOptions& options) {
  const Style style{options.color};
  ScanSummary total;
  uint64_t with_code = 0, with_problems = 0, containers = 0, disagreements = 0;
  for (const auto& file : scan.files) {
    const bool listed = file.has_device_code() || !file.problems.empty() || options.all_files ||
                        scan.files.size() == 1;
    containers += file.containers;
    with_code += file.has_device_code();
    with_problems += !file.problems.empty();
    if (!listed) continue;
    out << style.bold(file.path) << "  "
        << style.dim(human_bytes(file.file_size) + ", " +
                     std::string(binary::to_string(file.format)) + ", " +
                     std::to_string(file.containers) + " containers, " +
                     std::to_string(file.images.size()) + " images")
        << '\n';
    if (!file.has_device_code()) out << "  no device code\n";
    const ScanSummary summary = binary::summarize(file);
    if (file.has_device_code()) print_summary(out, summary);
    merge_into(total, summary);
    if (options.images || options.deep) {
      for (const auto& image : file.images) {
        if (options.images || (image.payload && (!image.payload->disagreements.empty() ||
                                                 !image.payload->error.empty()))) {
          print_image(out, image, options.deep);
        }
      }
    }
    for (const auto& image : file.images) {
      if (image.payload)
        disagreements += image.payload->disagreements.size() + !image.payload->error.empty();
    }
    for (const auto& problem : file.problems)
      out << "  " << style.red("error: " + problem.message) << '\n';
    out << '\n';
  }
  char line[256];
  std::snprintf(
      line, sizeof line,
      "%zu files, %s scanned in %.1f ms: %llu with device code, %llu containers, %llu images",
      scan.files.size(), human_bytes(scan.bytes).c_str(), elapsed_ms,
      static_cast<unsigned long long>(with_code), static_cast<unsigned long long>(containers),
      static_cast<unsigned long long>(total.images));
  out << style.bold(line) << '\n';
  for (const auto& skipped : scan.skipped)
    out << "not followed: " << skipped.path << ": " << skipped.reason << '\n';
  if (with_problems) out << style.red(std::to_string(with_problems) + " files with errors") << '\n';
  if (options.deep) out << disagreements << " payload disagreements or unreadable payloads\n";
}

}  // namespace archfit::render
