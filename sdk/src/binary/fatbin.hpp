#pragma once
// The fatbin container and its entry headers (layout: docs/cuda-binaries.md,
// checked against nvcc 13 output). Reads headers only:
// payloads are skipped by their declared size and never walked.
#include <cstdint>
#include <limits>
#include <string_view>
#include <vector>

#include "byte_reader.hpp"
#include "image.hpp"

namespace archfit::binary {

namespace fatbin {
inline constexpr uint32_t kContainerMagic = 0xBA55ED50;
inline constexpr uint16_t kContainerVersion = 1;
inline constexpr uint64_t kContainerHeaderSize = 16;
inline constexpr uint64_t kMinEntryHeaderSize = 64;
inline constexpr uint16_t kEntryMarker = 0x0101;
inline constexpr uint16_t kKindPtx = 1;
inline constexpr uint16_t kKindElf = 2;
inline constexpr uint16_t kKindLtoIr = 8;
inline constexpr uint64_t kFlagDebug = 0x2;
inline constexpr uint64_t kFlagLz4 = 0x2000;
inline constexpr uint64_t kFlagZstd = 0x8000;
inline constexpr uint64_t kFlagArchSpecific = 0x100000;
inline constexpr uint64_t kFlagFamilySpecific = 0x200000;
}  // namespace fatbin

// Where the bytes being scanned came from, for the images' `section` field.
struct RegionSource {
  std::string_view section;
  bool relocatable = false;  // __nv_relfatbin holds device-link inputs
};

// How containers sit in a region. In .nv_fatbin and __nv_relfatbin they are
// packed back to back (8-byte aligned, zero padded), so anything else there is
// corruption. Elsewhere (.rodata, .ldata, .cask_resource, …) they are embedded
// among other data and found by their magic number.
enum class RegionLayout { packed, embedded };

// True when a container header's first 8 bytes (magic, version 1, 16-byte
// header) start at `offset` with 16 bytes before `limit`. Eight exact bytes
// do not occur by chance among other data: a header with them whose size
// field is wrong is a corrupt container to report, not data to pass over.
bool container_signature_at(const ByteReader& bytes, uint64_t offset, uint64_t limit);

// What read_container throws: the error, and where a search for the next
// container resumes: just past the last entry that parsed, else past the
// header's magic. Entries that parsed are skipped whole, as a good
// container's walk skips them. Resuming past the magic every time would let
// a region of N entries, each hiding in its unused header bytes a container
// header whose entries run on to the same bad last entry, be walked N times
// over (quadratic: 5 s for 1 MiB, found in review).
class ContainerError : public ScanError {
 public:
  ContainerError(const ScanError& error, uint64_t resume_at)
      : ScanError(error), resume_at_(resume_at) {}
  uint64_t resume_at() const { return resume_at_; }

 private:
  uint64_t resume_at_;
};

// Reads the container at `offset`, appending one Image per entry; returns the
// offset just past it. Throws ContainerError naming the offset of what is
// wrong. `offset` ≤ `limit` ≤ the bytes' size, else ScanError.
uint64_t read_container(const ByteReader& bytes, uint64_t offset, uint64_t limit,
                        const RegionSource& source, std::vector<Image>& images);

// What one region held: its containers' extents, their images, and problems.
struct RegionScan {
  struct Extent {
    uint64_t begin = 0, end = 0;
  };
  std::vector<Extent> containers;
  std::vector<Image> images;
  std::vector<ScanProblem> problems;
};

// Finds every container that starts in [begin, start_limit) and lies within
// [begin, end), and reads it. Problems are recorded and the walk goes on past
// them. start_limit lets a large region be split into chunks scanned in
// parallel: a chunk's last container may run on past the chunk.
void scan_region(const ByteReader& bytes, uint64_t begin, uint64_t end, RegionLayout layout,
                 const RegionSource& source, RegionScan& out,
                 uint64_t start_limit = std::numeric_limits<uint64_t>::max());

// The next 4-byte aligned file offset in [from, to) holding the container
// magic, or `to`. Every container nvcc and NVIDIA's libraries emit is at
// least 8-byte aligned (measured over the CUDA 13.0 libraries).
uint64_t find_container_magic(const ByteReader& bytes, uint64_t from, uint64_t to);

}  // namespace archfit::binary
