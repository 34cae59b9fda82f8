#include <cstring>
#include <memory>

#include "binary/file_scan.hpp"
#include "binary/parallel.hpp"
#include "binary/scan_json.hpp"
#include "guard.hpp"
#include "handles.hpp"
#include "sys/utf8_path.hpp"
#include "util/json_text.hpp"

using archfit::capi::ApiError;
using archfit::capi::guarded;
using archfit::capi::require_argument;
using archfit::capi::write_output;
namespace binary = archfit::binary;

namespace {

// Whether the caller asked for a deep scan; unknown flag bits are refused.
bool deep_scan(const archfit_scan_options* given) {
  const auto options = archfit::capi::read_options(given, "archfit_scan_options");
  if (options.flags & ~uint32_t{ARCHFIT_SCAN_DEEP}) {
    throw ApiError{ARCHFIT_ERROR_UNSUPPORTED,
                   "unknown archfit_scan_flags bits " + binary::hex(options.flags)};
  }
  return (options.flags & ARCHFIT_SCAN_DEEP) != 0;
}

void publish(binary::FileScan result, archfit_scan** out_scan) {
  auto handle = std::make_unique<archfit_scan>();
  handle->result = std::move(result);
  *out_scan = handle.release();
}

archfit_image_kind kind_of(binary::ImageKind kind) {
  switch (kind) {
    case binary::ImageKind::sass:
      return ARCHFIT_IMAGE_SASS;
    case binary::ImageKind::ptx:
      return ARCHFIT_IMAGE_PTX;
    case binary::ImageKind::lto:
      return ARCHFIT_IMAGE_LTO;
    case binary::ImageKind::unknown:
      break;
  }
  return ARCHFIT_IMAGE_UNKNOWN;
}

archfit_variant variant_of(binary::Variant variant) {
  switch (variant) {
    case binary::Variant::arch_specific:
      return ARCHFIT_VARIANT_ARCH_SPECIFIC;
    case binary::Variant::family_specific:
      return ARCHFIT_VARIANT_FAMILY_SPECIFIC;
    case binary::Variant::plain:
      break;
  }
  return ARCHFIT_VARIANT_PLAIN;
}

archfit_compression compression_of(binary::Compression compression) {
  switch (compression) {
    case binary::Compression::lz4:
      return ARCHFIT_COMPRESSION_LZ4;
    case binary::Compression::zstd:
      return ARCHFIT_COMPRESSION_ZSTD;
    case binary::Compression::none:
      break;
  }
  return ARCHFIT_COMPRESSION_NONE;
}

archfit_file_format format_of(binary::FileFormat format) {
  switch (format) {
    case binary::FileFormat::elf:
      return ARCHFIT_FORMAT_ELF;
    case binary::FileFormat::cubin:
      return ARCHFIT_FORMAT_CUBIN;
    case binary::FileFormat::fatbin:
      return ARCHFIT_FORMAT_FATBIN;
    case binary::FileFormat::ptx:
      return ARCHFIT_FORMAT_PTX;
    case binary::FileFormat::pe:
      return ARCHFIT_FORMAT_PE;
    case binary::FileFormat::other:
      break;
  }
  return ARCHFIT_FORMAT_OTHER;
}

// The bodies of the scan creators, each under the name it was called by
// (archfit_scan_file_run, or archfit_scan_file as the first release named it):
// archfit_last_error() names the function the caller wrote.
archfit_status scan_file_as(const char* function, archfit_context* context, const char* path,
                            const archfit_scan_options* options, archfit_scan** out_scan) {
  return guarded(function, [&] {
    require_argument(context, "context");
    require_argument(path, "path");
    require_argument(out_scan, "out_scan");
    binary::FileScan result =
        context->session.scan_file(archfit::sys::path_of_utf8(path), deep_scan(options));
    // Only an unreadable file fails the call; a malformed one is a result.
    if (result.unreadable)
      throw ApiError{ARCHFIT_ERROR_IO, std::string(path) + ": " + result.problems.front().message};
    publish(std::move(result), out_scan);
  });
}

archfit_status scan_buffer_as(const char* function, archfit_context* context, const void* data,
                              size_t size, const char* name, const archfit_scan_options* options,
                              archfit_scan** out_scan) {
  return guarded(function, [&] {
    require_argument(context, "context");
    require_argument(out_scan, "out_scan");
    if (data == nullptr && size != 0)
      throw ApiError{ARCHFIT_ERROR_INVALID_ARGUMENT, "data is NULL but size is not 0"};
    const std::span<const std::byte> bytes(static_cast<const std::byte*>(data), data ? size : 0);
    publish(context->session.scan_bytes(bytes, name ? name : "(buffer)", deep_scan(options)),
            out_scan);
  });
}

}  // namespace

extern "C" {

archfit_status archfit_scan_file_run(archfit_context* context, const char* path,
                                     const archfit_scan_options* options,
                                     archfit_scan** out_scan) noexcept {
  return scan_file_as(__func__, context, path, options, out_scan);
}

archfit_status archfit_scan_file(archfit_context* context, const char* path,
                                 const archfit_scan_options* options,
                                 archfit_scan** out_scan) noexcept {
  return scan_file_as(__func__, context, path, options, out_scan);
}

archfit_status archfit_scan_buffer_run(archfit_context* context, const void* data, size_t size,
                                       const char* name, const archfit_scan_options* options,
                                       archfit_scan** out_scan) noexcept {
  return scan_buffer_as(__func__, context, data, size, name, options, out_scan);
}

archfit_status archfit_scan_buffer(archfit_context* context, const void* data, size_t size,
                                   const char* name, const archfit_scan_options* options,
                                   archfit_scan** out_scan) noexcept {
  return scan_buffer_as(__func__, context, data, size, name, options, out_scan);
}

void archfit_scan_destroy(archfit_scan* scan) noexcept { delete scan; }

archfit_file_format archfit_scan_format(const archfit_scan* scan) noexcept {
  return scan ? format_of(scan->result.format) : ARCHFIT_FORMAT_OTHER;
}

size_t archfit_scan_image_count(const archfit_scan* scan) noexcept {
  return scan ? scan->result.images.size() : 0;
}

const char* archfit_scan_error(const archfit_scan* scan) noexcept {
  if (!scan || scan->result.problems.empty()) return nullptr;
  return scan->result.problems.front().message.c_str();
}

size_t archfit_scan_error_count(const archfit_scan* scan) noexcept {
  return scan ? scan->result.problems.size() : 0;
}

archfit_status archfit_scan_image(const archfit_scan* scan, size_t index,
                                  archfit_image_info* out) noexcept {
  return guarded(__func__, [&] {
    require_argument(scan, "scan");
    require_argument(out, "out");
    if (index >= scan->result.images.size()) {
      throw ApiError{ARCHFIT_ERROR_INVALID_ARGUMENT,
                     "image index " + std::to_string(index) + " is out of range (" +
                         std::to_string(scan->result.images.size()) + " images)"};
    }
    const binary::Image& image = scan->result.images[index];
    archfit_image_info info{};
    info.kind = kind_of(image.kind);
    info.sm = image.sm;
    info.variant = variant_of(image.variant);
    info.ptx_isa_major = image.ptx_isa.major;
    info.ptx_isa_minor = image.ptx_isa.minor;
    info.elf_abi = image.elf_abi;
    info.compression = compression_of(image.compression);
    info.relocatable = image.relocatable ? 1 : 0;
    info.size = image.size;
    info.compressed_size = image.compressed_size;
    info.uncompressed_size = image.uncompressed_size;
    info.offset = image.offset;
    info.section = image.section.c_str();
    // Every field has been there since the first release.
    write_output(out, info, sizeof(archfit_image_info), "out", "archfit_image_info");
  });
}

archfit_status archfit_scan_json(const archfit_scan* scan, const char** out_json) noexcept {
  return guarded(__func__, [&] {
    require_argument(scan, "scan");
    require_argument(out_json, "out_json");
    std::call_once(scan->json_once, [&] {
      scan->json = archfit::util::json_text(binary::scan_document({scan->result}));
    });
    *out_json = scan->json.c_str();
  });
}

}  // extern "C"
