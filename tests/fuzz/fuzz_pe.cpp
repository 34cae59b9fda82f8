// The PE/COFF reader on any bytes (issue 33): headers, the section table
// with "/N" long names, the import, delay-load import and export tables.
// Whatever a .dll or .pyd claims, it must throw ScanError or return, never
// crash, hang or read out of bounds; the scan of it likewise.
#include <cstddef>
#include <cstdint>

#include "binary/byte_reader.hpp"
#include "binary/pe_host_binary.hpp"
#include "binary/scan_error.hpp"
#include "binary/scanner.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto bytes = archfit::fuzz::bytes(data, size);
  try {
    (void)archfit::binary::read_pe_host_binary(archfit::binary::ByteReader(bytes));
  } catch (const archfit::binary::ScanError&) {
  }
  (void)archfit::binary::scan_bytes(bytes, "fuzz.dll");
  return 0;
}
