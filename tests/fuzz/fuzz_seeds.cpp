// Writes each fuzz target's seed corpus from the test fixtures and data:
//
//   archfit_fuzz_seeds <out>   → <out>/<target>/…
//
// scanner: the nvcc-built fixtures (ELF, fatbin, cubin, PTX, and the
// mingw-w64 DLLs) of up to 256 KB; pe: those DLLs; kb: each knowledge-base file, prefixed by its
// name line; error_text: the error corpus of tests/data/errors; manifest: good and bad manifests;
// cache_entry: valid entries for the target's key; wheel: small wheels, deflated and stored,
// holding a fixture library, and two small zip bombs (overlapping entries, a member past the
// decompression budget).
#include <cstddef>
#include <cstdio>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "fuzz_input.hpp"
#include "store/entry_format.hpp"
#include "wheel_builder.hpp"

namespace fs = std::filesystem;
using archfit::fuzz::write_file;
using archfit::test::file_content;

namespace {

void copy_small_files(const fs::path& from, const fs::path& to, uintmax_t max_bytes) {
  fs::create_directories(to);
  for (const auto& entry : fs::directory_iterator(from)) {
    if (entry.is_regular_file() && entry.file_size() <= max_bytes)
      fs::copy_file(entry.path(), to / entry.path().filename(),
                    fs::copy_options::overwrite_existing);
  }
}

std::string cache_entry(const std::string& key, const std::string& payload) {
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(payload.data()),
                                         payload.size());
  const auto header = archfit::store::entry_header(key, bytes);
  return std::string(reinterpret_cast<const char*>(header.data()), header.size()) + payload;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: archfit_fuzz_seeds OUT_DIR\n");
    return 2;
  }
  const fs::path out = argv[1];
  const fs::path fixtures = ARCHFIT_FIXTURE_DIR;
  try {
    copy_small_files(fixtures, out / "scanner", 256 * 1024);
    fs::create_directories(out / "pe");
    for (const auto& entry : fs::directory_iterator(fixtures)) {
      if (entry.path().extension() == ".dll")
        fs::copy_file(entry.path(), out / "pe" / entry.path().filename(),
                      fs::copy_options::overwrite_existing);
    }
    copy_small_files(ARCHFIT_ERRORS_DIR, out / "error_text", 1 << 20);
    // Issue 34: one line as long as an input may be (run_fuzzers.sh's
    // -max_len), the error at its start, and one of whitespace, digits and
    // text before it: the shapes that made std::regex recurse off the stack.
    const std::string error =
        "RuntimeError: CUDA error: no kernel image is available for execution on the device";
    write_file(out / "error_text" / "long_tail.txt", error + std::string(200 * 1024, 'x'));
    std::string report;
    while (report.size() < 200 * 1024) report += "   1234567890 sm_ 12 . ( ) , text\t";
    write_file(out / "error_text" / "long_report.txt", report + error);

    fs::create_directories(out / "kb");
    for (const auto& entry : fs::directory_iterator(ARCHFIT_KB_SOURCE_DIR)) {
      if (entry.path().extension() != ".yaml") continue;
      const std::string name = entry.path().filename().string();
      write_file(out / "kb" / name, name + "\n" + file_content(entry.path()));
    }

    fs::create_directories(out / "manifest");
    write_file(out / "manifest" / "good.yaml",
               "schema: archfit.plugin/1\nname: imagegen_ops\nlibrary: libx.so\nabi: 1\n");
    write_file(out / "manifest" / "range.yaml",
               "schema: archfit.plugin/1\nname: x\nlibrary: sub/libx.so\nabi: [1, 2]\n");
    write_file(out / "manifest" / "bad.yaml", "schema: [unclosed\nname: x y\nabi: one\n");

    const std::string key = "ab" + std::string(30, '0');  // fuzz_cache_entry.cpp's key
    fs::create_directories(out / "cache_entry");
    write_file(out / "cache_entry" / "empty.bin", cache_entry(key, ""));
    write_file(out / "cache_entry" / "text.bin", cache_entry(key, "a compiled image"));
    write_file(out / "cache_entry" / "cubin.bin",
               cache_entry(key, file_content(fixtures / "sm_75.cubin")));
    write_file(out / "cache_entry" / "other_key.bin",
               cache_entry("cd" + std::string(30, '1'), "x"));

    fs::create_directories(out / "wheel");
    // A small ELF object holding a fatbin, named as an extension module.
    const std::string library = file_content(fixtures / "sm_75.o");
    const std::vector<archfit::test::ZipEntry> members = {
        {"ops-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: ops\nVersion: 1.0\n"},
        {"ops-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nTag: cp311-cp311-linux_x86_64\n"},
        {"torch/version.py", "__version__ = '2.5.1+cu124'\ncuda = '12.4'\n"},
        {"ops/_C.so", library}};
    archfit::test::write_zip(out / "wheel" / "deflated.whl", members);
    std::vector<archfit::test::ZipEntry> stored = members;
    for (auto& member : stored) member.stored = true;
    archfit::test::write_zip(out / "wheel" / "stored.whl", stored);
    // Issue 24's bombs, small: entries sharing one deflate stream, and one
    // member of 128 MiB (128 KB deflated) past the wheel's budget.
    archfit::test::write_overlapping_zip(out / "wheel" / "overlapping.whl",
                                         {"ops/_C.so", "ops/_D.so", "ops/lib.so.1"},
                                         std::string(1 << 20, '\0'));
    std::vector<archfit::test::ZipEntry> oversized = members;
    oversized.push_back({"ops/_bomb.so", std::string(128u << 20, '\0')});
    archfit::test::write_zip(out / "wheel" / "oversized.whl", oversized);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "archfit_fuzz_seeds: %s\n", error.what());
    return 1;
  }
  return 0;
}
