#pragma once
// --deep: decompresses one entry's payload and reads what it says about
// itself, to check the entry header against it.
#include <cstddef>
#include <vector>

#include "byte_reader.hpp"
#include "image.hpp"

namespace archfit::binary {

// The largest uncompressed payload --deep will allocate for: NVIDIA's largest
// single images are tens of megabytes.
inline constexpr uint64_t kMaxUncompressedPayload = uint64_t{1} << 30;

// The payload's bytes, decompressed when the entry is compressed.
// Throws ScanError when they cannot be produced.
std::vector<std::byte> payload_bytes(const ByteReader& file, const Image& image);

// Reads the payload of `image` and records what it found, and every
// disagreement with the entry header, in image.payload.
void inspect_payload(const ByteReader& file, Image& image);

}  // namespace archfit::binary
