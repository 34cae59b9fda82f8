#pragma once
// How many bytes the members of one archive (a wheel) may decompress to, all
// of them together. A zip bomb, whether one 2 GiB member in a 2 MB wheel or
// 300 members sharing one 1 GiB stream, must cost a scan milliseconds and
// megabytes, not minutes and gigabytes (issue 24).
#include <atomic>
#include <cstdint>
#include <string>

namespace archfit::binary {

// Measured on 102 real PyPI wheels (torch, xformers, bitsandbytes, triton,
// nvidia-*; docs/reliability.md): the members that may hold device code
// decompress to at most 4.4 times the wheel's size (torchaudio 2.11.1), and
// to 1.7 GB at most in all (torch 2.5.1). The defaults leave room for
// either to grow several times over.
struct ArchiveLimits {
  uint64_t max_ratio = 32;  // bytes out per byte of archive
  // Allowed whatever the ratio: one small library padded to 2 MiB pages
  // (pillow's libXau: 2.1 MB from 9 KB, 224:1) in a wheel of its own.
  uint64_t floor_bytes = 64ull << 20;
  uint64_t max_bytes = 8ull << 30;  // never more, however large the archive

  // max(max_ratio × archive_bytes, floor_bytes), at most max_bytes.
  uint64_t budget_for(uint64_t archive_bytes) const;
};

// One archive's budget, shared by every thread that reads its members.
class DecompressionBudget {
 public:
  DecompressionBudget(uint64_t archive_bytes, const ArchiveLimits& limits);

  // Takes `bytes` from what is left and says true; takes nothing and says
  // false when fewer are left. A member's whole size is taken before it is
  // read, so nothing is allocated or decompressed past the budget.
  bool take(uint64_t bytes);
  uint64_t limit() const { return limit_; }
  uint64_t left() const { return limit_ - spent_.load(); }
  // "67108864 bytes (32 × the archive's 2087765 bytes, at least 67108864,
  // at most 8589934592)": how the limit came about, for a refusal.
  std::string terms() const;

 private:
  uint64_t archive_bytes_;
  ArchiveLimits limits_;
  uint64_t limit_;
  std::atomic<uint64_t> spent_{0};
};

}  // namespace archfit::binary
