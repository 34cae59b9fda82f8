// The Windows dependencies (tools/windows/build_deps.sh), each used once as
// archfit uses it, in one mingw-w64 executable run under Wine (issue 35):
// yaml-cpp reads YAML, zstd and LZ4 round-trip bytes, xxHash hashes them,
// libzip reads a zip in memory (zlib inflating it), RE2 matches, nlohmann-json and
// CLI11 parse, Boost.DLL loads kernel32. It prints one line per library and
// exits 0 only when every one gave the right answer.
#include <lz4.h>
#include <re2/re2.h>
#include <xxhash.h>
#include <yaml-cpp/yaml.h>
#include <zip.h>
#include <zstd.h>

#include <CLI/CLI.hpp>
#include <boost/dll/shared_library.hpp>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace {

int failures = 0;

void report(const char* library, bool right, const std::string& detail) {
  std::printf("%-14s %s  %s\n", library, right ? "ok  " : "FAIL", detail.c_str());
  std::fflush(stdout);
  if (!right) ++failures;
}

}  // namespace

int main(int argc, char** argv) {
  const YAML::Node gpus = YAML::Load("gpus:\n  - {name: RTX 5090, sm: 120}\n");
  report("yaml-cpp", gpus["gpus"][0]["sm"].as<int>() == 120,
         gpus["gpus"][0]["name"].as<std::string>());

  const std::string text(100000, 'x');
  std::vector<char> packed(ZSTD_compressBound(text.size()));
  const size_t packed_size =
      ZSTD_compress(packed.data(), packed.size(), text.data(), text.size(), 3);
  std::string unpacked(text.size(), '\0');
  const size_t unpacked_size =
      ZSTD_decompress(unpacked.data(), unpacked.size(), packed.data(), packed_size);
  report("zstd", !ZSTD_isError(packed_size) && unpacked_size == text.size() && unpacked == text,
         std::to_string(text.size()) + " bytes to " + std::to_string(packed_size));

  std::vector<char> lz4(LZ4_compressBound(static_cast<int>(text.size())));
  const int lz4_size = LZ4_compress_default(text.data(), lz4.data(), static_cast<int>(text.size()),
                                            static_cast<int>(lz4.size()));
  std::string lz4_back(text.size(), '\0');
  const int lz4_back_size =
      LZ4_decompress_safe(lz4.data(), lz4_back.data(), lz4_size, static_cast<int>(lz4_back.size()));
  report("lz4", lz4_back_size == static_cast<int>(text.size()) && lz4_back == text,
         std::to_string(text.size()) + " bytes to " + std::to_string(lz4_size));

  // XXH3-64 of "archfit", as xxhsum -H3 prints it on Linux.
  const unsigned long long hash = XXH3_64bits("archfit", 7);
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", hash);
  report("xxhash", hash != 0, hex);

  // A wheel-like zip: one deflated member, as Python's zipfile writes it.
  static const char kZip[] =
      "\x50\x4b\x03\x04\x14\x00\x00\x00\x08\x00\xbd\xa8\x86\x5d\xfb\xd2"
      "\x1d\x9d\x0c\x00\x00\x00\x8c\x00\x00\x00\x14\x00\x00\x00\x74\x6f"
      "\x72\x63\x68\x2f\x6c\x69\x62\x2f\x6d\x65\x6d\x62\x65\x72\x2e\x74"
      "\x78\x74\x4b\x4b\x2c\x49\xca\xcc\x53\x48\x1b\x0c\x14\x00\x50\x4b"
      "\x01\x02\x14\x03\x14\x00\x00\x00\x08\x00\xbd\xa8\x86\x5d\xfb\xd2"
      "\x1d\x9d\x0c\x00\x00\x00\x8c\x00\x00\x00\x14\x00\x00\x00\x00\x00"
      "\x00\x00\x00\x00\x00\x00\x80\x01\x00\x00\x00\x00\x74\x6f\x72\x63"
      "\x68\x2f\x6c\x69\x62\x2f\x6d\x65\x6d\x62\x65\x72\x2e\x74\x78\x74"
      "\x50\x4b\x05\x06\x00\x00\x00\x00\x01\x00\x01\x00\x42\x00\x00\x00"
      "\x3e\x00\x00\x00\x00\x00";
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* memory = zip_source_buffer_create(kZip, sizeof kZip - 1, 0, &error);
  zip_t* archive = memory ? zip_open_from_source(memory, ZIP_RDONLY, &error) : nullptr;
  std::string member;
  if (archive && zip_get_num_entries(archive, 0) == 1) {
    if (zip_file_t* file = zip_fopen_index(archive, 0, 0)) {
      char buffer[256];
      const zip_int64_t got = zip_fread(file, buffer, sizeof buffer);
      if (got > 0) member.assign(buffer, static_cast<size_t>(got));
      zip_fclose(file);
    }
  }
  std::string name = archive ? zip_get_name(archive, 0, 0) : "";
  if (archive) zip_discard(archive);
  report("libzip",
         name == "torch/lib/member.txt" && member.size() == 140 && member.rfind("fatbin ", 0) == 0,
         name + ", " + std::to_string(member.size()) + " bytes inflated");

  std::string arch;
  const bool matched =
      RE2::PartialMatch("no kernel image for sm_120", R"((sm_[0-9]+))", &arch) && arch == "sm_120";
  report("re2", matched, arch);

  const auto json = nlohmann::json::parse(R"({"verdict": "fails", "arch": 120})");
  report("nlohmann-json", json["arch"] == 120, json.dump());

  CLI::App app("smoke");
  std::string gpu;
  app.add_option("--gpu", gpu);
  const char* given[] = {"smoke", "--gpu", "RTX 5090"};
  app.parse(3, given);
  report("CLI11", gpu == "RTX 5090", gpu);

  boost::dll::shared_library kernel32("kernel32.dll", boost::dll::load_mode::search_system_folders);
  report("Boost.DLL", kernel32.is_loaded() && kernel32.has("GetTickCount64"),
         "kernel32.dll GetTickCount64");

  (void)argc;
  (void)argv;
  std::printf("%s\n", failures == 0 ? "every dependency works" : "some dependency failed");
  return failures == 0 ? 0 : 1;
}
