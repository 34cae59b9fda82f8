/* Plugins for the Windows plugin host under Wine
 * (tests/windows/run_windows_smoke.sh), which has no fork: each plugin is
 * loaded in an archfit-plugin-probe process of its own.
 *   CRASH_ON_ATTACH     an access violation in DllMain: the loader catches it,
 *                       and LoadLibrary fails ("No access to memory location")
 *   CRASH_IN_NEGOTIATE  an access violation in its entry point: the process ends
 *   LOOP_IN_PROBE       a probe that never returns
 * tests/plugins/faulty_plugin.c covers the rest on POSIX (it forks). */
#include <stdint.h>
#include <string.h>
#include <windows.h>

#include "archfit/archfit_plugin.h"

BOOL WINAPI DllMain(HINSTANCE instance, DWORD reason, LPVOID reserved) {
  (void)instance;
  (void)reserved;
#ifdef CRASH_ON_ATTACH
  if (reason == DLL_PROCESS_ATTACH) *(volatile int*)0 = 1;
#else
  (void)reason;
#endif
  return TRUE;
}

static const char* probe(void) {
#ifdef LOOP_IN_PROBE
  for (;;) Sleep(1000);
#endif
  return "{}";
}

ARCHFIT_PLUGIN_EXPORT int archfit_plugin_negotiate(uint32_t host_min, uint32_t host_max,
                                                   uint32_t* out_abi,
                                                   archfit_plugin_info* out_info) {
#ifdef CRASH_IN_NEGOTIATE
  *(volatile int*)0 = 1;
#endif
  if (host_min > 1 || host_max < 1) return 0;
  memset(out_info, 0, sizeof *out_info);
  out_info->struct_size = sizeof *out_info;
  out_info->name = PLUGIN_NAME;
  out_info->version = "1.0.0";
  out_info->description = "a faulty Windows test plugin";
  out_info->probe = probe;
  *out_abi = 1;
  return 1;
}
