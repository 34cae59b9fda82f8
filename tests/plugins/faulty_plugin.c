/*
 * Plugins that take their process down, for the tests of loading plugins in
 * a child process (tests/unit/plugin_host_test.cpp, tests/cli/cli_plugins_test.cpp):
 * each is a build of this source with PLUGIN_FAULT set
 * (tests/plugins/CMakeLists.txt).
 *   segv_on_load          a segmentation fault in its constructor, before any entry point
 *   abort_in_negotiate    abort() in its negotiation entry point
 *   exit_in_probe         _exit(3) in its probe
 *   loop_in_probe         a probe that never returns
 *   probe_not_json        a probe that returns "{not json"
 *   daemon_in_probe       a probe that starts a daemon (fork, setsid, fork again) and returns
 *   flood_in_probe        a probe that writes 8 MiB to stderr and returns
 * Each writes a line to stdout when loaded: it must not reach the host's stdout.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "faulty_plugin_entry.h"

#define FAULT_SEGV_ON_LOAD 1
#define FAULT_ABORT_IN_NEGOTIATE 2
#define FAULT_EXIT_IN_PROBE 3
#define FAULT_LOOP_IN_PROBE 4
#define FAULT_PROBE_NOT_JSON 5
#define FAULT_DAEMON_IN_PROBE 6
#define FAULT_FLOOD_IN_PROBE 7

__attribute__((constructor)) static void on_load(void) {
  static const char kLine[] = "faulty plugin " PLUGIN_NAME " writing to stdout\n";
  (void)!write(STDOUT_FILENO, kLine, sizeof kLine - 1);
  if (PLUGIN_FAULT == FAULT_SEGV_ON_LOAD) {
    /* An address no process maps, read at run time so that no compiler (nor
     * UBSan's null check) sees it coming: a real SIGSEGV. */
    volatile uintptr_t address = 16;
    *(volatile int*)address = 1;
  }
}

static const char* probe(void) {
  if (PLUGIN_FAULT == FAULT_EXIT_IN_PROBE) _exit(3);
  if (PLUGIN_FAULT == FAULT_LOOP_IN_PROBE) {
    for (volatile int spinning = 1; spinning;) {
    }
  }
  if (PLUGIN_FAULT == FAULT_PROBE_NOT_JSON) return "{not json";
  if (PLUGIN_FAULT == FAULT_DAEMON_IN_PROBE) {
    /* As a daemon starts: out of the process group and session, its parent
     * gone, so only a subreaper gets it back. It keeps whatever files its
     * process had open for as long as it runs. */
    const pid_t first = fork();
    if (first == 0) {
      setsid();
      if (fork() == 0) {
        for (;;) pause();
      }
      _exit(0);
    }
    if (first > 0) waitpid(first, NULL, 0);
  }
  if (PLUGIN_FAULT == FAULT_FLOOD_IN_PROBE) {
    static char block[65536];
    memset(block, 'x', sizeof block);
    for (int i = 0; i < 128; ++i)
      if (write(STDERR_FILENO, block, sizeof block) < 0) break;
  }
  return "{}";
}

static void fault_in_negotiate(void) {
  if (PLUGIN_FAULT == FAULT_ABORT_IN_NEGOTIATE) abort();
}
