#pragma once
// What a cubin says about itself: its ELF header (ABI V1/V2, SM in e_flags,
// EXEC or REL) and the notes where `a` and `f` can still be read
// (docs/cuda-binaries.md, "Cubins").
#include <cstdint>
#include <optional>
#include <string>

#include "byte_reader.hpp"
#include "image.hpp"

namespace archfit::binary {

struct CubinInfo {
  uint16_t elf_type = 0;    // 1 REL (-rdc), 2 EXEC
  uint8_t abi_version = 0;  // EI_ABIVERSION: 7 = V1, 8 = V2
  uint32_t e_flags = 0;
  uint32_t sm = 0;
  // Known only when the cubin carries .nv.compat or a toolkit note; V1
  // cubins carry neither, and then the variant is unknown, not "plain".
  std::optional<Variant> variant;
  std::string toolkit;           // "Cuda compilation tools, release 13.0, V13.0.88"
  std::string producer_options;  // "-arch sm_100f -m 64"
  // ptxas -G output: it has DWARF .debug_info (-lineinfo output has only line tables).
  bool debug = false;
};

// 0 when the ABI version is neither 7 nor 8.
uint8_t elf_abi_from_abi_version(uint8_t abi_version);

// Throws ScanError when `bytes` is not a readable cubin.
CubinInfo read_cubin(const ByteReader& bytes);

}  // namespace archfit::binary
