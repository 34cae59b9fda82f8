#include "payload.hpp"

#include <lz4.h>
#include <zstd.h>

#include <string_view>

#include "cubin.hpp"
#include "elf.hpp"
#include "ptx.hpp"

namespace archfit::binary {

namespace {

// An LZ4 block cannot expand more than this: at best each input byte adds 255
// to a match length.
constexpr uint64_t kLz4MaxRatio = 255;

std::string_view as_text(const std::vector<std::byte>& bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

void check_ptx(const std::vector<std::byte>& bytes, Image& image) {
  PayloadInfo& info = *image.payload;
  const auto header = read_ptx_header(as_text(bytes));
  if (!header) {
    info.error = "at offset " + hex(image.payload_offset) +
                 ": payload does not start with PTX .version and .target directives";
    return;
  }
  info.ptx_version = header->version;
  info.ptx_target = header->target;
  if (header->version != image.ptx_isa) {
    info.disagreements.push_back("entry header says PTX ISA " + image.ptx_isa.to_string() +
                                 ", .version says " + header->version.to_string());
  }
  if (header->sm != image.sm || header->variant != image.variant) {
    info.disagreements.push_back("entry header says " + image.arch_name() + ", .target says " +
                                 header->target);
  }
}

void check_cubin(const std::vector<std::byte>& bytes, Image& image) {
  PayloadInfo& info = *image.payload;
  CubinInfo cubin;
  try {
    cubin = read_cubin(ByteReader(bytes));
  } catch (const ScanError& error) {
    // Its offsets count from the start of the (decompressed) payload, not the file.
    std::string what = error.what();
    throw ScanError(image.payload_offset,
                    "the cubin in this payload is unreadable: " + what.insert(3, "payload "));
  }
  info.cubin_elf_type = cubin.elf_type;
  info.cubin_abi_version = cubin.abi_version;
  info.cubin_sm = cubin.sm;
  info.cubin_e_flags = cubin.e_flags;
  info.cubin_variant = cubin.variant;
  info.toolkit = cubin.toolkit;
  info.producer_options = cubin.producer_options;
  if (cubin.sm != image.sm) {
    info.disagreements.push_back("entry header says sm_" + std::to_string(image.sm) +
                                 ", the cubin's e_flags say sm_" + std::to_string(cubin.sm));
  }
  const uint8_t abi = elf_abi_from_abi_version(cubin.abi_version);
  if (abi != image.elf_abi) {
    info.disagreements.push_back("entry header says ELF ABI V" + std::to_string(image.elf_abi) +
                                 ", the cubin's EI_ABIVERSION is " +
                                 std::to_string(cubin.abi_version));
  }
  if (cubin.variant && *cubin.variant != image.variant) {
    info.disagreements.push_back("entry header says variant " +
                                 std::string(to_string(image.variant)) + ", the cubin says " +
                                 std::string(to_string(*cubin.variant)));
  }
  // The entry header cannot say "relocatable": NVIDIA ships ET_REL cubins in
  // .nv_fatbin too (60 in libcublasLt.so.13, 136 in libcusparse's .rodata),
  // and nvcc -rdc -fatbin stores them in a plain fatbin. The payload decides.
  const bool cubin_relocatable = cubin.elf_type == elf::kTypeRelocatable;
  image.relocatable = image.relocatable || cubin_relocatable;
}

}  // namespace

std::vector<std::byte> payload_bytes(const ByteReader& file, const Image& image) {
  if (image.compression == Compression::none) {
    const auto stored = file.slice(image.payload_offset, image.size, "entry payload");
    return {stored.begin(), stored.end()};
  }
  if (image.uncompressed_size == 0 || image.uncompressed_size > kMaxUncompressedPayload) {
    throw ScanError(image.offset + 0x38, "uncompressed size " + hex(image.uncompressed_size) +
                                             " is outside 1.." + hex(kMaxUncompressedPayload));
  }
  const auto compressed =
      file.slice(image.payload_offset, image.compressed_size, "compressed payload");
  // A corrupt size field must not make --deep allocate up to a gigabyte: check
  // it against what the compressed bytes can produce first.
  if (image.compression == Compression::zstd) {
    const size_t frame = ZSTD_findFrameCompressedSize(compressed.data(), compressed.size());
    if (ZSTD_isError(frame)) {
      throw ScanError(image.payload_offset,
                      std::string("zstd payload does not decompress: ") + ZSTD_getErrorName(frame));
    }
    const unsigned long long content =
        ZSTD_getFrameContentSize(compressed.data(), compressed.size());
    if (frame == compressed.size() && content < ZSTD_CONTENTSIZE_ERROR &&
        content != image.uncompressed_size) {
      throw ScanError(image.payload_offset, "zstd payload holds " + std::to_string(content) +
                                                " bytes, the header says " +
                                                std::to_string(image.uncompressed_size));
    }
  } else if (image.uncompressed_size > kLz4MaxRatio * compressed.size()) {
    throw ScanError(image.payload_offset, "LZ4 payload of " + std::to_string(compressed.size()) +
                                              " bytes cannot decompress to the " +
                                              std::to_string(image.uncompressed_size) +
                                              " bytes its header says");
  }
  std::vector<std::byte> out(image.uncompressed_size);
  if (image.compression == Compression::zstd) {
    const size_t produced =
        ZSTD_decompress(out.data(), out.size(), compressed.data(), compressed.size());
    if (ZSTD_isError(produced)) {
      throw ScanError(image.payload_offset, std::string("zstd payload does not decompress: ") +
                                                ZSTD_getErrorName(produced));
    }
    if (produced != out.size()) {
      throw ScanError(image.payload_offset,
                      "zstd payload decompressed to " + std::to_string(produced) +
                          " bytes, the header says " + std::to_string(out.size()));
    }
  } else {
    if (compressed.size() > static_cast<uint64_t>(LZ4_MAX_INPUT_SIZE)) {
      throw ScanError(image.payload_offset, "LZ4 payload is larger than LZ4 allows");
    }
    const int produced = LZ4_decompress_safe(
        reinterpret_cast<const char*>(compressed.data()), reinterpret_cast<char*>(out.data()),
        static_cast<int>(compressed.size()), static_cast<int>(out.size()));
    if (produced < 0 || static_cast<uint64_t>(produced) != out.size()) {
      throw ScanError(image.payload_offset, "LZ4 payload does not decompress to the " +
                                                std::to_string(out.size()) +
                                                " bytes its header says");
    }
  }
  return out;
}

void inspect_payload(const ByteReader& file, Image& image) {
  image.payload = std::make_shared<PayloadInfo>();
  if (image.kind != ImageKind::ptx && image.kind != ImageKind::sass) return;  // LTO-IR is opaque
  try {
    const std::vector<std::byte> bytes = payload_bytes(file, image);
    if (image.kind == ImageKind::ptx) {
      check_ptx(bytes, image);
    } else {
      check_cubin(bytes, image);
    }
  } catch (const ScanError& error) {
    image.payload->error = error.what();
  }
}

}  // namespace archfit::binary
