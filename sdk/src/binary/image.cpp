#include "image.hpp"

#include <cstdio>

#include "scan_error.hpp"

namespace archfit::binary {

std::string hex(uint64_t value) {
  char buffer[24];
  std::snprintf(buffer, sizeof buffer, "0x%llx", static_cast<unsigned long long>(value));
  return buffer;
}

std::string_view to_string(ImageKind kind) {
  switch (kind) {
    case ImageKind::sass:
      return "sass";
    case ImageKind::ptx:
      return "ptx";
    case ImageKind::lto:
      return "lto";
    case ImageKind::unknown:
      break;
  }
  return "unknown";
}

std::string_view to_string(Variant variant) {
  switch (variant) {
    case Variant::arch_specific:
      return "a";
    case Variant::family_specific:
      return "f";
    case Variant::plain:
      break;
  }
  return "plain";
}

std::string_view variant_suffix(Variant variant) {
  return variant == Variant::plain ? std::string_view{} : to_string(variant);
}

std::string_view to_string(Compression compression) {
  switch (compression) {
    case Compression::lz4:
      return "lz4";
    case Compression::zstd:
      return "zstd";
    case Compression::none:
      break;
  }
  return "none";
}

std::string_view to_string(FileFormat format) {
  switch (format) {
    case FileFormat::elf:
      return "elf";
    case FileFormat::cubin:
      return "cubin";
    case FileFormat::fatbin:
      return "fatbin";
    case FileFormat::ptx:
      return "ptx";
    case FileFormat::pe:
      return "pe";
    case FileFormat::other:
      break;
  }
  return "other";
}

std::string Version::to_string() const {
  return std::to_string(major) + "." + std::to_string(minor);
}

std::string Image::arch_name() const {
  std::string prefix;
  switch (kind) {
    case ImageKind::sass:
      prefix = "sm_";
      break;
    case ImageKind::ptx:
      prefix = "compute_";
      break;
    case ImageKind::lto:
      prefix = "lto_";
      break;
    case ImageKind::unknown:
      prefix = "kind" + std::to_string(kind_code) + "_";
      break;
  }
  return prefix + std::to_string(sm) + std::string(variant_suffix(variant));
}

}  // namespace archfit::binary
