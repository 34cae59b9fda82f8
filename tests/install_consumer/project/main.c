/* consumer_c: uses the installed archfit.h and libarchfit.so from C99.
 * Usage: consumer_c <a file to scan> */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <archfit/archfit.h>

static void put(unsigned char* at, uint64_t value, int width) {
  int i;
  for (i = 0; i < width; ++i) at[i] = (unsigned char)(value >> (8 * i));
}

static int fail(const char* what) {
  fprintf(stderr, "consumer_c: %s: %s\n", what, archfit_last_error());
  return 1;
}

int main(int argc, char** argv) {
  /* One fatbin container holding one SASS sm_86 entry with an 8-byte payload. */
  unsigned char fatbin[16 + 64 + 8];
  archfit_context* context = NULL;
  archfit_scan* scan = NULL;
  archfit_image_info info;
  const char* json = NULL;
  int status = 0;

  if (argc != 2) return fail("usage: consumer_c <file>");
  if (archfit_version() / 10000 != ARCHFIT_VERSION_MAJOR)
    return fail("library major version differs from the header");
  if (strcmp(archfit_version_string(), ARCHFIT_VERSION_STRING) != 0)
    return fail("version strings differ");

  memset(fatbin, 0, sizeof fatbin);
  put(fatbin + 0, 0xBA55ED50u, 4);
  put(fatbin + 4, 1, 2);
  put(fatbin + 6, 16, 2);
  put(fatbin + 8, 64 + 8, 8);
  put(fatbin + 16 + 0x00, 2, 2); /* ELF cubin */
  put(fatbin + 16 + 0x02, 0x0101, 2);
  put(fatbin + 16 + 0x04, 64, 4); /* header size */
  put(fatbin + 16 + 0x08, 8, 8);  /* payload size */
  put(fatbin + 16 + 0x18, 8, 2);  /* version 1.8: ELF ABI V2 */
  put(fatbin + 16 + 0x1a, 1, 2);
  put(fatbin + 16 + 0x1c, 86, 4); /* sm_86 */
  put(fatbin + 16 + 0x28, 0x11, 8);

  if (archfit_context_create(NULL, &context) != ARCHFIT_OK) return fail("archfit_context_create");
  if (archfit_scan_buffer(context, fatbin, sizeof fatbin, "consumer.fatbin", NULL, &scan) !=
      ARCHFIT_OK) {
    status = fail("archfit_scan_buffer");
  } else {
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    if (archfit_scan_image_count(scan) != 1)
      status = fail("expected one image");
    else if (archfit_scan_image(scan, 0, &info) != ARCHFIT_OK)
      status = fail("archfit_scan_image");
    else if (info.kind != ARCHFIT_IMAGE_SASS || info.sm != 86)
      status = fail("wrong image");
    else if (archfit_scan_json(scan, &json) != ARCHFIT_OK || strstr(json, "archfit.scan/1") == NULL)
      status = fail("archfit_scan_json");
    archfit_scan_destroy(scan);
  }

  scan = NULL;
  if (status == 0 && archfit_scan_file(context, argv[1], NULL, &scan) != ARCHFIT_OK)
    status = fail(argv[1]);
  if (scan != NULL) {
    printf("consumer_c: %s: format %d, %lu images\n", argv[1], (int)archfit_scan_format(scan),
           (unsigned long)archfit_scan_image_count(scan));
    archfit_scan_destroy(scan);
  }
  archfit_context_destroy(context);
  if (status == 0) printf("consumer_c: ok (libarchfit %s)\n", archfit_version_string());
  return status;
}
