// The binary scanner on any bytes: ELF, PE, fatbin, cubin, PTX and everything
// else, decompressing payloads (deep), and its JSON rendering. It must
// never crash, hang or read out of bounds, whatever the file claims.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>

#include "binary/scan_json.hpp"
#include "binary/scanner.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  archfit::binary::ScanOptions options;
  options.deep = true;
  const auto scan = archfit::binary::scan_bytes(archfit::fuzz::bytes(data, size), "fuzz", options);
  (void)archfit::binary::to_json(scan).dump(-1, ' ', false,
                                            nlohmann::json::error_handler_t::replace);
  return 0;
}
