// A wheel (a zip archive) as `archfit check --wheel` reads it: its METADATA,
// WHEEL tags and torch/version.py, then every member that may hold device
// code scanned from memory. Whatever the central directory claims (sizes,
// offsets, methods, CRCs), the answer is a Wheel with problems or a scan
// with problems, never a crash and never an allocation the file cannot back.
#include <cstddef>
#include <cstdint>
#include <utility>

#include "binary/archive_scan.hpp"
#include "binary/zip_archive.hpp"
#include "env/wheel.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const auto path = archfit::fuzz::scratch_dir() / "fuzz-1.0-py3-none-any.whl";
  archfit::fuzz::write_file(path, archfit::fuzz::text(data, size));
  (void)archfit::env::read_wheel(path);
  try {
    archfit::binary::ZipReaderPool pool(path);
    auto archive = pool.acquire();
    const auto members = archive->members();
    pool.release(std::move(archive));
    for (const auto& member : members) {
      if (archfit::binary::may_hold_device_code(member.name))
        (void)archfit::binary::scan_member(pool, member, {});
    }
  } catch (const archfit::binary::ZipError&) {
  }
  return 0;
}
