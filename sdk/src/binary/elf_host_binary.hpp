#pragma once
// The ELF reader of host_binary.hpp: a 64-bit little-endian host library,
// extension module or executable (not a cubin) as a HostBinary.
#include "byte_reader.hpp"
#include "host_binary.hpp"

namespace archfit::binary {

// Throws ScanError when the header or the section table itself is
// unreadable; a damaged .dynamic is a problem of the result, and its
// sections are still listed.
HostBinary read_elf_host_binary(const ByteReader& bytes);

}  // namespace archfit::binary
