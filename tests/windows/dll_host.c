/* A Windows host of archfit.dll that loads it as ComfyUI's Python does
 * (ctypes on Python 3.8+: LoadLibraryExW with the DLL's own folder and the
 * default folders, never PATH), resolves the C ABI by name and runs one
 * check, with paths passed as UTF-8 exactly as the binding encodes them.
 * No Windows Python is reachable here, so this stands in for ctypes under
 * Wine (tests/windows/run_windows_smoke.sh).
 *
 *   dll_host.exe ARCHFIT_DLL SITE_PACKAGES GPU
 * Prints the library's version, then the check's text; exits with the
 * check's verdict (0 fits, 1 fails, 2 unknown), or 10 + a step number when
 * a step of loading or calling fails (saying which on stderr). */
#include <stdio.h>
#include <stdlib.h>
#include <windows.h>

#include "archfit/archfit.h"

typedef archfit_status (*context_create_fn)(const archfit_context_options*, archfit_context**);
typedef void (*context_destroy_fn)(archfit_context*);
typedef archfit_status (*check_run_fn)(archfit_context*, const archfit_check_options*,
                                       archfit_report**);
typedef archfit_overall_verdict (*report_verdict_fn)(const archfit_report*);
typedef archfit_status (*report_text_fn)(const archfit_report*, uint32_t, const char**);
typedef void (*report_destroy_fn)(archfit_report*);
typedef const char* (*version_string_fn)(void);
typedef const char* (*last_error_fn)(void);

/* A wide argument as the UTF-8 the binding passes. */
static char* utf8(const wchar_t* wide) {
  const int size = WideCharToMultiByte(CP_UTF8, 0, wide, -1, NULL, 0, NULL, NULL);
  char* text = (char*)malloc((size_t)size);
  WideCharToMultiByte(CP_UTF8, 0, wide, -1, text, size, NULL, NULL);
  return text;
}

static FARPROC need(HMODULE dll, const char* name) {
  FARPROC function = GetProcAddress(dll, name);
  if (!function) {
    fprintf(stderr, "dll_host: archfit.dll has no %s\n", name);
    exit(12);
  }
  return function;
}

int wmain(int argc, wchar_t** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: dll_host.exe ARCHFIT_DLL SITE_PACKAGES GPU\n");
    return 10;
  }
  HMODULE dll = LoadLibraryExW(argv[1], NULL,
                               LOAD_LIBRARY_SEARCH_DEFAULT_DIRS | LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR);
  if (!dll) {
    fprintf(stderr, "dll_host: LoadLibraryExW failed, error %lu\n", GetLastError());
    return 11;
  }
  version_string_fn version_string = (version_string_fn)need(dll, "archfit_version_string");
  last_error_fn last_error = (last_error_fn)need(dll, "archfit_last_error");
  context_create_fn context_create = (context_create_fn)need(dll, "archfit_context_create");
  context_destroy_fn context_destroy = (context_destroy_fn)need(dll, "archfit_context_destroy");
  check_run_fn check_run = (check_run_fn)need(dll, "archfit_check_run");
  report_verdict_fn report_verdict = (report_verdict_fn)need(dll, "archfit_report_verdict");
  report_text_fn report_text = (report_text_fn)need(dll, "archfit_report_text");
  report_destroy_fn report_destroy = (report_destroy_fn)need(dll, "archfit_report_destroy");
  printf("archfit.dll %s\n", version_string());

  archfit_context* context = NULL;
  if (context_create(NULL, &context) != ARCHFIT_OK) {
    fprintf(stderr, "dll_host: archfit_context_create: %s\n", last_error());
    return 13;
  }
  const char* site_packages = utf8(argv[2]);
  archfit_check_options options = {0};
  options.struct_size = sizeof options;
  options.gpu = utf8(argv[3]);
  options.site_packages = &site_packages;
  options.site_packages_count = 1;
  archfit_report* report = NULL;
  if (check_run(context, &options, &report) != ARCHFIT_OK) {
    fprintf(stderr, "dll_host: archfit_check_run: %s\n", last_error());
    return 14;
  }
  const char* text = NULL;
  if (report_text(report, ARCHFIT_TEXT_DEFAULT, &text) != ARCHFIT_OK) {
    fprintf(stderr, "dll_host: archfit_report_text: %s\n", last_error());
    return 15;
  }
  fputs(text, stdout);
  const int verdict = (int)report_verdict(report);
  report_destroy(report);
  context_destroy(context);
  return verdict;
}
