/*
 * faulty_plugin.c for Windows, which has no fork: there each plugin is
 * loaded in an archfit-plugin-probe process of its own, in a job object
 * (plugin/probe_helper.cpp). Each is a build of this source with
 * PLUGIN_FAULT set (tests/plugins/CMakeLists.txt), run under Wine by the
 * CLI tier (tests/cli/cli_plugins_test.cpp):
 *   crash_on_attach       an access violation in DllMain: the loader catches
 *                         it, and LoadLibrary fails
 *   crash_in_negotiate    an access violation in its entry point: the process ends
 *   exit_in_probe         ExitProcess(3) in its probe
 *   loop_in_probe         a probe that never returns
 *   probe_not_json        a probe that returns "{not json"
 *   daemon_in_probe       a probe that starts a process that outlives it
 *                         (rundll32 running this DLL's `linger`) and returns
 *   flood_in_probe        a probe that writes 8 MiB to stderr and returns
 * Each writes a line to stdout when loaded: it must not reach the host's stdout.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <windows.h>

#include "faulty_plugin_entry.h"

#define FAULT_CRASH_ON_ATTACH 1
#define FAULT_CRASH_IN_NEGOTIATE 2
#define FAULT_EXIT_IN_PROBE 3
#define FAULT_LOOP_IN_PROBE 4
#define FAULT_PROBE_NOT_JSON 5
#define FAULT_DAEMON_IN_PROBE 6
#define FAULT_FLOOD_IN_PROBE 7

static HINSTANCE this_library;

static void write_to(DWORD which, const char* bytes, DWORD size) {
  DWORD written = 0;
  WriteFile(GetStdHandle(which), bytes, size, &written, NULL);
}

/* An address no process maps, read at run time so that no compiler sees it
 * coming: a real access violation. */
static void crash(void) {
  volatile uintptr_t address = 16;
  *(volatile int*)address = 1;
}

BOOL WINAPI DllMain(HINSTANCE instance, DWORD reason, LPVOID reserved) {
  (void)reserved;
  if (reason != DLL_PROCESS_ATTACH) return TRUE;
  this_library = instance;
  /* Not when rundll32 loads it to linger: that process's stdout is gone. */
  if (GetModuleHandleW(L"rundll32.exe") == NULL) {
    static const char kLine[] = "faulty plugin " PLUGIN_NAME " writing to stdout\n";
    write_to(STD_OUTPUT_HANDLE, kLine, sizeof kLine - 1);
  }
  if (PLUGIN_FAULT == FAULT_CRASH_ON_ATTACH) crash();
  return TRUE;
}

/* What daemon_in_probe starts: `rundll32.exe <this DLL>,linger` waits here. */
ARCHFIT_PLUGIN_EXPORT void CALLBACK linger(HWND window, HINSTANCE instance, LPSTR line, int show) {
  (void)window;
  (void)instance;
  (void)line;
  (void)show;
  for (;;) Sleep(1000);
}

static void start_lingering_process(void) {
  wchar_t library[MAX_PATH];
  wchar_t system[MAX_PATH];
  if (!GetModuleFileNameW(this_library, library, MAX_PATH) ||
      !GetSystemDirectoryW(system, MAX_PATH))
    return;
  wchar_t program[MAX_PATH + 16];
  wchar_t command[2 * MAX_PATH + 32];
  _snwprintf(program, MAX_PATH + 16, L"%ls\\rundll32.exe", system);
  _snwprintf(command, 2 * MAX_PATH + 32, L"rundll32.exe \"%ls\",linger", library);
  STARTUPINFOW startup;
  PROCESS_INFORMATION process;
  memset(&startup, 0, sizeof startup);
  startup.cb = sizeof startup;
  if (CreateProcessW(program, command, NULL, NULL, FALSE, CREATE_NO_WINDOW, NULL, NULL, &startup,
                     &process)) {
    CloseHandle(process.hThread);
    CloseHandle(process.hProcess);
  }
}

static const char* probe(void) {
  if (PLUGIN_FAULT == FAULT_EXIT_IN_PROBE) ExitProcess(3);
  if (PLUGIN_FAULT == FAULT_LOOP_IN_PROBE) {
    for (;;) Sleep(1000);
  }
  if (PLUGIN_FAULT == FAULT_PROBE_NOT_JSON) return "{not json";
  if (PLUGIN_FAULT == FAULT_DAEMON_IN_PROBE) start_lingering_process();
  if (PLUGIN_FAULT == FAULT_FLOOD_IN_PROBE) {
    static char block[65536];
    memset(block, 'x', sizeof block);
    for (int i = 0; i < 128; ++i) write_to(STD_ERROR_HANDLE, block, sizeof block);
  }
  return "{}";
}

static void fault_in_negotiate(void) {
  if (PLUGIN_FAULT == FAULT_CRASH_IN_NEGOTIATE) crash();
}
