/*
 * A test-only stand-in for libcuda.so.1 (docs/design.md, decision 8): it answers
 * the driver API calls archfit makes, with devices and a driver version
 * chosen by the test through the environment:
 *
 *   ARCHFIT_FAKE_CUDA_VERSION      cuDriverGetVersion's answer, e.g. 12080 (default 13000);
 *                                  also the newest PTX ISA cuModuleLoadData JIT-compiles
 *   ARCHFIT_FAKE_CUDA_INIT         the CUresult cuInit returns (default 0)
 *   ARCHFIT_FAKE_CUDA_DEVICES      "name,major.minor,bytes;…" (default: none)
 *   ARCHFIT_FAKE_CUDA_MODULE_LOAD  a CUresult cuModuleLoadData returns for every image,
 *                                  instead of judging it: a driver that disagrees with archfit
 *                                  (with 0, an image the rules refuse loads, holding no kernels)
 *
 * Contexts. cuInit must succeed before the context and module calls (else
 * CUDA_ERROR_NOT_INITIALIZED). Each device has one primary context, counted
 * by cuDevicePrimaryCtxRetain/Release; each thread a stack of current
 * contexts (cuCtxPush/Pop/Set/GetCurrent). A context whose last reference is
 * released is destroyed: loading into it gives CUDA_ERROR_CONTEXT_IS_DESTROYED.
 *
 * Modules. cuModuleLoadData judges an image the way the real driver does, by
 * rules written here independently of archfit's own (no archfit code is
 * linked, so the two can catch each other's mistakes). It takes a fatbin
 * container (magic 0xBA55ED50), a cubin (ELF, EM_CUDA) or NUL-terminated PTX
 * text, for the device of the current context, and answers
 *   - CUDA_SUCCESS when SASS runs on the device: the device's major and a
 *     minor no higher than the device's; an `a` image only on exactly its
 *     capability; an `f` image within its family ({10.0, 10.3}, {11.0},
 *     {12.0, 12.1}) at or above its capability; or else when PTX can be
 *     JIT-compiled: a target at or below the device (any major), `a`/`f` PTX
 *     with the SASS limits, of a PTX ISA the driver's CUDA version knows
 *     (sdk/data/kb/ptx_isa.yaml: CUDA 11.x knows 7.x, 12.0 to 12.5 know 8.0
 *     to 8.5, 12.6 8.5, 12.8 8.7, 12.9 8.8, 13.0 9.0, 13.1 9.1);
 *   - CUDA_ERROR_UNSUPPORTED_PTX_VERSION (222) when only PTX too new for
 *     the driver would fit;
 *   - CUDA_ERROR_NO_BINARY_FOR_GPU (209) when nothing fits (also for an
 *     empty container or one of LTO-IR only);
 *   - CUDA_ERROR_INVALID_IMAGE (200) for bytes that are none of the three,
 *     and CUDA_ERROR_INVALID_PTX (218) for text that opens with .version but
 *     names no sm_XY target.
 * The edge cases (empty or LTO-only containers, text that is not PTX) were
 * not measured on a real driver. A fatbin entry's arch, variant and PTX ISA
 * come from its header, so compressed entries are judged without
 * decompressing them; the chosen entry is decompressed (zstd or LZ4) only to
 * read its kernel names. A cubin is `a` when its .nv.compat says so; an `f`
 * cubin looks plain to the driver (e_flags and .nv.compat are the same), and
 * for SASS within the families above the two rules agree. Relocatable
 * (ET_REL) cubins are judged like any other.
 *
 * cuModuleGetFunction finds a kernel by name (an STO_CUDA_ENTRY function in
 * the cubin's symbol table, or a PTX .entry) and returns
 * CUDA_ERROR_NOT_FOUND otherwise. cuLaunchKernel checks its handle, context
 * and launch dimensions and returns success WITHOUT RUNNING ANYTHING: no
 * memory is written, so a test can show that a launch was accepted, never
 * what a kernel computed (that is the GPU suite's job, tests/gpu/).
 *
 * It never ships and never stands in for the GPU suite under tests/gpu/.
 */
#include <cuda.h>
#include <lz4.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#define FAKE_EXPORT __attribute__((visibility("default")))
#define FAKE_MAX_DEVICES 16
#define FAKE_MAX_CONTEXT_DEPTH 32

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

/* ---- initialisation and devices ------------------------------------------ */

static int initialized = 0;

/* NVRTC 13 dlopens libcuda.so.1 and asks it for its private export table;
 * with this fake already loaded under that name, NVRTC finds the fake. It
 * has no such table, and says so as a driver without one would. */
FAKE_EXPORT CUresult cuGetExportTable(const void** table, const CUuuid* id) {
  (void)id;
  if (table) *table = NULL;
  return CUDA_ERROR_NOT_SUPPORTED;
}

FAKE_EXPORT CUresult cuInit(unsigned int flags) {
  (void)flags;
  const CUresult result = (CUresult)env_int("ARCHFIT_FAKE_CUDA_INIT", 0);
  if (result == CUDA_SUCCESS) initialized = 1;
  return result;
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

/* ---- error names and strings (the real driver's words) ------------------- */

static const struct {
  CUresult code;
  const char* name;
  const char* text;
} errors[] = {
    {CUDA_SUCCESS, "CUDA_SUCCESS", "no error"},
    {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
    {CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {CUDA_ERROR_NO_BINARY_FOR_GPU, "CUDA_ERROR_NO_BINARY_FOR_GPU",
     "no kernel image is available for execution on the device"},
    {CUDA_ERROR_INVALID_PTX, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"},
    {CUDA_ERROR_UNSUPPORTED_PTX_VERSION, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
     "the provided PTX was compiled with an unsupported toolchain."},
    {CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {CUDA_ERROR_CONTEXT_IS_DESTROYED, "CUDA_ERROR_CONTEXT_IS_DESTROYED", "context is destroyed"},
    {CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
     "system has unsupported display driver / cuda driver combination"},
    {CUDA_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN", "unknown error"},
};

/* Like the real driver: a code it does not know is CUDA_ERROR_INVALID_VALUE. */
static CUresult error_words(CUresult error, const char** out, int want_name) {
  if (!out) return CUDA_ERROR_INVALID_VALUE;
  for (size_t i = 0; i < sizeof errors / sizeof errors[0]; ++i) {
    if (errors[i].code == error) {
      *out = want_name ? errors[i].name : errors[i].text;
      return CUDA_SUCCESS;
    }
  }
  *out = NULL;
  return CUDA_ERROR_INVALID_VALUE;
}

FAKE_EXPORT CUresult cuGetErrorString(CUresult error, const char** text) {
  return error_words(error, text, 0);
}

FAKE_EXPORT CUresult cuGetErrorName(CUresult error, const char** name) {
  return error_words(error, name, 1);
}

/* ---- primary contexts and the per-thread context stack ------------------- */

struct CUctx_st {
  CUdevice device;
  int retained; /* cuDevicePrimaryCtxRetain count; 0: inactive (destroyed) */
};

static struct CUctx_st primary[FAKE_MAX_DEVICES];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static __thread CUcontext stack[FAKE_MAX_CONTEXT_DEPTH];
static __thread int depth = 0;

static int is_context(CUcontext ctx) {
  const uintptr_t at = (uintptr_t)ctx, first = (uintptr_t)&primary[0];
  return at >= first && at < (uintptr_t)&primary[FAKE_MAX_DEVICES] &&
         (at - first) % sizeof primary[0] == 0;
}

FAKE_EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext* ctx, CUdevice device) {
  if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
  load_devices();
  if (!ctx) return CUDA_ERROR_INVALID_VALUE;
  if (device < 0 || device >= device_count) return CUDA_ERROR_INVALID_DEVICE;
  pthread_mutex_lock(&lock);
  primary[device].device = device;
  ++primary[device].retained;
  pthread_mutex_unlock(&lock);
  *ctx = &primary[device];
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice device) {
  if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
  load_devices();
  if (device < 0 || device >= device_count) return CUDA_ERROR_INVALID_DEVICE;
  CUresult result = CUDA_SUCCESS;
  pthread_mutex_lock(&lock);
  if (primary[device].retained > 0) {
    --primary[device].retained;
  } else {
    result = CUDA_ERROR_INVALID_CONTEXT;
  }
  pthread_mutex_unlock(&lock);
  return result;
}

FAKE_EXPORT CUresult cuCtxPushCurrent_v2(CUcontext ctx) {
  if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
  if (!is_context(ctx) || ctx->retained <= 0) return CUDA_ERROR_INVALID_CONTEXT;
  if (depth == FAKE_MAX_CONTEXT_DEPTH) return CUDA_ERROR_OUT_OF_MEMORY;
  stack[depth++] = ctx;
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuCtxPopCurrent_v2(CUcontext* ctx) {
  if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
  if (depth == 0) return CUDA_ERROR_INVALID_CONTEXT;
  --depth;
  if (ctx) *ctx = stack[depth];
  return CUDA_SUCCESS;
}

/* Replaces the top of the stack; NULL pops it (a no-op on an empty stack). */
FAKE_EXPORT CUresult cuCtxSetCurrent(CUcontext ctx) {
  if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
  if (!ctx) {
    if (depth > 0) --depth;
    return CUDA_SUCCESS;
  }
  if (!is_context(ctx) || ctx->retained <= 0) return CUDA_ERROR_INVALID_CONTEXT;
  if (depth == 0) depth = 1;
  stack[depth - 1] = ctx;
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuCtxGetCurrent(CUcontext* ctx) {
  if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
  if (!ctx) return CUDA_ERROR_INVALID_VALUE;
  *ctx = depth > 0 ? stack[depth - 1] : NULL;
  return CUDA_SUCCESS;
}

/* The context calls that need one use; CUDA_SUCCESS and *ctx, or why not. */
static CUresult current_context(struct CUctx_st** ctx) {
  if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
  if (depth == 0) return CUDA_ERROR_INVALID_CONTEXT;
  *ctx = stack[depth - 1];
  return (*ctx)->retained > 0 ? CUDA_SUCCESS : CUDA_ERROR_CONTEXT_IS_DESTROYED;
}

/* ---- the rules: which image runs where ----------------------------------- */

enum variant { PLAIN, ARCH_SPECIFIC, FAMILY_SPECIFIC };

/* The families `f` targets run within (ptxas 13.0); 0: none. */
static int family(int sm) {
  switch (sm) {
    case 100:
    case 103:
      return 10;
    case 110:
      return 11;
    case 120:
    case 121:
      return 12;
    default:
      return 0;
  }
}

static int sass_runs(int sm, enum variant variant, int device_sm) {
  if (variant == ARCH_SPECIFIC) return sm == device_sm;
  if (variant == FAMILY_SPECIFIC)
    return family(sm) != 0 && family(sm) == family(device_sm) && sm <= device_sm;
  return sm / 10 == device_sm / 10 && sm % 10 <= device_sm % 10;
}

static int ptx_jits(int sm, enum variant variant, int device_sm) {
  if (variant != PLAIN) return sass_runs(sm, variant, device_sm);
  return sm <= device_sm;
}

/* The newest PTX ISA (major * 10 + minor) a driver of this CUDA version
 * JIT-compiles, from sdk/data/kb/ptx_isa.yaml. Past the table a CUDA 13.x
 * driver is taken to know ISA 9.x. */
static int driver_max_ptx_isa(int cuda_version) {
  static const int table[][2] = {
      {11000, 70}, {11010, 71}, {11020, 72}, {11030, 73}, {11040, 74}, {11050, 75}, {11060, 76},
      {11070, 77}, {11080, 78}, {12000, 80}, {12010, 81}, {12020, 82}, {12030, 83}, {12040, 84},
      {12050, 85}, {12060, 85}, {12070, 86}, {12080, 87}, {12090, 88}, {13000, 90}, {13010, 91},
  };
  int isa = 0;
  for (size_t i = 0; i < sizeof table / sizeof table[0]; ++i) {
    if (table[i][0] <= cuda_version) isa = table[i][1];
  }
  if (cuda_version / 1000 == 13 && cuda_version > 13010) isa = 90 + (cuda_version % 1000) / 10;
  return isa;
}

/* The best image of a module for the device, as the loader would pick it. */
struct choice {
  int fits;                   /* 1: SASS that runs, 2: PTX the driver JIT-compiles */
  int too_new;                /* PTX would fit, but the driver does not know its ISA */
  int sm, rank;               /* to prefer the closest capability, then the narrowest variant */
  const unsigned char* entry; /* fatbin entry header; NULL for a whole cubin or PTX */
};

static int rank_of(enum variant variant) {
  return variant == ARCH_SPECIFIC ? 2 : variant == FAMILY_SPECIFIC ? 1 : 0;
}

static void consider(struct choice* best, int kind, int sm, enum variant variant, int isa,
                     int device_sm, const unsigned char* entry) {
  int fits = 0;
  if (kind == 2 && sass_runs(sm, variant, device_sm)) fits = 1;
  if (kind == 1 && ptx_jits(sm, variant, device_sm)) {
    if (isa > driver_max_ptx_isa(env_int("ARCHFIT_FAKE_CUDA_VERSION", 13000))) {
      best->too_new = 1;
      return;
    }
    fits = 2;
  }
  if (!fits) return;
  const int better =
      best->fits == 0 || fits < best->fits ||
      (fits == best->fits && (sm > best->sm || (sm == best->sm && rank_of(variant) > best->rank)));
  if (!better) return;
  best->fits = fits;
  best->sm = sm;
  best->rank = rank_of(variant);
  best->entry = entry;
}

/* Why nothing was chosen: PTX too new for the driver, or no image at all. */
static CUresult refusal(const struct choice* best) {
  return best->too_new ? CUDA_ERROR_UNSUPPORTED_PTX_VERSION : CUDA_ERROR_NO_BINARY_FOR_GPU;
}

/* ---- reading images ------------------------------------------------------ */

static uint16_t u16(const unsigned char* p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t u32(const unsigned char* p) {
  return (uint32_t)u16(p) | (uint32_t)u16(p + 2) << 16;
}
static uint64_t u64(const unsigned char* p) {
  return (uint64_t)u32(p) | (uint64_t)u32(p + 4) << 32;
}

#define FATBIN_KIND_PTX 1
#define FATBIN_KIND_ELF 2
#define FATBIN_FLAG_LZ4 0x2000u
#define FATBIN_FLAG_ZSTD 0x8000u
#define FATBIN_FLAG_A 0x100000u
#define FATBIN_FLAG_F 0x200000u
#define EM_CUDA 190
#define STO_CUDA_ENTRY 0x10

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f'; }

/* Skips whitespace and comments in NUL-terminated text. */
static const char* skip_trivia(const char* p) {
  for (;;) {
    while (*p && is_space(*p)) ++p;
    if (p[0] == '/' && p[1] == '/') {
      while (*p && *p != '\n') ++p;
    } else if (p[0] == '/' && p[1] == '*') {
      const char* end = strstr(p + 2, "*/");
      p = end ? end + 2 : p + strlen(p);
    } else {
      return p;
    }
  }
}

static int word_is(const char* p, const char* word) {
  const size_t n = strlen(word);
  return strncmp(p, word, n) == 0 && (is_space(p[n]) || p[n] == '\0');
}

/* PTX text: 0 and *sm, *variant, *isa from its .version and .target, or the
 * CUresult that says why it is not PTX a driver can read. */
static CUresult read_ptx(const char* text, int* sm, enum variant* variant, int* isa) {
  const char* p = skip_trivia(text);
  if (!word_is(p, ".version")) return CUDA_ERROR_INVALID_IMAGE;
  int major = 0, minor = 0;
  if (sscanf(p + 8, " %d.%d", &major, &minor) != 2) return CUDA_ERROR_INVALID_PTX;
  *isa = major * 10 + minor;
  /* .target follows within the next few words (.version 9.0 .target sm_90 …). */
  for (int word = 0; word < 8 && *p; ++word) {
    while (*p && !is_space(*p)) ++p;
    p = skip_trivia(p);
    if (word_is(p, ".target")) {
      p = skip_trivia(p + 7);
      char suffix = 0;
      if (sscanf(p, "sm_%d%c", sm, &suffix) < 1) return CUDA_ERROR_INVALID_PTX;
      *variant = suffix == 'a' ? ARCH_SPECIFIC : suffix == 'f' ? FAMILY_SPECIFIC : PLAIN;
      return CUDA_SUCCESS;
    }
  }
  return CUDA_ERROR_INVALID_PTX;
}

/* One section header of a 64-bit ELF; NULL past the table or its `size`. */
static const unsigned char* elf_section(const unsigned char* elf, size_t size, unsigned index) {
  const uint64_t shoff = u64(elf + 0x28);
  const unsigned entsize = u16(elf + 0x3a), count = u16(elf + 0x3c);
  if (index >= count || entsize < 0x40 || shoff > size || (size - shoff) / entsize <= index)
    return NULL;
  return elf + shoff + (uint64_t)index * entsize;
}

/* The bytes of a section, or NULL when they lie outside `size`. */
static const unsigned char* section_bytes(const unsigned char* elf, size_t size,
                                          const unsigned char* header, uint64_t* length) {
  const uint64_t offset = u64(header + 0x18);
  *length = u64(header + 0x20);
  if (offset > size || *length > size - offset) return NULL;
  return elf + offset;
}

/* .nv.compat record 02 09 01 00 marks an arch-specific (`a`) cubin. */
static enum variant cubin_variant(const unsigned char* elf, size_t size) {
  const unsigned char* names_header = elf_section(elf, size, u16(elf + 0x3e));
  uint64_t names_size = 0;
  const unsigned char* names =
      names_header ? section_bytes(elf, size, names_header, &names_size) : NULL;
  if (!names) return PLAIN;
  const unsigned char* header;
  for (unsigned i = 0; (header = elf_section(elf, size, i)) != NULL; ++i) {
    const uint32_t name = u32(header);
    if (name > names_size || names_size - name < sizeof ".nv.compat" ||
        memcmp(names + name, ".nv.compat", sizeof ".nv.compat") != 0)
      continue;
    uint64_t length = 0;
    const unsigned char* records = section_bytes(elf, size, header, &length);
    for (uint64_t at = 0; records && at + 4 <= length; at += 4) {
      if (records[at] == 2 && records[at + 1] == 9 && records[at + 2] == 1) return ARCH_SPECIFIC;
    }
  }
  return PLAIN;
}

/* ---- modules and functions ----------------------------------------------- */

struct CUfunc_st {
  struct CUmod_st* module;
  const char* name;
};

struct CUmod_st {
  struct CUctx_st* context;
  char* names; /* kernel names, each NUL-terminated, back to back */
  int function_count;
  struct CUfunc_st* functions;
  struct CUmod_st* next;
};

static struct CUmod_st* modules = NULL; /* the loaded ones, guarded by `lock` */

static void add_name(struct CUmod_st* module, size_t* used, size_t* capacity, const char* name,
                     size_t length) {
  if (*used + length + 1 > *capacity) {
    size_t grown = *capacity ? *capacity * 2 : 256;
    while (grown < *used + length + 1) grown *= 2;
    char* names = realloc(module->names, grown);
    if (!names) return;
    module->names = names;
    *capacity = grown;
  }
  memcpy(module->names + *used, name, length);
  module->names[*used + length] = '\0';
  *used += length + 1;
  ++module->function_count;
}

/* Kernel names of a cubin: functions marked STO_CUDA_ENTRY in .symtab. */
static void cubin_names(struct CUmod_st* module, const unsigned char* elf, size_t size) {
  size_t used = 0, capacity = 0;
  const unsigned char* header;
  for (unsigned i = 0; (header = elf_section(elf, size, i)) != NULL; ++i) {
    if (u32(header + 4) != 2 /* SHT_SYMTAB */) continue;
    const unsigned char* strings_header = elf_section(elf, size, u32(header + 0x28));
    uint64_t symbols_size = 0, strings_size = 0;
    const unsigned char* symbols = section_bytes(elf, size, header, &symbols_size);
    const unsigned char* strings =
        strings_header ? section_bytes(elf, size, strings_header, &strings_size) : NULL;
    if (!symbols || !strings) continue;
    for (uint64_t at = 0; at + 24 <= symbols_size; at += 24) {
      const unsigned char* symbol = symbols + at;
      const uint32_t name = u32(symbol);
      if ((symbol[4] & 0xf) != 2 /* STT_FUNC */ || !(symbol[5] & STO_CUDA_ENTRY) ||
          name >= strings_size)
        continue;
      const char* text = (const char*)strings + name;
      add_name(module, &used, &capacity, text, strnlen(text, strings_size - name));
    }
  }
}

/* Kernel names of PTX text: the word after each `.entry`. */
static void ptx_names(struct CUmod_st* module, const char* text, size_t size) {
  size_t used = 0, capacity = 0;
  const char* end = text + size;
  for (const char* p = text; p + 6 < end; ++p) {
    if (memcmp(p, ".entry", 6) != 0 || !is_space(p[6])) continue;
    const char* name = p + 6;
    while (name < end && is_space(*name)) ++name;
    const char* stop = name;
    while (stop < end && *stop && !is_space(*stop) && *stop != '(') ++stop;
    if (stop > name) add_name(module, &used, &capacity, name, (size_t)(stop - name));
    p = stop - 1;
  }
}

/* The payload of a fatbin entry, decompressed when stored compressed; NULL
 * when it cannot be read. *owned is set when the caller must free it. */
static const unsigned char* entry_payload(const unsigned char* entry, size_t* size, int* owned) {
  const unsigned char* payload = entry + u32(entry + 4);
  const uint64_t flags = u64(entry + 0x28);
  *owned = 0;
  *size = (size_t)u64(entry + 8);
  if (!(flags & (FATBIN_FLAG_LZ4 | FATBIN_FLAG_ZSTD))) return payload;
  const uint64_t compressed = u32(entry + 0x10), uncompressed = u64(entry + 0x38);
  if (compressed > *size || uncompressed == 0 || uncompressed > (1u << 30)) return NULL;
  unsigned char* out = malloc((size_t)uncompressed);
  if (!out) return NULL;
  int ok;
  if (flags & FATBIN_FLAG_ZSTD) {
    ok = ZSTD_decompress(out, (size_t)uncompressed, payload, (size_t)compressed) == uncompressed;
  } else {
    ok = LZ4_decompress_safe((const char*)payload, (char*)out, (int)compressed,
                             (int)uncompressed) == (int)uncompressed;
  }
  if (!ok) {
    free(out);
    return NULL;
  }
  *owned = 1;
  *size = (size_t)uncompressed;
  return out;
}

/* Reads the kernel names of the chosen fatbin entry; 0 when it is unreadable. */
static int entry_names(struct CUmod_st* module, const unsigned char* entry) {
  size_t size = 0;
  int owned = 0;
  const unsigned char* payload = entry_payload(entry, &size, &owned);
  if (!payload) return 0;
  if (u16(entry) == FATBIN_KIND_ELF && size >= 64) cubin_names(module, payload, size);
  if (u16(entry) == FATBIN_KIND_PTX) ptx_names(module, (const char*)payload, size);
  if (owned) free((void*)payload);
  return 1;
}

/* Judges a fatbin container: the answer, and the kernel names of what fits. */
static CUresult load_fatbin(struct CUmod_st* module, const unsigned char* image, int device_sm) {
  if (u16(image + 4) != 1 || u16(image + 6) != 16) return CUDA_ERROR_INVALID_IMAGE;
  const unsigned char* end = image + 16 + u64(image + 8);
  struct choice best = {0};
  for (const unsigned char* entry = image + 16; entry + 64 <= end;) {
    const uint16_t kind = u16(entry);
    if (kind == 0) break; /* zero padding to the container's end */
    const uint32_t header_size = u32(entry + 4);
    const uint64_t payload_size = u64(entry + 8);
    if (u16(entry + 2) != 0x0101 || header_size < 64 || header_size > (uint64_t)(end - entry) ||
        payload_size > (uint64_t)(end - entry) - header_size)
      return CUDA_ERROR_INVALID_IMAGE;
    const uint64_t flags = u64(entry + 0x28);
    const enum variant variant = (flags & FATBIN_FLAG_A)   ? ARCH_SPECIFIC
                                 : (flags & FATBIN_FLAG_F) ? FAMILY_SPECIFIC
                                                           : PLAIN;
    const int isa = u16(entry + 0x1a) * 10 + u16(entry + 0x18);
    consider(&best, kind, (int)u32(entry + 0x1c), variant, isa, device_sm, entry);
    entry += header_size + payload_size;
  }
  if (!best.fits) return refusal(&best);
  return entry_names(module, best.entry) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_IMAGE;
}

/* The extent of a cubin, from its headers (the driver is given no length). */
static size_t cubin_size(const unsigned char* elf) {
  uint64_t size = u64(elf + 0x28) + (uint64_t)u16(elf + 0x3a) * u16(elf + 0x3c);
  for (unsigned i = 0; i < u16(elf + 0x3c); ++i) {
    const unsigned char* header = elf + u64(elf + 0x28) + (uint64_t)i * u16(elf + 0x3a);
    if (u32(header + 4) == 8 /* SHT_NOBITS */) continue;
    const uint64_t end = u64(header + 0x18) + u64(header + 0x20);
    if (end > size) size = end;
  }
  return (size_t)size;
}

static CUresult load_cubin(struct CUmod_st* module, const unsigned char* elf, int device_sm) {
  if (elf[4] != 2 /* ELFCLASS64 */ || u16(elf + 0x12) != EM_CUDA || u16(elf + 0x3a) < 0x40)
    return CUDA_ERROR_INVALID_IMAGE;
  const size_t size = cubin_size(elf);
  /* V1 cubins (EI_ABIVERSION 7) keep the SM in bits 0-7, V2 (8) in bits 8-15. */
  const uint32_t flags = u32(elf + 0x30);
  const int sm = (int)(elf[8] >= 8 ? (flags >> 8) & 0xff : flags & 0xff);
  if (!sass_runs(sm, cubin_variant(elf, size), device_sm)) return CUDA_ERROR_NO_BINARY_FOR_GPU;
  cubin_names(module, elf, size);
  return CUDA_SUCCESS;
}

static CUresult load_ptx(struct CUmod_st* module, const char* text, int device_sm) {
  int sm = 0, isa = 0;
  enum variant variant = PLAIN;
  const CUresult read = read_ptx(text, &sm, &variant, &isa);
  if (read != CUDA_SUCCESS) return read;
  struct choice best = {0};
  consider(&best, FATBIN_KIND_PTX, sm, variant, isa, device_sm, NULL);
  if (!best.fits) return refusal(&best);
  ptx_names(module, text, strlen(text));
  return CUDA_SUCCESS;
}

static void free_module(struct CUmod_st* module) {
  free(module->names);
  free(module->functions);
  free(module);
}

FAKE_EXPORT CUresult cuModuleLoadData(CUmodule* out, const void* image) {
  struct CUctx_st* ctx = NULL;
  const CUresult context = current_context(&ctx);
  if (context != CUDA_SUCCESS) return context;
  if (!out || !image) return CUDA_ERROR_INVALID_VALUE;
  load_devices();
  if (ctx->device >= device_count) return CUDA_ERROR_INVALID_DEVICE;
  const int device_sm = devices[ctx->device].major * 10 + devices[ctx->device].minor;

  struct CUmod_st* module = calloc(1, sizeof *module);
  if (!module) return CUDA_ERROR_OUT_OF_MEMORY;
  module->context = ctx;
  const unsigned char* bytes = image;
  CUresult result;
  /* Byte by byte, so a text shorter than four bytes is never read past its NUL. */
  if (bytes[0] == 0x50 && bytes[1] == 0xed && bytes[2] == 0x55 && bytes[3] == 0xba) {
    result = load_fatbin(module, bytes, device_sm);
  } else if (bytes[0] == 0x7f && bytes[1] == 'E' && bytes[2] == 'L' && bytes[3] == 'F') {
    result = load_cubin(module, bytes, device_sm);
  } else {
    result = load_ptx(module, image, device_sm);
  }
  const char* forced = getenv("ARCHFIT_FAKE_CUDA_MODULE_LOAD");
  if (forced) result = (CUresult)atoi(forced);
  if (result == CUDA_SUCCESS && module->function_count > 0) {
    module->functions = calloc((size_t)module->function_count, sizeof *module->functions);
    if (!module->functions) result = CUDA_ERROR_OUT_OF_MEMORY;
    const char* name = module->names;
    for (int i = 0; module->functions && i < module->function_count; ++i) {
      module->functions[i].module = module;
      module->functions[i].name = name;
      name += strlen(name) + 1;
    }
  }
  if (result != CUDA_SUCCESS) {
    free_module(module);
    return result;
  }
  pthread_mutex_lock(&lock);
  module->next = modules;
  modules = module;
  pthread_mutex_unlock(&lock);
  *out = module;
  return CUDA_SUCCESS;
}

/* Unlinks `module` from the loaded list; 0 when it was not loaded. */
static int unlink_module(CUmodule module) {
  for (struct CUmod_st** at = &modules; *at; at = &(*at)->next) {
    if (*at == module) {
      *at = module->next;
      return 1;
    }
  }
  return 0;
}

static int is_loaded(CUmodule module) {
  for (struct CUmod_st* at = modules; at; at = at->next) {
    if (at == module) return 1;
  }
  return 0;
}

/* A handle cuModuleGetFunction gave out, of a module still loaded. Compares
 * addresses only: the handle may point into a module since unloaded. */
static int is_function(CUfunction function) {
  const uintptr_t at = (uintptr_t)function;
  for (struct CUmod_st* module = modules; module; module = module->next) {
    const uintptr_t first = (uintptr_t)module->functions;
    if (first && at >= first && at < first + module->function_count * sizeof *module->functions)
      return 1;
  }
  return 0;
}

FAKE_EXPORT CUresult cuModuleUnload(CUmodule module) {
  if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
  pthread_mutex_lock(&lock);
  const int found = module && unlink_module(module);
  pthread_mutex_unlock(&lock);
  if (!found) return CUDA_ERROR_INVALID_HANDLE;
  free_module(module);
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuModuleGetFunction(CUfunction* function, CUmodule module, const char* name) {
  if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
  if (!function || !name) return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&lock);
  const int loaded = module && is_loaded(module);
  pthread_mutex_unlock(&lock);
  if (!loaded) return CUDA_ERROR_INVALID_HANDLE;
  for (int i = 0; i < module->function_count; ++i) {
    if (strcmp(module->functions[i].name, name) == 0) {
      *function = &module->functions[i];
      return CUDA_SUCCESS;
    }
  }
  return CUDA_ERROR_NOT_FOUND;
}

/* Accepts a well-formed launch and runs nothing (see the top of the file). */
/* What the last accepted cuLaunchKernel was given, for tests that check a
 * launch reached the driver as the caller described it (the stream above
 * all: archfit must launch on the caller's stream, e.g. torch's current one).
 * Not a driver entry point: tests find it with dlsym. */
struct fake_cuda_launch {
  CUfunction function;
  unsigned grid[3], block[3], shared_bytes;
  CUstream stream;
  void** parameters;
  unsigned long long count; /* accepted launches so far */
};
static struct fake_cuda_launch last_launch;

FAKE_EXPORT void fake_cuda_last_launch(struct fake_cuda_launch* out) {
  pthread_mutex_lock(&lock);
  *out = last_launch;
  pthread_mutex_unlock(&lock);
}

FAKE_EXPORT CUresult cuLaunchKernel(CUfunction function, unsigned grid_x, unsigned grid_y,
                                    unsigned grid_z, unsigned block_x, unsigned block_y,
                                    unsigned block_z, unsigned shared_bytes, CUstream stream,
                                    void** parameters, void** extra) {
  (void)extra;
  struct CUctx_st* ctx = NULL;
  const CUresult context = current_context(&ctx);
  if (context != CUDA_SUCCESS) return context;
  pthread_mutex_lock(&lock);
  const int valid = is_function(function) && function->module->context == ctx;
  pthread_mutex_unlock(&lock);
  if (!valid) return CUDA_ERROR_INVALID_HANDLE;
  if (!grid_x || !grid_y || !grid_z || !block_x || !block_y || !block_z ||
      (unsigned long long)block_x * block_y * block_z > 1024)
    return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&lock);
  const unsigned long long count = last_launch.count + 1;
  last_launch = (struct fake_cuda_launch){function,
                                          {grid_x, grid_y, grid_z},
                                          {block_x, block_y, block_z},
                                          shared_bytes,
                                          stream,
                                          parameters,
                                          count};
  pthread_mutex_unlock(&lock);
  return CUDA_SUCCESS;
}
