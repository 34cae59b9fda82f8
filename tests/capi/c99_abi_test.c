/*
 * The whole C ABI, used from C99 exactly as a C host would use it. Compiled
 * with -std=c99 -pedantic -Wall -Wextra -Werror, so archfit.h itself must be
 * clean C99. Exits non-zero, after printing every failed check, if anything
 * is wrong.
 *
 * Usage: archfit_c99_abi_test <scratch directory>
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "archfit/archfit.h"

static int failures = 0;

#define CHECK(condition)                                                            \
  do {                                                                              \
    if (!(condition)) {                                                             \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #condition); \
      ++failures;                                                                   \
    }                                                                               \
  } while (0)

#define CHECK_STATUS(call, expected)                                                          \
  do {                                                                                        \
    archfit_status status_ = (call);                                                          \
    if (status_ != (expected)) {                                                              \
      fprintf(stderr, "%s:%d: %s returned %d (%s), expected %d; last error: %s\n", __FILE__,  \
              __LINE__, #call, (int)status_, archfit_status_string(status_), (int)(expected), \
              archfit_last_error());                                                          \
      ++failures;                                                                             \
    }                                                                                         \
  } while (0)

static int contains(const char* text, const char* part) {
  return text != NULL && strstr(text, part) != NULL;
}

/* ---- a hand-made fatbin container (docs/cuda-binaries.md) --------------------- */

static void put16(unsigned char* at, uint16_t value) {
  at[0] = (unsigned char)(value & 0xff);
  at[1] = (unsigned char)(value >> 8);
}
static void put32(unsigned char* at, uint32_t value) {
  put16(at, (uint16_t)(value & 0xffff));
  put16(at + 2, (uint16_t)(value >> 16));
}
static void put64(unsigned char* at, uint64_t value) {
  put32(at, (uint32_t)(value & 0xffffffffu));
  put32(at + 4, (uint32_t)(value >> 32));
}

enum { kContainerHeader = 16, kEntryHeader = 64, kFatbinSize = 248 };

/* One 64-byte entry header at `at`, then `payload` filler bytes. Returns the
 * offset of the next entry. */
static size_t put_entry(unsigned char* buffer, size_t at, uint16_t kind, uint16_t version_major,
                        uint16_t version_minor, uint32_t arch, uint64_t flags, uint64_t payload,
                        uint32_t compressed_size, uint64_t uncompressed_size) {
  unsigned char* entry = buffer + at;
  memset(entry, 0, kEntryHeader);
  put16(entry + 0x00, kind);
  put16(entry + 0x02, 0x0101);
  put32(entry + 0x04, kEntryHeader);
  put64(entry + 0x08, payload);
  put32(entry + 0x10, compressed_size);
  put16(entry + 0x18, version_minor);
  put16(entry + 0x1a, version_major);
  put32(entry + 0x1c, arch);
  put64(entry + 0x28, flags);
  put64(entry + 0x38, uncompressed_size);
  memset(entry + kEntryHeader, 0xab, (size_t)payload); /* never read by a default scan */
  return at + kEntryHeader + (size_t)payload;
}

/* Three entries: SASS sm_90a (ELF ABI V2) at 0x10, ZSTD-compressed PTX 7.8 for
 * compute_80 at 0x60, LTO-IR lto_100f at 0xb0. */
static void make_fatbin(unsigned char buffer[kFatbinSize]) {
  size_t at = kContainerHeader;
  memset(buffer, 0, kFatbinSize);
  put32(buffer + 0, 0xBA55ED50u);
  put16(buffer + 4, 1);
  put16(buffer + 6, kContainerHeader);
  put64(buffer + 8, kFatbinSize - kContainerHeader);
  at = put_entry(buffer, at, 2, 1, 8, 90, 0x100011u, 16, 0, 0);
  at = put_entry(buffer, at, 1, 7, 8, 80, 0x8011u, 16, 13, 100);
  at = put_entry(buffer, at, 8, 1, 65, 100, 0x210011u, 8, 0, 0);
  if (at != kFatbinSize) {
    fprintf(stderr, "make_fatbin: laid out %lu bytes, expected %d\n", (unsigned long)at,
            kFatbinSize);
    exit(2);
  }
}

/* ---- the checks ------------------------------------------------------------- */

static void check_version(void) {
  uint32_t version = archfit_version();
  CHECK(version == ARCHFIT_VERSION_NUMBER);
  CHECK(version / 10000 == ARCHFIT_VERSION_MAJOR);
  CHECK(version / 100 % 100 == ARCHFIT_VERSION_MINOR);
  CHECK(version % 100 == ARCHFIT_VERSION_PATCH);
  CHECK(strcmp(archfit_version_string(), ARCHFIT_VERSION_STRING) == 0);
  CHECK(ARCHFIT_VERSION_AT_LEAST(0, 0, 0));
  CHECK(ARCHFIT_VERSION_AT_LEAST(ARCHFIT_VERSION_MAJOR, ARCHFIT_VERSION_MINOR,
                                 ARCHFIT_VERSION_PATCH));
  CHECK(!ARCHFIT_VERSION_AT_LEAST(ARCHFIT_VERSION_MAJOR + 1, 0, 0));
}

static void check_status_strings(void) {
  archfit_status codes[] = {ARCHFIT_OK,
                            ARCHFIT_ERROR_INVALID_ARGUMENT,
                            ARCHFIT_ERROR_IO,
                            ARCHFIT_ERROR_OUT_OF_MEMORY,
                            ARCHFIT_ERROR_UNSUPPORTED,
                            ARCHFIT_ERROR_INTERNAL};
  size_t i;
  CHECK(ARCHFIT_OK == 0);
  for (i = 0; i < sizeof codes / sizeof codes[0]; ++i) {
    const char* text = archfit_status_string(codes[i]);
    CHECK(text != NULL && text[0] != '\0');
  }
  CHECK(archfit_status_string((archfit_status)999) != NULL);
  CHECK(archfit_last_error() != NULL);
}

static void check_context(void) {
  archfit_context* context = NULL;
  archfit_context_options options;
  archfit_context* untouched = (archfit_context*)&options; /* any non-NULL sentinel */

  CHECK_STATUS(archfit_context_create(NULL, &context), ARCHFIT_OK);
  CHECK(context != NULL);
  archfit_context_destroy(context);

  memset(&options, 0, sizeof options);
  options.struct_size = sizeof options;
  options.threads = 2;
  context = NULL;
  CHECK_STATUS(archfit_context_create(&options, &context), ARCHFIT_OK);
  CHECK(context != NULL);
  archfit_context_destroy(context);

  CHECK_STATUS(archfit_context_create(NULL, NULL), ARCHFIT_ERROR_INVALID_ARGUMENT);
  CHECK(contains(archfit_last_error(), "archfit_context_create"));
  CHECK(contains(archfit_last_error(), "out_context"));

  options.struct_size = 2;
  context = untouched;
  CHECK_STATUS(archfit_context_create(&options, &context), ARCHFIT_ERROR_INVALID_ARGUMENT);
  CHECK(context == untouched);
  CHECK(contains(archfit_last_error(), "struct_size"));

  archfit_context_destroy(NULL);
}

static void check_fatbin_scan(archfit_context* context, const unsigned char* fatbin) {
  archfit_scan* scan = NULL;
  archfit_scan_options options;
  archfit_image_info info;
  const char* json = NULL;

  memset(&options, 0, sizeof options);
  options.struct_size = sizeof options;
  options.flags = ARCHFIT_SCAN_DEFAULT;
  CHECK_STATUS(archfit_scan_buffer(context, fatbin, kFatbinSize, "hand.fatbin", &options, &scan),
               ARCHFIT_OK);
  if (scan == NULL) {
    ++failures;
    return;
  }
  CHECK(archfit_scan_format(scan) == ARCHFIT_FORMAT_FATBIN);
  CHECK(archfit_scan_image_count(scan) == 3);
  CHECK(archfit_scan_error(scan) == NULL);
  CHECK(archfit_scan_error_count(scan) == 0);

  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  CHECK_STATUS(archfit_scan_image(scan, 0, &info), ARCHFIT_OK);
  CHECK(info.struct_size == sizeof info);
  CHECK(info.kind == ARCHFIT_IMAGE_SASS);
  CHECK(info.sm == 90);
  CHECK(info.variant == ARCHFIT_VARIANT_ARCH_SPECIFIC);
  CHECK(info.elf_abi == 2);
  CHECK(info.compression == ARCHFIT_COMPRESSION_NONE);
  CHECK(info.relocatable == 0);
  CHECK(info.size == 16);
  CHECK(info.compressed_size == 0 && info.uncompressed_size == 0);
  CHECK(info.offset == 0x10);
  CHECK(info.section != NULL && strcmp(info.section, "(fatbin)") == 0);

  CHECK_STATUS(archfit_scan_image(scan, 1, &info), ARCHFIT_OK);
  CHECK(info.kind == ARCHFIT_IMAGE_PTX);
  CHECK(info.sm == 80);
  CHECK(info.variant == ARCHFIT_VARIANT_PLAIN);
  CHECK(info.ptx_isa_major == 7 && info.ptx_isa_minor == 8);
  CHECK(info.compression == ARCHFIT_COMPRESSION_ZSTD);
  CHECK(info.compressed_size == 13);
  CHECK(info.uncompressed_size == 100);
  CHECK(info.offset == 0x60);

  CHECK_STATUS(archfit_scan_image(scan, 2, &info), ARCHFIT_OK);
  CHECK(info.kind == ARCHFIT_IMAGE_LTO);
  CHECK(info.sm == 100);
  CHECK(info.variant == ARCHFIT_VARIANT_FAMILY_SPECIFIC);
  CHECK(info.size == 8);
  CHECK(info.offset == 0xb0);

  /* An out-of-range index fails and leaves `info` alone. */
  info.sm = 12345;
  CHECK_STATUS(archfit_scan_image(scan, 3, &info), ARCHFIT_ERROR_INVALID_ARGUMENT);
  CHECK(info.sm == 12345);
  CHECK(contains(archfit_last_error(), "archfit_scan_image"));

  info.struct_size = 4;
  CHECK_STATUS(archfit_scan_image(scan, 0, &info), ARCHFIT_ERROR_INVALID_ARGUMENT);
  CHECK(contains(archfit_last_error(), "struct_size"));

  CHECK_STATUS(archfit_scan_json(scan, &json), ARCHFIT_OK);
  CHECK(contains(json, "\"schema\":\"archfit.scan/1\""));
  CHECK(contains(json, "\"path\":\"hand.fatbin\""));
  CHECK(contains(json, "\"kind\":\"sass\""));
  CHECK(contains(json, "\"kind\":\"ptx\""));
  CHECK(contains(json, "\"kind\":\"lto\""));
  CHECK(contains(json, "\"ptx_isa\":\"7.8\""));
  CHECK(contains(json, "\"compression\":\"zstd\""));
  {
    const char* again = NULL;
    CHECK_STATUS(archfit_scan_json(scan, &again), ARCHFIT_OK);
    CHECK(again == json); /* built once, borrowed from the scan */
  }
  CHECK_STATUS(archfit_scan_json(scan, NULL), ARCHFIT_ERROR_INVALID_ARGUMENT);
  CHECK(contains(archfit_last_error(), "out_json"));

  archfit_scan_destroy(scan);
}

static void check_malformed(archfit_context* context, const unsigned char* fatbin) {
  unsigned char broken[kFatbinSize];
  archfit_scan* scan = NULL;
  memcpy(broken, fatbin, sizeof broken);
  put16(broken + 0x60 + 2, 0x0202); /* the PTX entry's marker */

  /* Malformed input is a result, not a failing call. */
  CHECK_STATUS(archfit_scan_buffer(context, broken, sizeof broken, NULL, NULL, &scan), ARCHFIT_OK);
  if (scan == NULL) {
    ++failures;
    return;
  }
  CHECK(archfit_scan_error_count(scan) >= 1);
  CHECK(contains(archfit_scan_error(scan), "offset 0x60"));
  archfit_scan_destroy(scan);

  /* A container cut short names the size field's offset. */
  scan = NULL;
  CHECK_STATUS(archfit_scan_buffer(context, fatbin, 40, "short", NULL, &scan), ARCHFIT_OK);
  if (scan != NULL) {
    CHECK(archfit_scan_image_count(scan) == 0);
    CHECK(contains(archfit_scan_error(scan), "offset 0x"));
    archfit_scan_destroy(scan);
  }

  /* No bytes at all: no device code, no error. */
  scan = NULL;
  CHECK_STATUS(archfit_scan_buffer(context, NULL, 0, NULL, NULL, &scan), ARCHFIT_OK);
  if (scan != NULL) {
    CHECK(archfit_scan_format(scan) == ARCHFIT_FORMAT_OTHER);
    CHECK(archfit_scan_image_count(scan) == 0);
    CHECK(archfit_scan_error(scan) == NULL);
    archfit_scan_destroy(scan);
  }
}

static void check_errors(archfit_context* context, const unsigned char* fatbin) {
  archfit_scan_options options;
  archfit_scan* scan = (archfit_scan*)&options; /* a sentinel: must survive every failure */
  archfit_scan* const sentinel = scan;

  CHECK_STATUS(archfit_scan_buffer(NULL, fatbin, kFatbinSize, NULL, NULL, &scan),
               ARCHFIT_ERROR_INVALID_ARGUMENT);
  CHECK(contains(archfit_last_error(), "archfit_scan_buffer"));
  CHECK(contains(archfit_last_error(), "context"));
  CHECK(scan == sentinel);

  CHECK_STATUS(archfit_scan_buffer(context, NULL, 5, NULL, NULL, &scan),
               ARCHFIT_ERROR_INVALID_ARGUMENT);
  CHECK(contains(archfit_last_error(), "data"));
  CHECK(scan == sentinel);

  CHECK_STATUS(archfit_scan_file(context, NULL, NULL, &scan), ARCHFIT_ERROR_INVALID_ARGUMENT);
  CHECK(contains(archfit_last_error(), "archfit_scan_file"));
  CHECK(contains(archfit_last_error(), "path"));
  CHECK(scan == sentinel);

  /* The consistent names (docs/c-abi.md, "Names") are the same calls. */
  CHECK_STATUS(archfit_scan_file_run(context, NULL, NULL, &scan), ARCHFIT_ERROR_INVALID_ARGUMENT);
  CHECK(contains(archfit_last_error(), "archfit_scan_file_run"));
  CHECK(scan == sentinel);
  CHECK_STATUS(archfit_scan_buffer_run(context, NULL, 5, NULL, NULL, &scan),
               ARCHFIT_ERROR_INVALID_ARGUMENT);
  CHECK(contains(archfit_last_error(), "archfit_scan_buffer_run"));
  CHECK(scan == sentinel);

  memset(&options, 0, sizeof options);
  options.struct_size = sizeof options;
  options.flags = 0x80000000u;
  CHECK_STATUS(archfit_scan_buffer(context, fatbin, kFatbinSize, NULL, &options, &scan),
               ARCHFIT_ERROR_UNSUPPORTED);
  CHECK(contains(archfit_last_error(), "flags"));
  CHECK(scan == sentinel);

  options.flags = 0;
  options.struct_size = 0;
  CHECK_STATUS(archfit_scan_buffer(context, fatbin, kFatbinSize, NULL, &options, &scan),
               ARCHFIT_ERROR_INVALID_ARGUMENT);
  CHECK(scan == sentinel);

  CHECK_STATUS(archfit_scan_file(context, "/nonexistent/archfit-c99/none.so", NULL, &scan),
               ARCHFIT_ERROR_IO);
  CHECK(contains(archfit_last_error(), "/nonexistent/archfit-c99/none.so"));
  CHECK(scan == sentinel);

  /* Accessors on NULL are harmless; destroy(NULL) is a no-op. */
  CHECK(archfit_scan_image_count(NULL) == 0);
  CHECK(archfit_scan_error(NULL) == NULL);
  CHECK(archfit_scan_error_count(NULL) == 0);
  CHECK(archfit_scan_format(NULL) == ARCHFIT_FORMAT_OTHER);
  archfit_scan_destroy(NULL);
}

static void check_scan_file(archfit_context* context, const unsigned char* fatbin,
                            const char* directory) {
  char path[4096];
  FILE* file;
  archfit_scan* scan = NULL;
  archfit_scan_options options;
  archfit_image_info info;

  if (snprintf(path, sizeof path, "%s/c99_abi_test.fatbin", directory) >= (int)sizeof path) {
    fprintf(stderr, "scratch path too long\n");
    ++failures;
    return;
  }
  file = fopen(path, "wb");
  if (file == NULL || fwrite(fatbin, 1, kFatbinSize, file) != kFatbinSize || fclose(file) != 0) {
    fprintf(stderr, "cannot write %s\n", path);
    ++failures;
    return;
  }
  memset(&options, 0, sizeof options);
  options.struct_size = sizeof options;
  options.flags = ARCHFIT_SCAN_DEEP;
  CHECK_STATUS(archfit_scan_file(context, path, &options, &scan), ARCHFIT_OK);
  if (scan != NULL) {
    CHECK(archfit_scan_format(scan) == ARCHFIT_FORMAT_FATBIN);
    CHECK(archfit_scan_image_count(scan) == 3);
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    CHECK_STATUS(archfit_scan_image(scan, 0, &info), ARCHFIT_OK);
    CHECK(info.sm == 90 && info.kind == ARCHFIT_IMAGE_SASS);
    archfit_scan_destroy(scan);
  }
  remove(path);
}

/* A ComfyUI log line diagnosed from C: the text is bytes with a size. */
static void check_diagnose(archfit_context* context) {
  static const char kLog[] =
      "got prompt\n"
      "RuntimeError: CUDA error: no kernel image is available for execution on the device\n";
  archfit_diagnose_options options;
  archfit_diagnosis_info info;
  archfit_diagnosis* diagnosis = NULL;
  const char* json = NULL;
  memset(&options, 0, sizeof options);
  options.struct_size = sizeof options;
  options.text = kLog;
  options.text_size = sizeof kLog - 1;
  CHECK_STATUS(archfit_diagnose_run(context, &options, &diagnosis), ARCHFIT_OK);
  if (diagnosis == NULL) return;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  CHECK_STATUS(archfit_diagnosis_get_info(diagnosis, &info), ARCHFIT_OK);
  CHECK(info.recognised == 1);
  CHECK(strcmp(info.category, "no-kernel-image") == 0);
  CHECK(info.environment == NULL);
  CHECK(info.fix_count > 0 && archfit_diagnosis_fix(diagnosis, 0) != NULL);
  CHECK_STATUS(archfit_diagnosis_json(diagnosis, &json), ARCHFIT_OK);
  CHECK(contains(json, "\"schema\":\"archfit.diagnosis/1\""));
  archfit_diagnosis_destroy(diagnosis);
}

/* The diagnosis as `archfit explain` prints it, from C: a borrowed text, the
 * flags an enum of the header; a flag the library does not know is refused. */
static void check_texts(archfit_context* context) {
  static const char kLog[] =
      "RuntimeError: CUDA error: no kernel image is available for execution on the device\n";
  archfit_diagnose_options options;
  archfit_diagnosis* diagnosis = NULL;
  const char* text = NULL;
  const char* again = NULL;
  memset(&options, 0, sizeof options);
  options.struct_size = sizeof options;
  options.text = kLog;
  options.text_size = sizeof kLog - 1;
  CHECK_STATUS(archfit_diagnose_run(context, &options, &diagnosis), ARCHFIT_OK);
  if (diagnosis == NULL) return;
  CHECK_STATUS(archfit_diagnosis_text(diagnosis, ARCHFIT_TEXT_DEFAULT, &text), ARCHFIT_OK);
  CHECK(text != NULL && contains(text, "no-kernel-image (high confidence)\n"));
  CHECK(text != NULL && contains(text, "fix        1. "));
  CHECK_STATUS(archfit_diagnosis_text(diagnosis, ARCHFIT_TEXT_COLOR, &again), ARCHFIT_OK);
  CHECK(again == text);
  again = NULL;
  CHECK_STATUS(archfit_diagnosis_text(diagnosis, 0x80u, &again), ARCHFIT_ERROR_UNSUPPORTED);
  CHECK(again == NULL);
  CHECK_STATUS(archfit_report_text(NULL, ARCHFIT_TEXT_DETAILS, &again),
               ARCHFIT_ERROR_INVALID_ARGUMENT);
  archfit_diagnosis_destroy(diagnosis);
}

int main(int argc, char** argv) {
  unsigned char fatbin[kFatbinSize];
  archfit_context* context = NULL;

  if (argc != 2) {
    fprintf(stderr, "usage: %s <scratch directory>\n", argv[0]);
    return 2;
  }
  make_fatbin(fatbin);

  check_version();
  check_status_strings();
  check_context();

  CHECK_STATUS(archfit_context_create(NULL, &context), ARCHFIT_OK);
  if (context == NULL) {
    fprintf(stderr, "no context: cannot go on\n");
    return 1;
  }
  check_fatbin_scan(context, fatbin);
  check_malformed(context, fatbin);
  check_errors(context, fatbin);
  check_scan_file(context, fatbin, argv[1]);
  check_diagnose(context);
  check_texts(context);
  archfit_context_destroy(context);

  if (failures != 0) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("c99 ABI test: all checks passed (library %s)\n", archfit_version_string());
  return 0;
}
