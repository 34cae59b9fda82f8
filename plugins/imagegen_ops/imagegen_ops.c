/*
 * The imagegen_ops plugin: archfit's bundled image-generation kernels
 * (kernels/) as kernel modules — RMSNorm, fused GroupNorm+SiLU, GGUF Q8_0
 * and Q4_K dequantisation, fp8 e4m3 to bf16 — each with its CUDA source and
 * a prebuilt fatbin built by nvcc for a deliberately old arch set (SASS for
 * sm_80, sm_86, sm_89, sm_90, no PTX: what a cu124 wheel carries). On any
 * newer GPU, archfit compiles the source with NVRTC instead. The bytes are
 * embedded at build time (imagegen_ops_embedded.c, cmake/embed_files.cmake);
 * without nvcc the modules carry their source only.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "archfit/archfit_plugin.h"

#define EMBEDDED(name)               \
  extern const unsigned char name[]; \
  extern const size_t name##_size;
EMBEDDED(rmsnorm_source)
EMBEDDED(groupnorm_silu_source)
EMBEDDED(gguf_dequant_source)
EMBEDDED(fp8_to_bf16_source)
#if IMAGEGEN_OPS_PREBUILT
EMBEDDED(rmsnorm_fatbin)
EMBEDDED(groupnorm_silu_fatbin)
EMBEDDED(gguf_dequant_fatbin)
EMBEDDED(fp8_to_bf16_fatbin)
#define PREBUILT(name) name##_fatbin, name##_fatbin_size
#else
#define PREBUILT(name) NULL, 0
#endif

static const char* const kRmsnorm[] = {"rmsnorm_f32", "rmsnorm_f16", "rmsnorm_bf16"};
static const char* const kGroupnormSilu[] = {"groupnorm_silu_f32", "groupnorm_silu_f16",
                                             "groupnorm_silu_bf16"};
static const char* const kGgufDequant[] = {"dequantize_q8_0_f16", "dequantize_q8_0_bf16",
                                           "dequantize_q4_k_f16", "dequantize_q4_k_bf16"};
static const char* const kFp8ToBf16[] = {"fp8_e4m3_to_bf16"};

#define COUNT(array) (sizeof(array) / sizeof((array)[0]))

static archfit_module_desc module(const char* name, const char* source_name,
                                  const unsigned char* source, const char* const* entries,
                                  size_t entry_count, const void* prebuilt, size_t prebuilt_size) {
  archfit_module_desc desc;
  memset(&desc, 0, sizeof desc);
  desc.struct_size = sizeof desc;
  desc.name = name;
  desc.source = (const char*)source;
  desc.source_name = source_name;
  desc.entry_points = entries;
  desc.entry_point_count = entry_count;
  desc.prebuilt = prebuilt;
  desc.prebuilt_size = prebuilt_size;
  return desc;
}

ARCHFIT_PLUGIN_EXPORT int archfit_plugin_negotiate(uint32_t host_min, uint32_t host_max,
                                                   uint32_t* out_abi,
                                                   archfit_plugin_info* out_info) {
  static archfit_module_desc modules[4];
  if (host_min > 1 || host_max < 1) return 0;
  modules[0] = module("imagegen_ops.rmsnorm", "rmsnorm.cu", rmsnorm_source, kRmsnorm,
                      COUNT(kRmsnorm), PREBUILT(rmsnorm));
  modules[1] = module("imagegen_ops.groupnorm_silu", "groupnorm_silu.cu", groupnorm_silu_source,
                      kGroupnormSilu, COUNT(kGroupnormSilu), PREBUILT(groupnorm_silu));
  modules[2] = module("imagegen_ops.gguf_dequant", "gguf_dequant.cu", gguf_dequant_source,
                      kGgufDequant, COUNT(kGgufDequant), PREBUILT(gguf_dequant));
  modules[3] = module("imagegen_ops.fp8_to_bf16", "fp8_to_bf16.cu", fp8_to_bf16_source, kFp8ToBf16,
                      COUNT(kFp8ToBf16), PREBUILT(fp8_to_bf16));
  memset(out_info, 0, sizeof *out_info);
  out_info->struct_size = sizeof *out_info;
  out_info->name = "imagegen_ops";
  out_info->version = IMAGEGEN_OPS_VERSION;
  out_info->description =
      "Image-generation kernels: RMSNorm, GroupNorm+SiLU, GGUF Q8_0/Q4_K dequantisation, "
      "fp8 e4m3 to bf16";
  out_info->modules = modules;
  out_info->module_count = COUNT(modules);
  *out_abi = 1;
  return 1;
}
