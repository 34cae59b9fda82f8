#pragma once
// The PE/COFF reader of host_binary.hpp: a Windows .dll, .pyd or .exe
// (PE32+, x64 or ARM64) as a HostBinary. Device code sits where nvcc and
// MSVC put it: fatbin containers in .nv_fatb, device-link inputs in
// __nv_rel*, and containers embedded in other initialised-data sections.
#include "byte_reader.hpp"
#include "host_binary.hpp"

namespace archfit::binary {

// Throws ScanError when the headers or the section table itself are
// unreadable; a damaged import or export table is a problem of the result,
// and its sections are still listed.
HostBinary read_pe_host_binary(const ByteReader& bytes);

}  // namespace archfit::binary
