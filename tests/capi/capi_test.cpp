// The rules of the C ABI (docs/c-abi.md; archfit.h's header comment),
// checked through libarchfit.so exactly as a host sees it: this binary links
// the shared library and sees only sdk/include, never the C++ core.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "archfit/archfit.h"
#include "archfit/archfit.hpp"

namespace {

using ::testing::HasSubstr;

// ---- a hand-made fatbin container (docs/cuda-binaries.md) ----

void put(std::vector<unsigned char>& bytes, size_t at, uint64_t value, size_t width) {
  for (size_t i = 0; i < width; ++i) bytes[at + i] = static_cast<unsigned char>(value >> (8 * i));
}

struct Entry {
  uint16_t kind;
  uint16_t version_major, version_minor;
  uint32_t arch;
  uint64_t flags;
  uint64_t payload;
  uint32_t compressed_size = 0;
  uint64_t uncompressed_size = 0;
};

std::vector<unsigned char> make_fatbin(const std::vector<Entry>& entries) {
  constexpr size_t kHeader = 64;
  std::vector<unsigned char> bytes(16);
  for (const Entry& e : entries) {
    const size_t at = bytes.size();
    bytes.resize(at + kHeader + e.payload, 0xab);
    std::fill_n(bytes.begin() + at, kHeader, 0);
    put(bytes, at + 0x00, e.kind, 2);
    put(bytes, at + 0x02, 0x0101, 2);
    put(bytes, at + 0x04, kHeader, 4);
    put(bytes, at + 0x08, e.payload, 8);
    put(bytes, at + 0x10, e.compressed_size, 4);
    put(bytes, at + 0x18, e.version_minor, 2);
    put(bytes, at + 0x1a, e.version_major, 2);
    put(bytes, at + 0x1c, e.arch, 4);
    put(bytes, at + 0x28, e.flags, 8);
    put(bytes, at + 0x38, e.uncompressed_size, 8);
  }
  put(bytes, 0, 0xBA55ED50, 4);
  put(bytes, 4, 1, 2);
  put(bytes, 6, 16, 2);
  put(bytes, 8, bytes.size() - 16, 8);
  return bytes;
}

// SASS sm_90a at 0x10, ZSTD PTX 7.8 for compute_80 at 0x60, LTO-IR lto_100f at 0xb0.
const std::vector<unsigned char>& sample_fatbin() {
  static const std::vector<unsigned char> bytes = make_fatbin({
      {2, 1, 8, 90, 0x100011, 16},
      {1, 7, 8, 80, 0x8011, 16, 13, 100},
      {8, 1, 65, 100, 0x210011, 8},
  });
  return bytes;
}

// ---- helpers -----------------------------------------------------------------

struct ContextDeleter {
  void operator()(archfit_context* c) const { archfit_context_destroy(c); }
};
struct ScanDeleter {
  void operator()(archfit_scan* s) const { archfit_scan_destroy(s); }
};
using ContextPtr = std::unique_ptr<archfit_context, ContextDeleter>;
using ScanPtr = std::unique_ptr<archfit_scan, ScanDeleter>;

ContextPtr make_context() {
  archfit_context* context = nullptr;
  EXPECT_EQ(archfit_context_create(nullptr, &context), ARCHFIT_OK) << archfit_last_error();
  return ContextPtr(context);
}

ScanPtr scan_bytes(archfit_context* context, const std::vector<unsigned char>& bytes,
                   const archfit_scan_options* options = nullptr) {
  archfit_scan* scan = nullptr;
  EXPECT_EQ(
      archfit_scan_buffer(context, bytes.data(), bytes.size(), "sample.fatbin", options, &scan),
      ARCHFIT_OK)
      << archfit_last_error();
  return ScanPtr(scan);
}

std::string last_error() { return archfit_last_error(); }

// A non-NULL pointer value no call may write over on failure.
template <typename T>
T* sentinel() {
  return reinterpret_cast<T*>(uintptr_t{0x5eed0});
}

class CApi : public ::testing::Test {
 protected:
  ContextPtr context_ = make_context();
};

// ---- versions ------------------------------------------------------------------

TEST(CApiVersion, RuntimeVersionMatchesTheHeader) {
  EXPECT_EQ(archfit_version(), static_cast<uint32_t>(ARCHFIT_VERSION_NUMBER));
  EXPECT_STREQ(archfit_version_string(), ARCHFIT_VERSION_STRING);
  EXPECT_EQ(std::to_string(ARCHFIT_VERSION_MAJOR) + "." + std::to_string(ARCHFIT_VERSION_MINOR) +
                "." + std::to_string(ARCHFIT_VERSION_PATCH),
            ARCHFIT_VERSION_STRING);
  EXPECT_TRUE(archfit::library_is_compatible());
}

TEST(CApiStatus, EveryStatusHasText) {
  for (int code = ARCHFIT_OK; code <= ARCHFIT_ERROR_INTERNAL; ++code) {
    const char* text = archfit_status_string(static_cast<archfit_status>(code));
    ASSERT_NE(text, nullptr);
    EXPECT_STRNE(text, "") << code;
    EXPECT_STRNE(text, "unknown status") << code;
  }
  ASSERT_NE(archfit_status_string(static_cast<archfit_status>(-1)), nullptr);
}

// ---- NULL arguments ------------------------------------------------------------------

struct NullCase {
  const char* function;
  const char* argument;
  archfit_status (*call)(archfit_context* context);
};

const archfit_image_info kZeroInfo{};

std::vector<NullCase> null_cases() {
  return {
      {"archfit_context_create", "out_context",
       [](archfit_context*) { return archfit_context_create(nullptr, nullptr); }},
      {"archfit_scan_file", "context",
       [](archfit_context*) {
         archfit_scan* scan = nullptr;
         return archfit_scan_file(nullptr, "/dev/null", nullptr, &scan);
       }},
      {"archfit_scan_file", "path",
       [](archfit_context* c) {
         archfit_scan* scan = nullptr;
         return archfit_scan_file(c, nullptr, nullptr, &scan);
       }},
      {"archfit_scan_file", "out_scan",
       [](archfit_context* c) { return archfit_scan_file(c, "/dev/null", nullptr, nullptr); }},
      {"archfit_scan_buffer", "context",
       [](archfit_context*) {
         archfit_scan* scan = nullptr;
         return archfit_scan_buffer(nullptr, "x", 1, nullptr, nullptr, &scan);
       }},
      {"archfit_scan_buffer", "out_scan",
       [](archfit_context* c) {
         return archfit_scan_buffer(c, "x", 1, nullptr, nullptr, nullptr);
       }},
      {"archfit_scan_buffer", "data",
       [](archfit_context* c) {
         archfit_scan* scan = nullptr;
         return archfit_scan_buffer(c, nullptr, 1, nullptr, nullptr, &scan);
       }},
      {"archfit_scan_file_run", "path",
       [](archfit_context* c) {
         archfit_scan* scan = nullptr;
         return archfit_scan_file_run(c, nullptr, nullptr, &scan);
       }},
      {"archfit_scan_buffer_run", "data",
       [](archfit_context* c) {
         archfit_scan* scan = nullptr;
         return archfit_scan_buffer_run(c, nullptr, 1, nullptr, nullptr, &scan);
       }},
      {"archfit_scan_image", "scan",
       [](archfit_context*) {
         archfit_image_info info = kZeroInfo;
         info.struct_size = sizeof info;
         return archfit_scan_image(nullptr, 0, &info);
       }},
      {"archfit_scan_image", "out",
       [](archfit_context* c) {
         archfit_scan* scan = nullptr;
         if (archfit_scan_buffer(c, nullptr, 0, nullptr, nullptr, &scan) != ARCHFIT_OK)
           return ARCHFIT_ERROR_INTERNAL;
         const archfit_status status = archfit_scan_image(scan, 0, nullptr);
         archfit_scan_destroy(scan);
         return status;
       }},
      {"archfit_scan_json", "scan",
       [](archfit_context*) {
         const char* json = nullptr;
         return archfit_scan_json(nullptr, &json);
       }},
      {"archfit_scan_json", "out_json",
       [](archfit_context* c) {
         archfit_scan* scan = nullptr;
         if (archfit_scan_buffer(c, nullptr, 0, nullptr, nullptr, &scan) != ARCHFIT_OK)
           return ARCHFIT_ERROR_INTERNAL;
         const archfit_status status = archfit_scan_json(scan, nullptr);
         archfit_scan_destroy(scan);
         return status;
       }},
  };
}

TEST_F(CApi, NullArgumentIsInvalidArgumentNamingArgumentAndFunction) {
  for (const NullCase& c : null_cases()) {
    SCOPED_TRACE(std::string(c.function) + "(" + c.argument + " = NULL)");
    EXPECT_EQ(c.call(context_.get()), ARCHFIT_ERROR_INVALID_ARGUMENT);
    const std::string message = last_error();
    EXPECT_THAT(message, HasSubstr(c.function));
    EXPECT_THAT(message, HasSubstr(std::string(c.argument) + " is NULL"));
  }
}

// ---- out-parameters ---------------------------------------------------------------------

TEST_F(CApi, OutParametersAreUntouchedOnFailure) {
  archfit_context* context = sentinel<archfit_context>();
  const archfit_context_options bad_context_options{1, 0, nullptr};
  EXPECT_NE(archfit_context_create(&bad_context_options, &context), ARCHFIT_OK);
  EXPECT_EQ(context, sentinel<archfit_context>());

  archfit_scan* scan = sentinel<archfit_scan>();
  EXPECT_EQ(archfit_scan_file(context_.get(), "/nonexistent/archfit/none.so", nullptr, &scan),
            ARCHFIT_ERROR_IO);
  EXPECT_EQ(scan, sentinel<archfit_scan>());
  const archfit_scan_options bad_flags{sizeof(archfit_scan_options), 0x40};
  const auto& bytes = sample_fatbin();
  EXPECT_NE(
      archfit_scan_buffer(context_.get(), bytes.data(), bytes.size(), nullptr, &bad_flags, &scan),
      ARCHFIT_OK);
  EXPECT_EQ(scan, sentinel<archfit_scan>());
  EXPECT_NE(archfit_scan_buffer(nullptr, bytes.data(), bytes.size(), nullptr, nullptr, &scan),
            ARCHFIT_OK);
  EXPECT_EQ(scan, sentinel<archfit_scan>());

  ScanPtr good = scan_bytes(context_.get(), bytes);
  ASSERT_NE(good, nullptr);
  archfit_image_info info;
  std::memset(&info, 0xcd, sizeof info);
  info.struct_size = sizeof info;
  archfit_image_info before;
  std::memcpy(&before, &info, sizeof info);
  EXPECT_EQ(archfit_scan_image(good.get(), 99, &info), ARCHFIT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(std::memcmp(&info, &before, sizeof info), 0);
  info.struct_size = sizeof info - 8;
  std::memcpy(&before, &info, sizeof info);
  EXPECT_EQ(archfit_scan_image(good.get(), 0, &info), ARCHFIT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(std::memcmp(&info, &before, sizeof info), 0);

  const char* json = sentinel<const char>();
  EXPECT_NE(archfit_scan_json(nullptr, &json), ARCHFIT_OK);
  EXPECT_EQ(json, sentinel<const char>());
}

// ---- the thread-local last error ---------------------------------------------------------

TEST_F(CApi, LastErrorBelongsToTheCallingThread) {
  archfit_scan* scan = nullptr;
  ASSERT_EQ(archfit_scan_file(context_.get(), "/nonexistent/main-thread", nullptr, &scan),
            ARCHFIT_ERROR_IO);
  ASSERT_THAT(last_error(), HasSubstr("/nonexistent/main-thread"));

  std::string seen_on_other_thread_before;
  std::string seen_on_other_thread_after;
  std::thread other([&] {
    seen_on_other_thread_before = archfit_last_error();
    archfit_scan* other_scan = nullptr;
    if (archfit_scan_file(context_.get(), "/nonexistent/other-thread", nullptr, &other_scan) ==
        ARCHFIT_ERROR_IO) {
      seen_on_other_thread_after = archfit_last_error();
    }
  });
  other.join();

  EXPECT_EQ(seen_on_other_thread_before, "") << "a fresh thread sees another thread's error";
  EXPECT_THAT(seen_on_other_thread_after, HasSubstr("/nonexistent/other-thread"));
  EXPECT_THAT(last_error(), HasSubstr("/nonexistent/main-thread"))
      << "another thread's failure overwrote ours";
}

// ---- struct_size ---------------------------------------------------------------------------

TEST_F(CApi, StructSizeTooSmallIsRejected) {
  for (uint32_t size : {0u, 1u, 4u, 7u}) {
    SCOPED_TRACE(size);
    const archfit_context_options context_options{size, 0, nullptr};
    archfit_context* context = nullptr;
    EXPECT_EQ(archfit_context_create(&context_options, &context), ARCHFIT_ERROR_INVALID_ARGUMENT);
    EXPECT_THAT(last_error(), HasSubstr("struct_size"));
    EXPECT_EQ(context, nullptr);

    const archfit_scan_options scan_options{size, 0};
    archfit_scan* scan = nullptr;
    const auto& bytes = sample_fatbin();
    EXPECT_EQ(archfit_scan_buffer(context_.get(), bytes.data(), bytes.size(), nullptr,
                                  &scan_options, &scan),
              ARCHFIT_ERROR_INVALID_ARGUMENT);
    EXPECT_THAT(last_error(), HasSubstr("struct_size"));
    EXPECT_EQ(scan, nullptr);
  }
  ScanPtr scan = scan_bytes(context_.get(), sample_fatbin());
  archfit_image_info info{};
  info.struct_size = sizeof info - 1;
  EXPECT_EQ(archfit_scan_image(scan.get(), 0, &info), ARCHFIT_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(last_error(), HasSubstr("struct_size"));
}

// What a caller compiled against a newer header passes: the struct this
// library knows, followed by fields it does not.
template <typename T>
struct Newer {
  T known;
  uint32_t future[6];
};

TEST_F(CApi, LargerStructWithZeroTailIsAccepted) {
  Newer<archfit_context_options> context_options{};
  context_options.known.struct_size = sizeof context_options;
  context_options.known.threads = 1;
  archfit_context* context = nullptr;
  ASSERT_EQ(archfit_context_create(&context_options.known, &context), ARCHFIT_OK) << last_error();
  ContextPtr owned(context);

  Newer<archfit_scan_options> scan_options{};
  scan_options.known.struct_size = sizeof scan_options;
  scan_options.known.flags = ARCHFIT_SCAN_DEFAULT;
  ScanPtr scan = scan_bytes(context, sample_fatbin(), &scan_options.known);
  ASSERT_NE(scan, nullptr);
  EXPECT_EQ(archfit_scan_image_count(scan.get()), 3u);
}

TEST_F(CApi, LargerStructWithNonZeroTailIsUnsupported) {
  Newer<archfit_context_options> context_options{};
  context_options.known.struct_size = sizeof context_options;
  context_options.future[3] = 1;
  archfit_context* context = sentinel<archfit_context>();
  EXPECT_EQ(archfit_context_create(&context_options.known, &context), ARCHFIT_ERROR_UNSUPPORTED);
  EXPECT_THAT(last_error(), HasSubstr("archfit_context_options"));
  EXPECT_EQ(context, sentinel<archfit_context>());

  Newer<archfit_scan_options> scan_options{};
  scan_options.known.struct_size = sizeof scan_options;
  scan_options.future[0] = 7;
  archfit_scan* scan = sentinel<archfit_scan>();
  const auto& bytes = sample_fatbin();
  EXPECT_EQ(archfit_scan_buffer(context_.get(), bytes.data(), bytes.size(), nullptr,
                                &scan_options.known, &scan),
            ARCHFIT_ERROR_UNSUPPORTED);
  EXPECT_THAT(last_error(), HasSubstr("archfit_scan_options"));
  EXPECT_EQ(scan, sentinel<archfit_scan>());
}

TEST_F(CApi, LargerImageInfoIsFilledAndItsTailLeftAlone) {
  ScanPtr scan = scan_bytes(context_.get(), sample_fatbin());
  Newer<archfit_image_info> info{};
  info.known.struct_size = sizeof info;
  std::fill(std::begin(info.future), std::end(info.future), 0xfeedu);
  ASSERT_EQ(archfit_scan_image(scan.get(), 0, &info.known), ARCHFIT_OK) << last_error();
  EXPECT_EQ(info.known.struct_size, sizeof info);
  EXPECT_EQ(info.known.sm, 90u);
  for (uint32_t word : info.future) EXPECT_EQ(word, 0xfeedu);
}

// ---- options --------------------------------------------------------------------------------

TEST_F(CApi, UnknownScanFlagBitsAreRejected) {
  const auto& bytes = sample_fatbin();
  for (uint32_t flag = 2; flag != 0; flag <<= 1) {
    SCOPED_TRACE(flag);
    const archfit_scan_options options{sizeof(archfit_scan_options), ARCHFIT_SCAN_DEEP | flag};
    archfit_scan* scan = nullptr;
    EXPECT_EQ(
        archfit_scan_buffer(context_.get(), bytes.data(), bytes.size(), nullptr, &options, &scan),
        ARCHFIT_ERROR_UNSUPPORTED);
    EXPECT_THAT(last_error(), HasSubstr("flags"));
    EXPECT_EQ(scan, nullptr);
  }
  const archfit_scan_options deep{sizeof(archfit_scan_options), ARCHFIT_SCAN_DEEP};
  ScanPtr scan = scan_bytes(context_.get(), bytes, &deep);
  EXPECT_EQ(archfit_scan_image_count(scan.get()), 3u);
}

// ---- files and malformed input ------------------------------------------------------------------

TEST_F(CApi, MissingFileIsIoErrorNamingThePath) {
  const std::string path = "/nonexistent/archfit-capi-test/libmissing.so";
  archfit_scan* scan = nullptr;
  EXPECT_EQ(archfit_scan_file(context_.get(), path.c_str(), nullptr, &scan), ARCHFIT_ERROR_IO);
  EXPECT_THAT(last_error(), HasSubstr("archfit_scan_file"));
  EXPECT_THAT(last_error(), HasSubstr(path));
  EXPECT_EQ(scan, nullptr);
}

TEST_F(CApi, ScanFileReadsWhatScanBufferReads) {
  const auto path = std::filesystem::path(::testing::TempDir()) / "capi_test_sample.fatbin";
  {
    std::ofstream out(path, std::ios::binary);
    const auto& bytes = sample_fatbin();
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
  }
  archfit_scan* raw = nullptr;
  ASSERT_EQ(archfit_scan_file(context_.get(), path.c_str(), nullptr, &raw), ARCHFIT_OK)
      << last_error();
  ScanPtr scan(raw);
  std::filesystem::remove(path);
  EXPECT_EQ(archfit_scan_format(scan.get()), ARCHFIT_FORMAT_FATBIN);
  EXPECT_EQ(archfit_scan_image_count(scan.get()), 3u);
  EXPECT_EQ(archfit_scan_error(scan.get()), nullptr);
}

// archfit_scan_file_run and archfit_scan_buffer_run are the consistent names
// (docs/c-abi.md, "Names"); archfit_scan_file and archfit_scan_buffer, the
// first release's, are kept as the same calls. Each failure names the
// function the caller wrote, first.
TEST_F(CApi, TheFirstReleasesScanNamesAreTheSameCallsAsTheRunNames) {
  const auto path = std::filesystem::path(::testing::TempDir()) / "capi_test_names.fatbin";
  const auto& bytes = sample_fatbin();
  {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
  }
  archfit_scan* scans[4] = {};
  ASSERT_EQ(archfit_scan_file_run(context_.get(), path.c_str(), nullptr, &scans[0]), ARCHFIT_OK);
  ASSERT_EQ(archfit_scan_file(context_.get(), path.c_str(), nullptr, &scans[1]), ARCHFIT_OK);
  ASSERT_EQ(
      archfit_scan_buffer_run(context_.get(), bytes.data(), bytes.size(), "b", nullptr, &scans[2]),
      ARCHFIT_OK);
  ASSERT_EQ(
      archfit_scan_buffer(context_.get(), bytes.data(), bytes.size(), "b", nullptr, &scans[3]),
      ARCHFIT_OK);
  std::filesystem::remove(path);
  const char* json[4] = {};
  for (int i = 0; i < 4; ++i) ASSERT_EQ(archfit_scan_json(scans[i], &json[i]), ARCHFIT_OK);
  EXPECT_STREQ(json[0], json[1]);
  EXPECT_STREQ(json[2], json[3]);
  for (archfit_scan* scan : scans) archfit_scan_destroy(scan);

  archfit_scan* none = nullptr;
  EXPECT_EQ(archfit_scan_file_run(context_.get(), "/nonexistent/x.so", nullptr, &none),
            ARCHFIT_ERROR_IO);
  EXPECT_EQ(last_error().rfind("archfit_scan_file_run: ", 0), 0u) << last_error();
  EXPECT_EQ(archfit_scan_file(context_.get(), "/nonexistent/x.so", nullptr, &none),
            ARCHFIT_ERROR_IO);
  EXPECT_EQ(last_error().rfind("archfit_scan_file: ", 0), 0u) << last_error();
  EXPECT_EQ(archfit_scan_buffer_run(nullptr, "x", 1, nullptr, nullptr, &none),
            ARCHFIT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(last_error().rfind("archfit_scan_buffer_run: ", 0), 0u) << last_error();
  EXPECT_EQ(none, nullptr);
}

TEST_F(CApi, MalformedBufferIsAResultWithAnErrorNamingTheOffset) {
  auto bytes = sample_fatbin();
  put(bytes, 0xb0 + 4, 0x7fffffff, 4);  // the LTO entry's header size
  ScanPtr scan = scan_bytes(context_.get(), bytes);
  ASSERT_NE(scan, nullptr);
  EXPECT_EQ(archfit_scan_format(scan.get()), ARCHFIT_FORMAT_FATBIN);
  EXPECT_GE(archfit_scan_error_count(scan.get()), 1u);
  const char* error = archfit_scan_error(scan.get());
  ASSERT_NE(error, nullptr);
  EXPECT_THAT(std::string(error), HasSubstr("offset 0xb4"));
}

TEST_F(CApi, WellFormedBufferHasNoError) {
  ScanPtr scan = scan_bytes(context_.get(), sample_fatbin());
  EXPECT_EQ(archfit_scan_error(scan.get()), nullptr);
  EXPECT_EQ(archfit_scan_error_count(scan.get()), 0u);
}

// ---- handles --------------------------------------------------------------------------------

TEST(CApiHandles, DestroyNullIsANoOp) {
  archfit_context_destroy(nullptr);
  archfit_scan_destroy(nullptr);
  SUCCEED();
}

TEST_F(CApi, ImageIndexOutOfRangeIsInvalidArgument) {
  ScanPtr scan = scan_bytes(context_.get(), sample_fatbin());
  archfit_image_info info{};
  info.struct_size = sizeof info;
  EXPECT_EQ(archfit_scan_image(scan.get(), 3, &info), ARCHFIT_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(last_error(), HasSubstr("archfit_scan_image"));
  EXPECT_THAT(last_error(), HasSubstr("3"));
  EXPECT_EQ(archfit_scan_image(scan.get(), SIZE_MAX, &info), ARCHFIT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(info.sm, 0u);
}

TEST_F(CApi, ImagesCarryTheEntryHeaderFields) {
  ScanPtr scan = scan_bytes(context_.get(), sample_fatbin());
  ASSERT_EQ(archfit_scan_image_count(scan.get()), 3u);
  std::array<archfit_image_info, 3> info{};
  for (size_t i = 0; i < info.size(); ++i) {
    info[i].struct_size = sizeof info[i];
    ASSERT_EQ(archfit_scan_image(scan.get(), i, &info[i]), ARCHFIT_OK) << last_error();
  }
  EXPECT_EQ(info[0].kind, ARCHFIT_IMAGE_SASS);
  EXPECT_EQ(info[0].sm, 90u);
  EXPECT_EQ(info[0].variant, ARCHFIT_VARIANT_ARCH_SPECIFIC);
  EXPECT_EQ(info[0].elf_abi, 2u);
  EXPECT_EQ(info[0].offset, 0x10u);
  EXPECT_STREQ(info[0].section, "(fatbin)");
  EXPECT_EQ(info[1].kind, ARCHFIT_IMAGE_PTX);
  EXPECT_EQ(info[1].ptx_isa_major, 7u);
  EXPECT_EQ(info[1].ptx_isa_minor, 8u);
  EXPECT_EQ(info[1].compression, ARCHFIT_COMPRESSION_ZSTD);
  EXPECT_EQ(info[1].compressed_size, 13u);
  EXPECT_EQ(info[1].uncompressed_size, 100u);
  EXPECT_EQ(info[2].kind, ARCHFIT_IMAGE_LTO);
  EXPECT_EQ(info[2].variant, ARCHFIT_VARIANT_FAMILY_SPECIFIC);
  EXPECT_EQ(info[2].sm, 100u);
  // The section string is borrowed from the scan and outlives the call that returned it.
  archfit_image_info again{};
  again.struct_size = sizeof again;
  ASSERT_EQ(archfit_scan_image(scan.get(), 2, &again), ARCHFIT_OK);
  EXPECT_STREQ(info[0].section, "(fatbin)");
}

// ---- JSON -------------------------------------------------------------------------------------

TEST_F(CApi, JsonIsAnArchfitScanDocumentWithTheDesignFields) {
  ScanPtr scan = scan_bytes(context_.get(), sample_fatbin());
  const char* text = nullptr;
  ASSERT_EQ(archfit_scan_json(scan.get(), &text), ARCHFIT_OK) << last_error();
  ASSERT_NE(text, nullptr);
  const auto document = nlohmann::json::parse(text);
  EXPECT_EQ(document.at("schema"), "archfit.scan/1");
  ASSERT_TRUE(document.at("files").is_array());
  ASSERT_EQ(document["files"].size(), 1u);
  const auto& file = document["files"][0];
  EXPECT_EQ(file.at("path"), "sample.fatbin");
  EXPECT_TRUE(file.at("error").is_null());
  const auto& images = file.at("images");
  ASSERT_EQ(images.size(), 3u);
  for (const auto& image : images) {
    for (const char* field : {"kind", "sm", "variant", "ptx_isa", "elf_abi", "compression", "size",
                              "uncompressed_size", "section", "offset", "relocatable"}) {
      EXPECT_TRUE(image.contains(field)) << "image lacks \"" << field << "\": " << image.dump();
    }
    EXPECT_THAT((std::vector<std::string>{"sass", "ptx", "lto"}),
                ::testing::Contains(image.at("kind")));
    EXPECT_THAT((std::vector<std::string>{"plain", "a", "f"}),
                ::testing::Contains(image.at("variant")));
    EXPECT_THAT((std::vector<std::string>{"none", "lz4", "zstd"}),
                ::testing::Contains(image.at("compression")));
    EXPECT_TRUE(image.at("relocatable").is_boolean());
    EXPECT_TRUE(image.at("sm").is_number_unsigned());
  }
  EXPECT_EQ(images[0].at("kind"), "sass");
  EXPECT_EQ(images[0].at("sm"), 90);
  EXPECT_EQ(images[0].at("variant"), "a");
  EXPECT_EQ(images[0].at("elf_abi"), 2);
  EXPECT_EQ(images[0].at("offset"), 0x10);
  EXPECT_EQ(images[0].at("section"), "(fatbin)");
  EXPECT_EQ(images[1].at("kind"), "ptx");
  EXPECT_EQ(images[1].at("ptx_isa"), "7.8");
  EXPECT_EQ(images[1].at("compression"), "zstd");
  EXPECT_EQ(images[1].at("uncompressed_size"), 100);
  EXPECT_EQ(images[2].at("kind"), "lto");
  EXPECT_EQ(images[2].at("variant"), "f");
}

TEST_F(CApi, JsonOfAMalformedBufferCarriesTheError) {
  auto bytes = sample_fatbin();
  put(bytes, 0x60 + 2, 0x0202, 2);  // the PTX entry's marker
  ScanPtr scan = scan_bytes(context_.get(), bytes);
  const char* text = nullptr;
  ASSERT_EQ(archfit_scan_json(scan.get(), &text), ARCHFIT_OK) << last_error();
  const auto document = nlohmann::json::parse(text);
  const auto& file = document.at("files").at(0);
  ASSERT_TRUE(file.at("error").is_string());
  EXPECT_THAT(file["error"].get<std::string>(), HasSubstr("offset 0x60"));
  EXPECT_EQ(file["error"], archfit_scan_error(scan.get()));
}

// ---- concurrency
// ---------------------------------------------------------------------------------

TEST_F(CApi, ConstAccessorsAndJsonAreSafeFromManyThreads) {
  ScanPtr scan = scan_bytes(context_.get(), sample_fatbin());
  constexpr int kThreads = 8;
  constexpr int kRounds = 200;
  std::atomic<int> go{0};
  std::atomic<int> failures{0};
  std::vector<const char*> first_json(kThreads, nullptr);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      go.fetch_add(1);
      while (go.load() < kThreads)
        std::this_thread::yield();  // maximise overlap on the first json call
      for (int round = 0; round < kRounds; ++round) {
        const char* json = nullptr;
        if (archfit_scan_json(scan.get(), &json) != ARCHFIT_OK || json == nullptr) ++failures;
        if (round == 0) first_json[t] = json;
        if (json != first_json[t]) ++failures;
        if (archfit_scan_image_count(scan.get()) != 3) ++failures;
        if (archfit_scan_format(scan.get()) != ARCHFIT_FORMAT_FATBIN) ++failures;
        if (archfit_scan_error(scan.get()) != nullptr) ++failures;
        archfit_image_info info{};
        info.struct_size = sizeof info;
        if (archfit_scan_image(scan.get(), static_cast<size_t>(round % 3), &info) != ARCHFIT_OK)
          ++failures;
        if (round % 3 == 0 && info.sm != 90) ++failures;
        // Errors on this thread's own last-error slot, interleaved with the others.
        if (archfit_scan_image(scan.get(), 1000 + t, &info) != ARCHFIT_ERROR_INVALID_ARGUMENT)
          ++failures;
        if (std::string(archfit_last_error()).find(std::to_string(1000 + t)) == std::string::npos)
          ++failures;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  for (const char* json : first_json)
    EXPECT_EQ(json, first_json[0]) << "every thread sees the one cached document";
  EXPECT_TRUE(nlohmann::json::accept(first_json[0]));
}

TEST(CApiContext, OneContextServesManyThreads) {
  ContextPtr context = make_context();
  const auto& bytes = sample_fatbin();
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int round = 0; round < 50; ++round) {
        archfit_scan* scan = nullptr;
        if (archfit_scan_buffer(context.get(), bytes.data(), bytes.size(), nullptr, nullptr,
                                &scan) != ARCHFIT_OK) {
          ++failures;
          continue;
        }
        if (archfit_scan_image_count(scan) != 3) ++failures;
        archfit_scan_destroy(scan);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
}

// ---- the C++ wrapper ---------------------------------------------------------------------------

static_assert(!std::is_copy_constructible_v<archfit::Context> &&
              !std::is_copy_assignable_v<archfit::Context>);
static_assert(!std::is_copy_constructible_v<archfit::Scan> &&
              !std::is_copy_assignable_v<archfit::Scan>);
static_assert(std::is_nothrow_move_constructible_v<archfit::Context> &&
              std::is_nothrow_move_assignable_v<archfit::Context>);
static_assert(std::is_nothrow_move_constructible_v<archfit::Scan> &&
              std::is_nothrow_move_assignable_v<archfit::Scan>);
static_assert(std::is_base_of_v<std::exception, archfit::Error>);

TEST(CppWrapper, ScansABufferAndReadsImages) {
  const archfit::Context context;
  ASSERT_NE(context.get(), nullptr);
  const auto& bytes = sample_fatbin();
  const archfit::Scan scan = context.scan_buffer(bytes.data(), bytes.size(), "wrapped.fatbin");
  EXPECT_EQ(scan.format(), ARCHFIT_FORMAT_FATBIN);
  ASSERT_EQ(scan.image_count(), 3u);
  EXPECT_TRUE(scan.error().empty());
  EXPECT_EQ(scan.error_count(), 0u);
  EXPECT_EQ(scan.image(0).sm, 90u);
  EXPECT_EQ(scan.image(1).kind, ARCHFIT_IMAGE_PTX);
  const auto document = nlohmann::json::parse(scan.json());
  EXPECT_EQ(document.at("schema"), "archfit.scan/1");
  EXPECT_EQ(document.at("files").at(0).at("path"), "wrapped.fatbin");
}

TEST(CppWrapper, FailureThrowsErrorWithStatusAndMessage) {
  const archfit::Context context;
  const std::string path = "/nonexistent/archfit-wrapper/lib.so";
  try {
    (void)context.scan_file(path);
    FAIL() << "scan_file of a missing file did not throw";
  } catch (const archfit::Error& error) {
    EXPECT_EQ(error.status(), ARCHFIT_ERROR_IO);
    EXPECT_THAT(error.what(), HasSubstr(path));
    EXPECT_THAT(error.what(), HasSubstr("archfit_scan_file"));
  }
  const auto& bytes = sample_fatbin();
  try {
    (void)context.scan_buffer(bytes.data(), bytes.size(), "x", 0x10);
    FAIL() << "an unknown flag did not throw";
  } catch (const archfit::Error& error) {
    EXPECT_EQ(error.status(), ARCHFIT_ERROR_UNSUPPORTED);
    EXPECT_THAT(error.what(), HasSubstr("flags"));
  }
  const archfit::Scan scan = context.scan_buffer(bytes.data(), bytes.size());
  try {
    (void)scan.image(3);
    FAIL() << "an out-of-range image did not throw";
  } catch (const archfit::Error& error) {
    EXPECT_EQ(error.status(), ARCHFIT_ERROR_INVALID_ARGUMENT);
    EXPECT_THAT(error.what(), HasSubstr("out of range"));
  }
  const archfit_context_options too_small{2, 0, nullptr};
  EXPECT_THROW(archfit::Context{&too_small}, archfit::Error);
}

TEST(CppWrapper, OwnersMoveAndOutliveTheirSource) {
  const auto& bytes = sample_fatbin();
  archfit::Context first;
  archfit_context* const handle = first.get();
  archfit::Context second = std::move(first);
  EXPECT_EQ(second.get(), handle);
  // A moved-from owner is empty.
  // NOLINTNEXTLINE(bugprone-use-after-move,clang-analyzer-cplusplus.Move)
  EXPECT_EQ(first.get(), nullptr);

  std::vector<archfit::Scan> scans;
  {
    const archfit::Context scoped;
    for (int i = 0; i < 3; ++i) scans.push_back(scoped.scan_buffer(bytes.data(), bytes.size()));
  }  // a scan holds no reference to the context that made it
  for (const auto& scan : scans) EXPECT_EQ(scan.image_count(), 3u);

  archfit::Scan moved = std::move(scans.front());
  // NOLINTNEXTLINE(bugprone-use-after-move,clang-analyzer-cplusplus.Move)
  EXPECT_EQ(scans.front().get(), nullptr);
  EXPECT_EQ(moved.image_count(), 3u);
  moved = std::move(scans.back());  // the old handle is destroyed; the new one is intact
  // NOLINTNEXTLINE(bugprone-use-after-move,clang-analyzer-cplusplus.Move)
  EXPECT_EQ(scans.back().get(), nullptr);
  EXPECT_EQ(moved.image_count(), 3u);
  EXPECT_FALSE(moved.json().empty());
}

}  // namespace
