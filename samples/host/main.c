/* A minimal C host of archfit: loads the plugins, checks an environment
 * against a GPU, and runs one plugin kernel (imagegen_ops' RMSNorm) on GPU 0
 * where there is one, saying at each step what it did.
 *
 *   archfit_host [--gpu NAME] [SITE_PACKAGES ...]
 *
 * --gpu judges against a GPU by name ("RTX 5090", "sm_120") instead of the
 * real one. Exit status: 0 when the environment fits (or there was nothing
 * to check), 1 when something in it fails on the GPU, 2 when archfit could
 * not run. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <archfit/archfit.h>

#if HOST_HAS_CUDART
#include <cuda_runtime_api.h>
#endif

static int fail(const char* what) {
  fprintf(stderr, "archfit_host: %s: %s\n", what, archfit_last_error());
  return 2;
}

static void list_plugins(const archfit_plugin_set* set) {
  size_t i;
  for (i = 0; i < archfit_plugin_set_count(set); ++i) {
    archfit_plugin_entry entry;
    memset(&entry, 0, sizeof entry);
    entry.struct_size = sizeof entry;
    if (archfit_plugin_set_get(set, i, &entry) != ARCHFIT_OK) continue;
    printf("plugin   %s %s: %zu kernel module(s)%s, %.1f ms\n", entry.name, entry.version,
           entry.module_count, entry.probe_json ? " and a probe" : "", entry.milliseconds);
    if (entry.probe_json) printf("probe    %s: %s\n", entry.name, entry.probe_json);
  }
  for (i = 0; i < archfit_plugin_set_rejected_count(set); ++i)
    printf("rejected %s: %s\n", archfit_plugin_set_rejected_path(set, i),
           archfit_plugin_set_rejected_reason(set, i));
}

static int check(archfit_context* context, const char* gpu, const char* const* sites,
                 size_t site_count) {
  archfit_check_options options;
  archfit_report* report = NULL;
  size_t i;
  memset(&options, 0, sizeof options);
  options.struct_size = sizeof options;
  options.gpu = gpu;
  options.site_packages = sites;
  options.site_packages_count = site_count;
  if (archfit_check_run(context, &options, &report) != ARCHFIT_OK) return fail("check");
  for (i = 0; i < archfit_report_component_count(report); ++i) {
    const char* fix = archfit_report_component_fix(report, i);
    printf("check    %s: %s%s%s\n", archfit_report_component_name(report, i),
           archfit_report_component_verdict(report, i), fix && *fix ? "; fix: " : "",
           fix ? fix : "");
  }
  i = archfit_report_verdict(report) == ARCHFIT_FAILS;
  printf("check    %s\n",
         i ? "something fails on this GPU" : "everything fits, or no GPU to judge");
  archfit_report_destroy(report);
  return (int)i;
}

/* RMSNorm of 4 rows of 1024 on GPU 0, checked against the CPU. */
static void run_rmsnorm(archfit_module* module) {
  archfit_loaded_module* loaded = NULL;
  archfit_load_info info;
  void* kernel = NULL;
  if (archfit_loaded_module_create(module, 0, &loaded) != ARCHFIT_OK) {
    printf("kernel   not loaded on GPU 0: %s\n", archfit_last_error());
    return;
  }
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  if (archfit_loaded_module_info(loaded, &info) == ARCHFIT_OK)
    printf("kernel   loaded on %s by %s for %s in %.1f ms: %s\n", info.device_name, info.path,
           info.arch, info.milliseconds, info.reason);
  if (archfit_loaded_module_function(loaded, "rmsnorm_f32", &kernel) != ARCHFIT_OK) {
    printf("kernel   rmsnorm_f32 not found: %s\n", archfit_last_error());
  } else {
#if HOST_HAS_CUDART
    enum { rows = 4, cols = 1024 };
    static float x[rows * cols], weight[cols], y[rows * cols];
    float *dx = NULL, *dw = NULL, *dy = NULL;
    float eps = 1e-6f, worst = 0;
    int columns = cols, i, r;
    void* parameters[5];
    archfit_launch_config launch;
    for (i = 0; i < rows * cols; ++i) x[i] = (float)sin(0.01 * i);
    for (i = 0; i < cols; ++i) weight[i] = 1.0f + 0.001f * (float)i;
    cudaMalloc((void**)&dx, sizeof x);
    cudaMalloc((void**)&dw, sizeof weight);
    cudaMalloc((void**)&dy, sizeof y);
    cudaMemcpy(dx, x, sizeof x, cudaMemcpyHostToDevice);
    cudaMemcpy(dw, weight, sizeof weight, cudaMemcpyHostToDevice);
    parameters[0] = &dx;
    parameters[1] = &dw;
    parameters[2] = &dy;
    parameters[3] = &columns;
    parameters[4] = &eps;
    memset(&launch, 0, sizeof launch);
    launch.struct_size = sizeof launch;
    launch.grid[0] = rows;
    launch.block[0] = 256;
    if (archfit_loaded_module_launch(loaded, kernel, &launch, parameters) != ARCHFIT_OK) {
      printf("kernel   launch failed: %s\n", archfit_last_error());
    } else if (cudaMemcpy(y, dy, sizeof y, cudaMemcpyDeviceToHost) != cudaSuccess) {
      printf("kernel   failed on the GPU: %s\n", cudaGetErrorString(cudaGetLastError()));
    } else {
      for (r = 0; r < rows; ++r) {
        double sum = 0;
        for (i = 0; i < cols; ++i) sum += (double)x[r * cols + i] * x[r * cols + i];
        for (i = 0; i < cols; ++i) {
          const float want = (float)(x[r * cols + i] / sqrt(sum / cols + eps) * weight[i]);
          const float off = fabsf(y[r * cols + i] - want);
          if (off > worst) worst = off;
        }
      }
      printf("kernel   rmsnorm_f32 ran on %d rows of %d: largest difference from the CPU %g\n",
             rows, cols, worst);
    }
    cudaFree(dx);
    cudaFree(dw);
    cudaFree(dy);
#else
    printf("kernel   rmsnorm_f32 found; built without the CUDA runtime, so not launched\n");
#endif
  }
  archfit_loaded_module_destroy(loaded);
}

int main(int argc, char** argv) {
  archfit_context* context = NULL;
  archfit_plugin_set* plugins = NULL;
  archfit_module* rmsnorm = NULL;
  const char* gpu = NULL;
  const char** sites = (const char**)calloc((size_t)argc, sizeof *sites);
  size_t site_count = 0;
  int i, verdict = 0;
  for (i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--gpu") == 0 && i + 1 < argc)
      gpu = argv[++i];
    else
      sites[site_count++] = argv[i];
  }
  printf("archfit  %s\n", archfit_version_string());
  if (archfit_context_create(NULL, &context) != ARCHFIT_OK) return fail("context");

  /* NULL: the default search, ARCHFIT_PLUGIN_PATH then the install's plugins. */
  if (archfit_plugin_set_create(context, NULL, &plugins) != ARCHFIT_OK) return fail("plugins");
  list_plugins(plugins);

  if (site_count > 0) {
    verdict = check(context, gpu, sites, site_count);
    if (verdict == 2) return 2;
  } else {
    printf("check    nothing to check: give site-packages folders\n");
  }

  if (archfit_plugin_set_module_create(context, plugins, "imagegen_ops.rmsnorm", &rmsnorm) !=
      ARCHFIT_OK) {
    printf("kernel   %s\n", archfit_last_error());
  } else {
    run_rmsnorm(rmsnorm);
    archfit_module_destroy(rmsnorm);
  }
  archfit_plugin_set_destroy(plugins);
  archfit_context_destroy(context);
  free((void*)sites);
  return verdict;
}
