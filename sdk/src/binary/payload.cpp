#include "payload.hpp"

#include <lz4.h>
#include <zstd.h>

#include <algorithm>
#include <memory>
#include <new>
#include <span>
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

// A zstd payload's bytes, streamed into a buffer that grows with the bytes
// that arrive, up to the entry header's size. Neither that size nor a
// frame's declared content size is trusted to size the buffer: a 17-byte
// frame in an entry claiming 1 GiB cost a zero-filled GiB before this (found
// in review). A frame alone in the payload that declares its size must
// declare the header's.
std::vector<std::byte> zstd_bytes(std::span<const std::byte> compressed, const Image& image) {
  auto fail = [&](const std::string& what) {
    return ScanError(image.payload_offset, "zstd payload " + what);
  };
  const size_t frame = ZSTD_findFrameCompressedSize(compressed.data(), compressed.size());
  if (ZSTD_isError(frame))
    throw fail(std::string("does not decompress: ") + ZSTD_getErrorName(frame));
  const unsigned long long content = ZSTD_getFrameContentSize(compressed.data(), compressed.size());
  const bool declared = frame == compressed.size() && content < ZSTD_CONTENTSIZE_ERROR;
  const uint64_t expected = image.uncompressed_size;
  if (declared && content != expected) {
    throw fail("holds " + std::to_string(content) + " bytes, the header says " +
               std::to_string(expected));
  }
  std::unique_ptr<ZSTD_DStream, decltype(&ZSTD_freeDStream)> stream(ZSTD_createDStream(),
                                                                    &ZSTD_freeDStream);
  if (!stream) throw std::bad_alloc();
  // One byte over the header's size tells "too much" from "exactly right"
  // while the decoder still has a frame's checksum to read.
  const uint64_t limit = expected + 1;
  std::vector<std::byte> out(std::min<uint64_t>(limit, uint64_t{1} << 20));
  ZSTD_inBuffer in{compressed.data(), compressed.size(), 0};
  uint64_t produced = 0;
  bool between_frames = false;
  while (in.pos < in.size) {
    // Zero bytes after a whole frame pad the entry to its alignment.
    if (between_frames && std::all_of(compressed.begin() + in.pos, compressed.end(),
                                      [](std::byte b) { return b == std::byte{0}; }))
      break;
    if (produced == out.size()) {
      if (out.size() == limit) {
        throw fail("decompresses to more than the " + std::to_string(expected) +
                   " bytes its header says");
      }
      out.resize(std::min<uint64_t>(limit, out.size() * 2));
    }
    ZSTD_outBuffer dest{out.data(), out.size(), produced};
    const size_t consumed_before = in.pos;
    const size_t status = ZSTD_decompressStream(stream.get(), &dest, &in);
    if (ZSTD_isError(status))
      throw fail(std::string("does not decompress: ") + ZSTD_getErrorName(status));
    if (in.pos == consumed_before && dest.pos == produced)
      throw fail("stops decompressing after " + std::to_string(produced) + " bytes");
    produced = dest.pos;
    between_frames = status == 0;
  }
  if (!between_frames)
    throw fail("ends inside a frame, after " + std::to_string(produced) + " bytes");
  if (produced != expected) {
    throw fail("decompressed to " + std::to_string(produced) + " bytes, the header says " +
               std::to_string(expected));
  }
  out.resize(produced);
  return out;
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
  // A corrupt size field must not make --deep allocate up to a gigabyte:
  // the buffer is sized from what the compressed bytes can produce.
  if (image.compression == Compression::zstd) return zstd_bytes(compressed, image);
  if (image.uncompressed_size > kLz4MaxRatio * compressed.size()) {
    throw ScanError(image.payload_offset, "LZ4 payload of " + std::to_string(compressed.size()) +
                                              " bytes cannot decompress to the " +
                                              std::to_string(image.uncompressed_size) +
                                              " bytes its header says");
  }
  if (compressed.size() > static_cast<uint64_t>(LZ4_MAX_INPUT_SIZE)) {
    throw ScanError(image.payload_offset, "LZ4 payload is larger than LZ4 allows");
  }
  std::vector<std::byte> out(image.uncompressed_size);
  const int produced = LZ4_decompress_safe(
      reinterpret_cast<const char*>(compressed.data()), reinterpret_cast<char*>(out.data()),
      static_cast<int>(compressed.size()), static_cast<int>(out.size()));
  if (produced < 0 || static_cast<uint64_t>(produced) != out.size()) {
    throw ScanError(image.payload_offset, "LZ4 payload does not decompress to the " +
                                              std::to_string(out.size()) +
                                              " bytes its header says");
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
  } catch (const std::bad_alloc&) {
    // A real payload of up to 1 GiB, with too little memory left for it.
    image.payload->error = "at offset " + hex(image.payload_offset) + ": no memory for the " +
                           std::to_string(image.uncompressed_size) +
                           " bytes this payload decompresses to";
  }
}

}  // namespace archfit::binary
