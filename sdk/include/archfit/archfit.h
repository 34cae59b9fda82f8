/*
 * archfit — the stable C ABI.
 *
 * Rules (docs/c-abi.md has the long form):
 *  - Every fallible call returns archfit_status; ARCHFIT_OK is 0. The message
 *    of the last failing call on the calling thread is archfit_last_error().
 *    Out-parameters are left untouched when a call fails.
 *  - Handles: each is made by archfit_<handle>_create (built from what it is
 *    given) or archfit_<flow>_run (the result of a scan, check or diagnosis)
 *    and freed by archfit_<handle>_destroy; _destroy(NULL) is a no-op.
 *    Strings returned as `const char*` are borrowed: they live as long as
 *    the handle they came from and must not be freed.
 *  - Structs passed in (and structs the library fills) start with
 *    `uint32_t struct_size`, set by the caller to sizeof(the struct it was
 *    compiled with). Structs and enums only grow at the end.
 *  - Threads: an archfit_context may be used from many threads at once. Other
 *    handles (archfit_scan, …) are not shared between threads without the
 *    caller's own locking, except that const accessors on a finished handle
 *    may be called concurrently.
 *  - Versions: ARCHFIT_VERSION_* at compile time, archfit_version() at run
 *    time; the SONAME carries the major version, which changes only when this
 *    ABI breaks.
 */
#ifndef ARCHFIT_ARCHFIT_H
#define ARCHFIT_ARCHFIT_H

#include <stddef.h>
#include <stdint.h>

/* ARCHFIT_VERSION_MAJOR, _MINOR, _PATCH and _STRING, generated from the
 * build's one version (CMakeLists.txt). */
#include "archfit/archfit_version.h"
/* MAJOR * 10000 + MINOR * 100 + PATCH, as archfit_version() returns it. */
#define ARCHFIT_VERSION_NUMBER \
  (ARCHFIT_VERSION_MAJOR * 10000 + ARCHFIT_VERSION_MINOR * 100 + ARCHFIT_VERSION_PATCH)
#define ARCHFIT_VERSION_AT_LEAST(major, minor, patch) \
  (ARCHFIT_VERSION_NUMBER >= ((major)*10000 + (minor)*100 + (patch)))

/* What archfit.dll exports on Windows: exactly the functions marked here,
 * when the DLL itself is built (ARCHFIT_BUILDING_DLL); a program or ctypes
 * calls them through the import library or by name, with nothing to mark. */
#if defined(_WIN32)
#if defined(ARCHFIT_BUILDING_DLL)
#define ARCHFIT_API __declspec(dllexport)
#else
#define ARCHFIT_API
#endif
#elif defined(__GNUC__)
#define ARCHFIT_API __attribute__((visibility("default")))
#else
#define ARCHFIT_API
#endif

/* Warns when a status is dropped. C++ only: [[nodiscard]] can be silenced with
 * a (void) cast, GCC's warn_unused_result in C cannot. */
#if defined(__cplusplus) && __cplusplus >= 201703L
#define ARCHFIT_NODISCARD [[nodiscard]]
#else
#define ARCHFIT_NODISCARD
#endif

#ifdef __cplusplus
#define ARCHFIT_NOEXCEPT noexcept
extern "C" {
#else
#define ARCHFIT_NOEXCEPT
#endif

/* ---- status ---------------------------------------------------------------- */

typedef enum archfit_status {
  ARCHFIT_OK = 0,
  ARCHFIT_ERROR_INVALID_ARGUMENT = 1, /* a NULL handle, a bad index, a struct_size too small */
  ARCHFIT_ERROR_IO = 2,               /* a file could not be opened, mapped or read */
  ARCHFIT_ERROR_OUT_OF_MEMORY = 3,
  ARCHFIT_ERROR_UNSUPPORTED = 4, /* a struct or option this library does not know */
  ARCHFIT_ERROR_INTERNAL = 5     /* a bug in archfit: please report it with the message */
} archfit_status;

/* Static English text for a status code; never NULL. */
ARCHFIT_API const char* archfit_status_string(archfit_status status) ARCHFIT_NOEXCEPT;

/* The message of the last call on this thread that did not return ARCHFIT_OK,
 * or "" if there was none. Borrowed: valid until the next archfit call on this
 * thread. */
ARCHFIT_API const char* archfit_last_error(void) ARCHFIT_NOEXCEPT;

/* ---- version --------------------------------------------------------------- */

/* The library's version as MAJOR * 10000 + MINOR * 100 + PATCH. Compare its
 * major (value / 10000) with ARCHFIT_VERSION_MAJOR to detect a mismatched
 * library. */
ARCHFIT_API uint32_t archfit_version(void) ARCHFIT_NOEXCEPT;
/* "0.1.0"; static. */
ARCHFIT_API const char* archfit_version_string(void) ARCHFIT_NOEXCEPT;

/* ---- context --------------------------------------------------------------- */

typedef struct archfit_context archfit_context;

typedef struct archfit_context_options {
  uint32_t struct_size; /* sizeof(archfit_context_options) */
  uint32_t threads;     /* threads one scan may use; 0 = one per CPU */
  /* Added in 0.1 after threads: the CUDA driver library kernel modules load
   * through; NULL = "libcuda.so.1" from the loader's search path. */
  const char* libcuda;
} archfit_context_options;

/* options may be NULL for the defaults. */
ARCHFIT_NODISCARD ARCHFIT_API archfit_status archfit_context_create(
    const archfit_context_options* options, archfit_context** out_context) ARCHFIT_NOEXCEPT;
ARCHFIT_API void archfit_context_destroy(archfit_context* context) ARCHFIT_NOEXCEPT;

/* ---- scanning ---------------------------------------------------------------- */

typedef struct archfit_scan archfit_scan; /* the images found in one file or buffer */

typedef enum archfit_scan_flags {
  ARCHFIT_SCAN_DEFAULT = 0,
  /* Decompress each payload and check the PTX .version/.target lines and the
   * cubin's ELF header and notes against the entry header. */
  ARCHFIT_SCAN_DEEP = 1
} archfit_scan_flags;

typedef struct archfit_scan_options {
  uint32_t struct_size; /* sizeof(archfit_scan_options) */
  uint32_t flags;       /* archfit_scan_flags, or-ed */
} archfit_scan_options;

/* Scans a host ELF (library, executable, object), a cubin, a fatbin or a PTX
 * file. A file with no device code, or one that is malformed, still yields a
 * scan: malformed input is reported by archfit_scan_error, not as a failing
 * status. Fails only when the file cannot be opened or mapped.
 * options may be NULL for the defaults. */
ARCHFIT_NODISCARD ARCHFIT_API archfit_status archfit_scan_file_run(
    archfit_context* context, const char* path, const archfit_scan_options* options,
    archfit_scan** out_scan) ARCHFIT_NOEXCEPT;

/* As archfit_scan_file_run, over `size` bytes the caller owns; `name` (may be
 * NULL) labels the result. The bytes are not retained after the call. */
ARCHFIT_NODISCARD ARCHFIT_API archfit_status archfit_scan_buffer_run(
    archfit_context* context, const void* data, size_t size, const char* name,
    const archfit_scan_options* options, archfit_scan** out_scan) ARCHFIT_NOEXCEPT;

/* The names of the first release, kept: the same calls as
 * archfit_scan_file_run and archfit_scan_buffer_run (docs/c-abi.md, "Names"). */
ARCHFIT_NODISCARD ARCHFIT_API archfit_status
archfit_scan_file(archfit_context* context, const char* path, const archfit_scan_options* options,
                  archfit_scan** out_scan) ARCHFIT_NOEXCEPT;
ARCHFIT_NODISCARD ARCHFIT_API archfit_status
archfit_scan_buffer(archfit_context* context, const void* data, size_t size, const char* name,
                    const archfit_scan_options* options, archfit_scan** out_scan) ARCHFIT_NOEXCEPT;

ARCHFIT_API void archfit_scan_destroy(archfit_scan* scan) ARCHFIT_NOEXCEPT;

typedef enum archfit_file_format {
  ARCHFIT_FORMAT_OTHER = 0, /* no device code */
  ARCHFIT_FORMAT_ELF = 1,   /* host library, executable or object */
  ARCHFIT_FORMAT_CUBIN = 2,
  ARCHFIT_FORMAT_FATBIN = 3,
  ARCHFIT_FORMAT_PTX = 4,
  ARCHFIT_FORMAT_PE = 5 /* a Windows .dll, .pyd or .exe (PE32+) */
} archfit_file_format;

ARCHFIT_API archfit_file_format archfit_scan_format(const archfit_scan* scan) ARCHFIT_NOEXCEPT;
ARCHFIT_API size_t archfit_scan_image_count(const archfit_scan* scan) ARCHFIT_NOEXCEPT;
/* The first problem met while scanning ("at offset 0x1a40: …"), or NULL when
 * the input was well formed. Borrowed from the scan. */
ARCHFIT_API const char* archfit_scan_error(const archfit_scan* scan) ARCHFIT_NOEXCEPT;
ARCHFIT_API size_t archfit_scan_error_count(const archfit_scan* scan) ARCHFIT_NOEXCEPT;

typedef enum archfit_image_kind {
  ARCHFIT_IMAGE_UNKNOWN = 0,
  ARCHFIT_IMAGE_SASS = 1, /* a cubin for sm_XY */
  ARCHFIT_IMAGE_PTX = 2,  /* PTX for compute_XY, JIT-compiled by the driver */
  ARCHFIT_IMAGE_LTO = 3   /* LTO-IR, an input to device link-time optimisation */
} archfit_image_kind;

typedef enum archfit_variant {
  ARCHFIT_VARIANT_PLAIN = 0,
  ARCHFIT_VARIANT_ARCH_SPECIFIC = 1,  /* sm_XYa: runs on exactly XY */
  ARCHFIT_VARIANT_FAMILY_SPECIFIC = 2 /* sm_XYf: runs within XY's family */
} archfit_variant;

typedef enum archfit_compression {
  ARCHFIT_COMPRESSION_NONE = 0,
  ARCHFIT_COMPRESSION_LZ4 = 1,
  ARCHFIT_COMPRESSION_ZSTD = 2
} archfit_compression;

typedef struct archfit_image_info {
  uint32_t struct_size; /* set by the caller: sizeof(archfit_image_info) */
  archfit_image_kind kind;
  uint32_t sm; /* 90 for sm_90, compute_90 and lto_90 */
  archfit_variant variant;
  uint16_t ptx_isa_major; /* PTX images: the PTX ISA version, e.g. 9.0 */
  uint16_t ptx_isa_minor;
  uint32_t elf_abi; /* SASS images: 1 or 2 (cubin ELF ABI V1/V2); 0 unknown */
  archfit_compression compression;
  uint32_t relocatable;       /* 1: a device-link input (__nv_relfatbin, -rdc), not launchable */
  uint64_t size;              /* payload bytes as stored */
  uint64_t compressed_size;   /* 0 when not compressed */
  uint64_t uncompressed_size; /* 0 when not compressed */
  uint64_t offset;            /* file offset of the entry header */
  const char* section;        /* ".nv_fatbin", ".cask_resource", …; borrowed from the scan */
} archfit_image_info;

/* Fills `out` (whose struct_size the caller set) with image `index`. */
ARCHFIT_NODISCARD ARCHFIT_API archfit_status archfit_scan_image(
    const archfit_scan* scan, size_t index, archfit_image_info* out) ARCHFIT_NOEXCEPT;

/* The scan as an archfit.scan/1 JSON document (docs/scan-json.md). Borrowed:
 * lives as long as the scan. */
ARCHFIT_NODISCARD ARCHFIT_API archfit_status
archfit_scan_json(const archfit_scan* scan, const char** out_json) ARCHFIT_NOEXCEPT;

/* ---- checking an environment ------------------------------------------------ */

typedef struct archfit_report archfit_report; /* the result of one check */

typedef struct archfit_check_options {
  uint32_t struct_size; /* sizeof(archfit_check_options) */
  const char* gpu;      /* NULL: the real GPU; else "RTX 5090", "B200", "sm_120", "12.0" */
  const char* driver;   /* NULL: the real driver; else a release such as "570.86" */
  const char* const* site_packages; /* site-packages directories to check */
  size_t site_packages_count;
  const char* custom_nodes; /* NULL, or ComfyUI's custom_nodes directory */
  const char* const* paths; /* further files or directories */
  size_t paths_count;
  const char* kb_dir; /* NULL: ARCHFIT_KB_DIR, then the built-in knowledge base */
  /* Added in 0.1 after kb_dir: .whl files judged as they are, not installed. */
  const char* const* wheels;
  size_t wheels_count;
  /* Non-zero: ask the real driver to load one container of each binary on
   * each real GPU (cuModuleLoadData) and report where it disagrees. */
  int confirm;
  /* Added in 0.1 after confirm: non-zero loads the plugins the default search
   * finds (ARCHFIT_PLUGIN_PATH, then <prefix>/lib/archfit/plugins) and adds
   * their probes' facts (torch_probe: torch's compiled arch flags) to the
   * report's "probes". Zero loads none: a host that runs torch itself knows
   * more than a probe that loads a libtorch of its own. */
  int plugins;
  /* Added in 0.1 after plugins: non-zero keeps a scan index in the user
   * cache (ARCHFIT_CACHE_DIR, else $XDG_CACHE_HOME/archfit, else
   * ~/.cache/archfit) and reuses it, so a file unchanged since the last check
   * (same path, size, mtime, ctime and inode) is not read again. A host that
   * checks before every run (ComfyUI's Pre-flight) wants it. */
  int scan_index;
} archfit_check_options;

typedef enum archfit_overall_verdict {
  ARCHFIT_FITS = 0,   /* every component has an image the GPU runs */
  ARCHFIT_FAILS = 1,  /* something will fail: see the components */
  ARCHFIT_UNKNOWN = 2 /* no GPU to judge against */
} archfit_overall_verdict;

/* Runs probe, scan, judge and advise. Fails (ARCHFIT_ERROR_INVALID_ARGUMENT)
 * when archfit cannot run the check: an unknown GPU name (the message lists the
 * closest names), a malformed --driver, nothing to check, a site-packages,
 * custom_nodes folder or path that does not exist, an unreadable knowledge
 * base. A failing environment is a successful call whose report
 * says ARCHFIT_FAILS. */
ARCHFIT_NODISCARD ARCHFIT_API archfit_status
archfit_check_run(archfit_context* context, const archfit_check_options* options,
                  archfit_report** out_report) ARCHFIT_NOEXCEPT;
ARCHFIT_API void archfit_report_destroy(archfit_report* report) ARCHFIT_NOEXCEPT;

ARCHFIT_API archfit_overall_verdict archfit_report_verdict(const archfit_report* report)
    ARCHFIT_NOEXCEPT;
ARCHFIT_API size_t archfit_report_component_count(const archfit_report* report) ARCHFIT_NOEXCEPT;
/* Borrowed from the report. The verdict is one of "native", "ptx-jit",
 * "no-image", "ptx-too-new-for-driver", "relocatable-only", "no-device-code";
 * NULL for an index out of range. Components are ordered worst first. */
ARCHFIT_API const char* archfit_report_component_name(const archfit_report* report,
                                                      size_t index) ARCHFIT_NOEXCEPT;
ARCHFIT_API const char* archfit_report_component_verdict(const archfit_report* report,
                                                         size_t index) ARCHFIT_NOEXCEPT;
ARCHFIT_API const char* archfit_report_component_fix(const archfit_report* report,
                                                     size_t index) ARCHFIT_NOEXCEPT;
/* The report as an archfit.check/1 JSON document (docs/check-json.md);
 * borrowed: lives as long as the report. */
ARCHFIT_NODISCARD ARCHFIT_API archfit_status
archfit_report_json(const archfit_report* report, const char** out_json) ARCHFIT_NOEXCEPT;

/* Added in 0.1 after archfit_report_json. The verdict set grew with them:
 * "driver-too-old" (the driver is older than the build's CUDA major or the
 * GPU needs) and "wrong-platform" (built for another CPU) fail too.
 *
 * The check's answer in one line, borrowed: "fails: PyTorch 2.5.1+cu124 has
 * no image for GeForce RTX 5090 (sm_120); run: pip install torch==2.8.0".
 * "" for a NULL report. */
ARCHFIT_API const char* archfit_report_summary(const archfit_report* report) ARCHFIT_NOEXCEPT;
/* 1 when the component fails something a process loads on the normal path,
 * 0 when it does not (it runs, or only a feature's library or a copy nothing
 * loads fails), -1 for an index out of range. */
ARCHFIT_API int archfit_report_component_blocks(const archfit_report* report,
                                                size_t index) ARCHFIT_NOEXCEPT;
/* Stacks: what a user installs and moves as one (the PyTorch stack with its
 * nvidia-* wheels, any other package, a custom-node pack), each with one
 * verdict and one fix; failing first, PyTorch's first among them. Strings are
 * borrowed from the report; NULL (or -1) for an index out of range. */
ARCHFIT_API size_t archfit_report_stack_count(const archfit_report* report) ARCHFIT_NOEXCEPT;
ARCHFIT_API const char* archfit_report_stack_name(const archfit_report* report,
                                                  size_t index) ARCHFIT_NOEXCEPT;
ARCHFIT_API const char* archfit_report_stack_verdict(const archfit_report* report,
                                                     size_t index) ARCHFIT_NOEXCEPT;
ARCHFIT_API int archfit_report_stack_blocks(const archfit_report* report,
                                            size_t index) ARCHFIT_NOEXCEPT;
/* The fix in a sentence ("" when nothing needs changing), and its shell
 * commands in order, `command` from 0; NULL past the last. */
ARCHFIT_API const char* archfit_report_stack_fix(const archfit_report* report,
                                                 size_t index) ARCHFIT_NOEXCEPT;
ARCHFIT_API const char* archfit_report_stack_fix_command(const archfit_report* report, size_t index,
                                                         size_t command) ARCHFIT_NOEXCEPT;

/* Added in 0.1 after the stack accessors: the core's verdict table, the one
 * answer to "does this verdict fail" that every front end reads (the check
 * JSON carries the same table as "verdicts"). Verdicts are numbered from 0
 * to archfit_verdict_count() - 1, best first; the names are static.
 * archfit_verdict_blocks: 1 when a verdict fails on the device ("no-image",
 * "ptx-too-new-for-driver", "driver-too-old", "wrong-platform"), 0 when it
 * does not, -1 for a name this library does not know (or NULL).
 * archfit_verdict_warns: 1 for a verdict that runs but should be said
 * ("ptx-jit": the first run JIT-compiles), 0 otherwise, -1 as above. */
ARCHFIT_API size_t archfit_verdict_count(void) ARCHFIT_NOEXCEPT;
ARCHFIT_API const char* archfit_verdict_name(size_t index) ARCHFIT_NOEXCEPT;
ARCHFIT_API int archfit_verdict_blocks(const char* verdict) ARCHFIT_NOEXCEPT;
ARCHFIT_API int archfit_verdict_warns(const char* verdict) ARCHFIT_NOEXCEPT;

/* Added in 0.1 after the verdict table: the texts people read, as the
 * `archfit` command prints them (one renderer, sdk/src/render/, for the
 * command, this ABI and every host). Flags, or-ed: */
typedef enum archfit_text_flags {
  ARCHFIT_TEXT_DEFAULT = 0,
  ARCHFIT_TEXT_COLOR = 1,  /* ANSI colours, as the command on a terminal */
  ARCHFIT_TEXT_DETAILS = 2 /* a check's every component and library (check --details) */
} archfit_text_flags;

/* The report as `archfit check` prints it: the GPU and driver, each stack
 * failing first with its evidence and fix, the notes, the one-line answer;
 * lines end in '\n', paths are the bytes on disk. Borrowed: lives as long as
 * the report. A flag this library does not know fails with
 * ARCHFIT_ERROR_UNSUPPORTED. */
ARCHFIT_NODISCARD ARCHFIT_API archfit_status archfit_report_text(
    const archfit_report* report, uint32_t flags, const char** out_text) ARCHFIT_NOEXCEPT;

/* ---- diagnosing an error ----------------------------------------------------
 *
 * A CUDA failure's text (a message, a traceback, a whole ComfyUI or InvokeAI
 * log: its last error is taken) becomes its category, the component behind
 * it and the fix (docs/diagnosis-json.md). Optionally weighed against the
 * environment it came from: a finished check, a saved check's JSON, or a
 * check to run first. Diagnosing needs no GPU, no driver and no CUDA. */

typedef struct archfit_diagnosis archfit_diagnosis;

typedef struct archfit_diagnose_options {
  uint32_t struct_size; /* sizeof(archfit_diagnose_options) */
  /* The error: `text_size` bytes, any encoding (logs are not always UTF-8);
   * NUL bytes are allowed. NULL only with a size of 0. */
  const char* text;
  size_t text_size;
  /* A traceback given apart from the message, or NULL (size 0). */
  const char* traceback;
  size_t traceback_size;
  /* The cudaError_t / CUresult number when the caller has one (209: no
   * kernel image); 0 (success, so no error) when it has none. */
  int32_t cuda_error;
  /* The environment, at most one of: a finished check; an archfit.check/1
   * document (what `archfit check --json` prints, NUL-terminated); a check to
   * run first (with nothing to scan, it probes the GPU and driver only). */
  const archfit_report* report;
  const char* report_json;
  const archfit_check_options* check;
  const char* kb_dir; /* NULL: ARCHFIT_KB_DIR, then the built-in knowledge base */
} archfit_diagnose_options;

/* Succeeds for any text, recognised or not: archfit_diagnosis_info says
 * which. Fails (ARCHFIT_ERROR_INVALID_ARGUMENT) on a malformed call: a NULL
 * text with a size, more than one environment, a report_json that is not an
 * archfit.check/1 document (the message names the field), a check that
 * cannot run (an unknown GPU name), an unreadable knowledge base. */
ARCHFIT_NODISCARD ARCHFIT_API archfit_status
archfit_diagnose_run(archfit_context* context, const archfit_diagnose_options* options,
                     archfit_diagnosis** out_diagnosis) ARCHFIT_NOEXCEPT;
ARCHFIT_API void archfit_diagnosis_destroy(archfit_diagnosis* diagnosis) ARCHFIT_NOEXCEPT;

typedef struct archfit_diagnosis_info {
  uint32_t struct_size; /* set by the caller: sizeof(archfit_diagnosis_info) */
  int recognised;       /* non-zero when the category is not "not-recognised" */
  /* Strings are borrowed from the diagnosis and never NULL unless said. */
  const char* category;   /* "no-kernel-image", "driver-too-old", …, "not-recognised" */
  const char* confidence; /* "high", "medium" or "none" */
  const char* explanation;
  const char* sm; /* "sm_120": the GPU's arch, from the text or the environment; "" */
  /* The component that raised it; all four NULL when none is named. */
  const char* component_name;    /* "xformers", "ComfyUI-KJNodes" */
  const char* component_kind;    /* "distribution" or "custom_node" */
  const char* component_version; /* "0.0.28.post1"; "" when unknown */
  const char* component_path;    /* the traceback frame's file; "" when not from a frame */
  /* What the environment says of the cause: "confirms", "refutes" or
   * "inconclusive"; NULL when no environment was given. */
  const char* environment;
  size_t fix_count;      /* steps, in order: archfit_diagnosis_fix */
  size_t evidence_count; /* the environment's sentences: archfit_diagnosis_evidence */
} archfit_diagnosis_info;

ARCHFIT_NODISCARD ARCHFIT_API archfit_status archfit_diagnosis_get_info(
    const archfit_diagnosis* diagnosis, archfit_diagnosis_info* out_info) ARCHFIT_NOEXCEPT;
/* Borrowed; NULL for an index out of range. */
ARCHFIT_API const char* archfit_diagnosis_fix(const archfit_diagnosis* diagnosis,
                                              size_t index) ARCHFIT_NOEXCEPT;
/* "xformers 0.0.28.post1 has SASS up to sm_90 and no PTX; your GPU is sm_120 …".
 * Borrowed; NULL for an index out of range. */
ARCHFIT_API const char* archfit_diagnosis_evidence(const archfit_diagnosis* diagnosis,
                                                   size_t index) ARCHFIT_NOEXCEPT;
/* The diagnosis as an archfit.diagnosis/1 JSON document (UTF-8: bytes of the
 * input that are not are replaced); borrowed: lives as long as the diagnosis. */
ARCHFIT_NODISCARD ARCHFIT_API archfit_status
archfit_diagnosis_json(const archfit_diagnosis* diagnosis, const char** out_json) ARCHFIT_NOEXCEPT;
/* Added in 0.1 after archfit_diagnosis_json: the diagnosis as `archfit
 * explain` prints it (the headline, the category, the error's first line,
 * the component and why, what the environment says, the numbered fix, the
 * notes); archfit_text_flags, of which none changes it yet. Bytes of the
 * input are as they came (the error's first line may not be UTF-8).
 * Borrowed: lives as long as the diagnosis. A flag this library does not
 * know fails with ARCHFIT_ERROR_UNSUPPORTED. */
ARCHFIT_NODISCARD ARCHFIT_API archfit_status archfit_diagnosis_text(
    const archfit_diagnosis* diagnosis, uint32_t flags, const char** out_text) ARCHFIT_NOEXCEPT;

/* ---- kernel modules: prebuilt images, else NVRTC, through the cache -------
 *
 * An op registers its kernels once (archfit_module_create) and loads them per
 * device (archfit_loaded_module_create): a prebuilt SASS image that runs there; else
 * prebuilt PTX the driver JIT-compiles; else the CUDA source compiled by
 * NVRTC for the device's exact arch, through the kernel cache
 * (ARCHFIT_CACHE_DIR, docs/op-author-guide.md). Loading uses the device's
 * primary context, so it cooperates with PyTorch. An archfit_module may be
 * used from many threads at once: threads loading the same device wait for
 * one load (and at most one compile). A loaded module is unloaded once its
 * archfit_module and every archfit_loaded_module handle to it are destroyed. */

typedef struct archfit_module archfit_module;
typedef struct archfit_loaded_module archfit_loaded_module;

typedef struct archfit_module_desc {
  uint32_t struct_size;               /* sizeof(archfit_module_desc) */
  const char* name;                   /* for messages, e.g. "fastops.rmsnorm" */
  const char* source;                 /* CUDA C++; NULL: prebuilt images only */
  const char* source_name;            /* names the source in NVRTC's log; NULL: "kernel.cu" */
  const char* const* header_names;    /* #include names ... */
  const char* const* header_contents; /* ... and their text */
  size_t header_count;
  const char* const* options; /* NVRTC options (-D, -I, --std=c++17), not the arch */
  size_t option_count;
  /* extern "C" or mangled kernel names, or C++ name expressions such as
   * "rmsnorm<float>" that NVRTC instantiates. */
  const char* const* entry_points;
  size_t entry_point_count;
  const void* prebuilt; /* a fatbin, cubin or PTX image; NULL: none */
  size_t prebuilt_size;
} archfit_module_desc;

/* Copies everything it is given. Fails with ARCHFIT_ERROR_INVALID_ARGUMENT
 * when the module could never load (no source and no device code). */
ARCHFIT_NODISCARD ARCHFIT_API archfit_status
archfit_module_create(archfit_context* context, const archfit_module_desc* desc,
                      archfit_module** out_module) ARCHFIT_NOEXCEPT;
ARCHFIT_API void archfit_module_destroy(archfit_module* module) ARCHFIT_NOEXCEPT;

/* The module on device `ordinal` (as cuDeviceGet counts), loaded the first
 * time. Fails with ARCHFIT_ERROR_UNSUPPORTED when nothing can run there (the
 * message says what to install or ship), ARCHFIT_ERROR_IO when the driver or
 * NVRTC fails (with NVRTC's whole log). */
ARCHFIT_NODISCARD ARCHFIT_API archfit_status archfit_loaded_module_create(
    archfit_module* module, int ordinal, archfit_loaded_module** out_loaded) ARCHFIT_NOEXCEPT;
/* The first release's name for archfit_loaded_module_create, kept. */
ARCHFIT_NODISCARD ARCHFIT_API archfit_status archfit_module_load(
    archfit_module* module, int ordinal, archfit_loaded_module** out_loaded) ARCHFIT_NOEXCEPT;
ARCHFIT_API void archfit_loaded_module_destroy(archfit_loaded_module* loaded) ARCHFIT_NOEXCEPT;

/* A kernel (a CUfunction, as void*) by a name registered as an entry point. */
ARCHFIT_NODISCARD ARCHFIT_API archfit_status
archfit_loaded_module_function(const archfit_loaded_module* loaded, const char* entry_point,
                               void** out_function) ARCHFIT_NOEXCEPT;

typedef struct archfit_launch_config {
  uint32_t struct_size; /* sizeof(archfit_launch_config) */
  uint32_t grid[3];     /* 0 counts as 1 */
  uint32_t block[3];    /* 0 counts as 1 */
  uint32_t shared_bytes;
  void* stream; /* a CUstream or cudaStream_t; NULL: the default stream */
} archfit_launch_config;

/* cuLaunchKernel in the module's context; `parameters` as cuLaunchKernel
 * takes them (an array of pointers to each argument). */
ARCHFIT_NODISCARD ARCHFIT_API archfit_status archfit_loaded_module_launch(
    const archfit_loaded_module* loaded, void* function, const archfit_launch_config* config,
    void** parameters) ARCHFIT_NOEXCEPT;

typedef struct archfit_load_info {
  uint32_t struct_size; /* set by the caller: sizeof(archfit_load_info) */
  /* "prebuilt-sass", "driver-ptx-jit" or "nvrtc"; borrowed, as are the others */
  const char* path;
  const char* arch;   /* "sm_90", "compute_80", "sm_120" */
  const char* reason; /* why this path, in a sentence */
  const char* cache;  /* NVRTC: "memory", "primary", "readonly" or "built"; else "" */
  const char* device_name;
  double milliseconds; /* the load: selection, compile or cache, and the driver */
} archfit_load_info;

/* Which path the load took and why. Strings are borrowed from `loaded`. */
ARCHFIT_NODISCARD ARCHFIT_API archfit_status archfit_loaded_module_info(
    const archfit_loaded_module* loaded, archfit_load_info* out_info) ARCHFIT_NOEXCEPT;

/* ---- plugins ------------------------------------------------------------------
 *
 * Shared-library plugins (archfit_plugin.h, docs/plugins.md) found through
 * their manifests, loaded, asked what they offer, and unloaded again: a set
 * holds copies, so nothing in it depends on a plugin library staying loaded.
 * A plugin that cannot be used is listed as rejected, with its path and the
 * reason, and the others load on. */

typedef struct archfit_plugin_set archfit_plugin_set;

typedef struct archfit_plugin_search {
  uint32_t struct_size;     /* sizeof(archfit_plugin_search) */
  const char* const* paths; /* folders searched first, in order */
  size_t path_count;
  int skip_environment; /* non-zero: ignore ARCHFIT_PLUGIN_PATH */
  int skip_install_dir; /* non-zero: not <prefix>/lib/archfit/plugins */
} archfit_plugin_search;

/* search may be NULL: ARCHFIT_PLUGIN_PATH, then the install's plugin folder.
 * Bad plugins never fail the call; they are in the set's rejected list. */
ARCHFIT_NODISCARD ARCHFIT_API archfit_status
archfit_plugin_set_create(archfit_context* context, const archfit_plugin_search* search,
                          archfit_plugin_set** out_set) ARCHFIT_NOEXCEPT;
/* The first release's name for archfit_plugin_set_create, kept. */
ARCHFIT_NODISCARD ARCHFIT_API archfit_status
archfit_plugins_load(archfit_context* context, const archfit_plugin_search* search,
                     archfit_plugin_set** out_set) ARCHFIT_NOEXCEPT;
ARCHFIT_API void archfit_plugin_set_destroy(archfit_plugin_set* set) ARCHFIT_NOEXCEPT;

typedef struct archfit_plugin_entry {
  uint32_t struct_size; /* set by the caller: sizeof(archfit_plugin_entry) */
  const char* name;     /* borrowed from the set, as are the other strings */
  const char* version;
  const char* description;
  const char* manifest; /* the manifest's path */
  uint32_t abi;         /* the plugin ABI version negotiated */
  size_t module_count;
  const char* probe_json; /* its probe's JSON object; NULL when it has no probe */
  double milliseconds;    /* finding, loading, negotiating, copying, unloading */
} archfit_plugin_entry;

/* The loaded plugins, in the order found. */
ARCHFIT_API size_t archfit_plugin_set_count(const archfit_plugin_set* set) ARCHFIT_NOEXCEPT;
ARCHFIT_NODISCARD ARCHFIT_API archfit_status archfit_plugin_set_get(
    const archfit_plugin_set* set, size_t index, archfit_plugin_entry* out_entry) ARCHFIT_NOEXCEPT;
/* The name of module `module_index` of plugin `index` ("imagegen_ops.rmsnorm");
 * borrowed; NULL for an index out of range. */
ARCHFIT_API const char* archfit_plugin_set_module_name(const archfit_plugin_set* set, size_t index,
                                                       size_t module_index) ARCHFIT_NOEXCEPT;
/* A kernel module (as archfit_module_create makes) from the module of that
 * name a loaded plugin offers (the first, in the order found); when none
 * does, ARCHFIT_ERROR_INVALID_ARGUMENT, with the modules that are offered in
 * archfit_last_error(). */
ARCHFIT_NODISCARD ARCHFIT_API archfit_status archfit_plugin_set_module_create(
    archfit_context* context, const archfit_plugin_set* set, const char* module_name,
    archfit_module** out_module) ARCHFIT_NOEXCEPT;

/* The rejected plugins: each one's path and the reason, borrowed; NULL for an
 * index out of range. */
ARCHFIT_API size_t archfit_plugin_set_rejected_count(const archfit_plugin_set* set)
    ARCHFIT_NOEXCEPT;
ARCHFIT_API const char* archfit_plugin_set_rejected_path(const archfit_plugin_set* set,
                                                         size_t index) ARCHFIT_NOEXCEPT;
ARCHFIT_API const char* archfit_plugin_set_rejected_reason(const archfit_plugin_set* set,
                                                           size_t index) ARCHFIT_NOEXCEPT;
/* {searched, loaded, rejected}, as `archfit plugins list --json` prints it;
 * borrowed: lives as long as the set. */
ARCHFIT_NODISCARD ARCHFIT_API archfit_status
archfit_plugin_set_json(const archfit_plugin_set* set, const char** out_json) ARCHFIT_NOEXCEPT;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* ARCHFIT_ARCHFIT_H */
