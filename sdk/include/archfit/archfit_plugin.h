/*
 * archfit plugins — what a shared-library plugin exports, and what it
 * gives the host that loads it (docs/plugins.md).
 *
 * A plugin is a shared library plus a YAML manifest beside it, read before
 * the library is loaded:
 *
 *   # imagegen_ops.archfit-plugin.yaml
 *   schema: archfit.plugin/1
 *   name: imagegen_ops                      # must match the name the plugin reports
 *   library: libarchfit_imagegen_ops.so     # relative to the manifest
 *   abi: 1                                  # the plugin ABI versions it speaks: 1, or [1, 2]
 *
 * The library exports one C function, ARCHFIT_PLUGIN_NEGOTIATE. The host
 * offers the range of plugin ABI versions it speaks; the plugin picks one in
 * that range and fills `out_info` for it, or declines. Everything the info
 * points to is the plugin's (static storage is simplest) and must stay valid
 * while the library is loaded; the host copies what it keeps, so nothing a
 * plugin made outlives the plugin. The function must not throw.
 *
 * The host loads the library, negotiates and calls the probe in a child of
 * archfit-plugin-probe, a helper it starts for the purpose, within a time
 * limit (20 s by default, ARCHFIT_PLUGIN_TIMEOUT in seconds), and never
 * loads the library itself: a plugin that crashes, exits, hangs, prints more
 * than 1 MiB or leaves a process running is rejected and the host carries on.
 *
 * C99; the plugin needs archfit.h for archfit_module_desc, nothing else.
 */
#ifndef ARCHFIT_ARCHFIT_PLUGIN_H
#define ARCHFIT_ARCHFIT_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#include "archfit.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The plugin ABI versions this header describes; a host built with it offers
 * [ARCHFIT_PLUGIN_ABI_MIN, ARCHFIT_PLUGIN_ABI_MAX]. */
#define ARCHFIT_PLUGIN_ABI_MIN 1
#define ARCHFIT_PLUGIN_ABI_MAX 1

/* The name of the one exported entry point. */
#define ARCHFIT_PLUGIN_NEGOTIATE "archfit_plugin_negotiate"

typedef struct archfit_plugin_info {
  uint32_t struct_size; /* set by the plugin: sizeof(archfit_plugin_info) */
  const char* name;     /* as in the manifest: "imagegen_ops" */
  const char* version;  /* the plugin's own version: "1.0.0" */
  const char* description;
  /* The kernel modules the plugin provides (archfit_module_create takes each). */
  const archfit_module_desc* modules;
  size_t module_count;
  /* Optional: facts only this plugin can learn about the environment (a probe
   * plugin), as a JSON object, UTF-8, NUL-terminated; NULL when it has none.
   * Any other text rejects the plugin. Called at most once per load, from
   * the thread that loaded the plugin. */
  const char* (*probe)(void);
} archfit_plugin_info;

/* Returns 1 and sets *out_abi (host_min <= *out_abi <= host_max) and
 * *out_info when the plugin speaks a version in the host's range; returns 0
 * to decline (it then leaves both alone). */
typedef int (*archfit_plugin_negotiate_fn)(uint32_t host_min, uint32_t host_max, uint32_t* out_abi,
                                           archfit_plugin_info* out_info);

/* What a plugin writes to export its entry point:
 *   ARCHFIT_PLUGIN_EXPORT int archfit_plugin_negotiate(uint32_t, uint32_t, uint32_t*,
 *                                                      archfit_plugin_info*);        */
#if defined(_WIN32)
#define ARCHFIT_PLUGIN_EXPORT __declspec(dllexport)
#elif defined(__GNUC__)
#define ARCHFIT_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define ARCHFIT_PLUGIN_EXPORT
#endif

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* ARCHFIT_ARCHFIT_PLUGIN_H */
