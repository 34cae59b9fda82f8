/*
 * The entry point every faulty plugin shares (faulty_plugin.c on POSIX,
 * faulty_plugin_windows.c on Windows): it offers ABI 1 and the including
 * file's `probe`, after `fault_in_negotiate()`, which takes the process
 * down for the plugin whose fault is in its negotiation.
 */
#ifndef ARCHFIT_TESTS_FAULTY_PLUGIN_ENTRY_H
#define ARCHFIT_TESTS_FAULTY_PLUGIN_ENTRY_H

#include <stdint.h>
#include <string.h>

#include "archfit/archfit_plugin.h"

static void fault_in_negotiate(void);
static const char* probe(void);

ARCHFIT_PLUGIN_EXPORT int archfit_plugin_negotiate(uint32_t host_min, uint32_t host_max,
                                                   uint32_t* out_abi,
                                                   archfit_plugin_info* out_info) {
  fault_in_negotiate();
  if (host_min > 1 || host_max < 1) return 0;
  memset(out_info, 0, sizeof *out_info);
  out_info->struct_size = sizeof *out_info;
  out_info->name = PLUGIN_NAME;
  out_info->version = "0.0.1";
  out_info->description = "a plugin that takes its process down";
  out_info->probe = probe;
  *out_abi = 1;
  return 1;
}

#endif
