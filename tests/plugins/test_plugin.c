/*
 * The plugins the plugin host is tested with, one source: each behaviour
 * is a build of it with PLUGIN_KIND set (tests/plugins/CMakeLists.txt).
 *   good       speaks ABI 1, offers one kernel module and a probe
 *   decline    declines every version
 *   far        picks ABI 7, outside what the host offered
 *   misnamed   reports a name other than its manifest's
 *   no_entries offers a module that names no entry points
 * PLUGIN_NAME is its name (the bench builds twenty good ones).
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "archfit/archfit_plugin.h"

#define KIND_GOOD 1
#define KIND_DECLINE 2
#define KIND_FAR 3
#define KIND_MISNAMED 4
#define KIND_NO_ENTRIES 5

static const char kSource[] =
    "extern \"C\" __global__ void scale(float* x, float factor) { x[threadIdx.x] *= factor; }\n";
static const char* const kEntries[] = {"scale"};

static const char* probe(void) { return "{\"plugin\": \"" PLUGIN_NAME "\", \"answer\": 42}"; }

ARCHFIT_PLUGIN_EXPORT int archfit_plugin_negotiate(uint32_t host_min, uint32_t host_max,
                                                   uint32_t* out_abi,
                                                   archfit_plugin_info* out_info) {
  static archfit_module_desc module;
  if (PLUGIN_KIND == KIND_DECLINE || host_min > 1 || host_max < 1) return 0;
  memset(&module, 0, sizeof module);
  module.struct_size = sizeof module;
  module.name = PLUGIN_NAME ".scale";
  module.source = kSource;
  module.source_name = "scale.cu";
  module.entry_points = kEntries;
  module.entry_point_count = PLUGIN_KIND == KIND_NO_ENTRIES ? 0 : 1;
  memset(out_info, 0, sizeof *out_info);
  out_info->struct_size = sizeof *out_info;
  out_info->name = PLUGIN_KIND == KIND_MISNAMED ? "someone_else" : PLUGIN_NAME;
  out_info->version = "1.2.3";
  out_info->description = "a test plugin";
  out_info->modules = &module;
  out_info->module_count = 1;
  out_info->probe = probe;
  *out_abi = PLUGIN_KIND == KIND_FAR ? 7u : 1u;
  return 1;
}
