/*
 * A test-only stand-in for libcuda.so.1 (DESIGN.md decision 7): it answers
 * the driver API calls archfit's probe makes, with devices and a driver
 * version chosen by the test through the environment:
 *
 *   ARCHFIT_FAKE_CUDA_VERSION  cuDriverGetVersion's answer, e.g. 12080 (default 13000)
 *   ARCHFIT_FAKE_CUDA_INIT     the CUresult cuInit returns (default 0)
 *   ARCHFIT_FAKE_CUDA_DEVICES  "name,major.minor,bytes;…" (default: none)
 *
 * It never ships and never stands in for the GPU suite under tests/gpu/.
 */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAKE_EXPORT __attribute__((visibility("default")))
#define FAKE_MAX_DEVICES 16

struct fake_device {
  char name[128];
  int major, minor;
  unsigned long long memory;
};

static struct fake_device devices[FAKE_MAX_DEVICES];
static int device_count = 0;

/* Re-read on every call: one test process changes the devices between tests,
 * and the probe never unloads the driver library. */
static void load_devices(void) {
  device_count = 0;
  const char* spec = getenv("ARCHFIT_FAKE_CUDA_DEVICES");
  if (!spec) return;
  char copy[4096];
  strncpy(copy, spec, sizeof copy - 1);
  copy[sizeof copy - 1] = '\0';
  char* save = NULL;
  for (char* item = strtok_r(copy, ";", &save); item && device_count < FAKE_MAX_DEVICES;
       item = strtok_r(NULL, ";", &save)) {
    struct fake_device* d = &devices[device_count];
    char* comma = strchr(item, ',');
    if (!comma) continue;
    *comma = '\0';
    strncpy(d->name, item, sizeof d->name - 1);
    if (sscanf(comma + 1, "%d.%d,%llu", &d->major, &d->minor, &d->memory) < 2) continue;
    ++device_count;
  }
}

static int env_int(const char* name, int fallback) {
  const char* value = getenv(name);
  return value ? atoi(value) : fallback;
}

FAKE_EXPORT CUresult cuInit(unsigned int flags) {
  (void)flags;
  return (CUresult)env_int("ARCHFIT_FAKE_CUDA_INIT", 0);
}

FAKE_EXPORT CUresult cuDriverGetVersion(int* version) {
  if (!version) return CUDA_ERROR_INVALID_VALUE;
  *version = env_int("ARCHFIT_FAKE_CUDA_VERSION", 13000);
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuDeviceGetCount(int* count) {
  if (!count) return CUDA_ERROR_INVALID_VALUE;
  load_devices();
  *count = device_count;
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuDeviceGet(CUdevice* device, int ordinal) {
  load_devices();
  if (!device || ordinal < 0 || ordinal >= device_count) return CUDA_ERROR_INVALID_DEVICE;
  *device = ordinal;
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuDeviceGetName(char* name, int length, CUdevice device) {
  load_devices();
  if (!name || length <= 0 || device < 0 || device >= device_count) return CUDA_ERROR_INVALID_VALUE;
  snprintf(name, (size_t)length, "%s", devices[device].name);
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuDeviceGetAttribute(int* value, CUdevice_attribute attribute,
                                          CUdevice device) {
  load_devices();
  if (!value || device < 0 || device >= device_count) return CUDA_ERROR_INVALID_VALUE;
  switch (attribute) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
      *value = devices[device].major;
      break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
      *value = devices[device].minor;
      break;
    case CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID:
      *value = 0;
      break;
    case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID:
      *value = 1 + device;
      break;
    case CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID:
      *value = 0;
      break;
    default:
      return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuDeviceTotalMem_v2(size_t* bytes, CUdevice device) {
  load_devices();
  if (!bytes || device < 0 || device >= device_count) return CUDA_ERROR_INVALID_VALUE;
  *bytes = (size_t)devices[device].memory;
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuDeviceGetUuid_v2(CUuuid* uuid, CUdevice device) {
  load_devices();
  if (!uuid || device < 0 || device >= device_count) return CUDA_ERROR_INVALID_VALUE;
  for (int i = 0; i < 16; ++i) uuid->bytes[i] = (char)(0x10 * device + i);
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuGetErrorString(CUresult error, const char** text) {
  if (!text) return CUDA_ERROR_INVALID_VALUE;
  switch (error) {
    case CUDA_SUCCESS:
      *text = "no error";
      break;
    case CUDA_ERROR_NO_DEVICE:
      *text = "no CUDA-capable device is detected";
      break;
    default:
      *text = "unknown error";
      break;
  }
  return CUDA_SUCCESS;
}
