#pragma once
// What archfit says about a binary, or a component made of binaries, on one
// device. The names are fixed by the archfit.check/1 JSON document.
#include <optional>
#include <span>
#include <string_view>

namespace archfit::compat {

enum class Verdict {
  native,                  // a SASS image runs on the device
  ptx_jit,                 // no SASS, but PTX the driver JIT-compiles: works, first run is slow
  no_image,                // nothing here can run on the device
  ptx_too_new_for_driver,  // PTX would run, but the driver does not know its ISA version
  relocatable_only,        // only device-link inputs, which are never launched
  no_device_code,          // no CUDA device code at all
  // Added with stacks (the images may fit, the driver does not): the driver is
  // older than the CUDA major's minor-version floor the code was built for, or
  // older than the first driver that knows the GPU's architecture.
  driver_too_old,
  // Built for another CPU (x86_64 libraries on an aarch64 Jetson): the loader
  // refuses it before any image is looked at.
  wrong_platform,
  // There is device code, but no GPU to judge it against.
  unknown,
  // A framework built without CUDA (torch/version.py: cuda = None; PyPI's
  // torch for Windows, or a +cpu build): it never uses the NVIDIA GPU, and
  // ComfyUI stops with "Torch not compiled with CUDA enabled" (issue 33).
  no_cuda_build,
  // A library its binaries link is neither in the environment nor where the
  // loader looks ("libcudart.so.12: cannot open shared object file"): the
  // import fails before any image is looked at (issue 36).
  missing_library,
};

// The one verdict table: what each verdict is called and whether it fails.
// Every front end reads `blocks` and `warns` from here — the check JSON's
// per-item fields and its `verdicts` table, archfit_verdict_blocks() in the
// C ABI — and keeps no list of its own.
struct VerdictFacts {
  Verdict verdict;
  std::string_view name;     // "no-image"
  bool blocks;               // the code fails on the device
  bool warns;                // it runs, but the user should hear about it
  bool runs;                 // it runs on the device (natively, or JIT-compiled by the driver)
  std::string_view meaning;  // one sentence, for the JSON table and docs
};
// Every verdict once, best first (the badness order below).
std::span<const VerdictFacts> verdict_table();

std::string_view to_string(Verdict verdict);  // "native", "ptx-jit", …
std::optional<Verdict> verdict_from_string(std::string_view name);

// The code will fail on the device: no-image, ptx-too-new-for-driver,
// driver-too-old, no-cuda-build, missing-library and wrong-platform (the
// table's `blocks`).
bool is_failure(Verdict verdict);
// It works, but the user should hear about it: ptx-jit (the table's `warns`).
bool is_warning(Verdict verdict);
// It runs on the device: native SASS, or PTX the driver JIT-compiles (the
// table's `runs`).
bool runs(Verdict verdict);

// Worst first: wrong-platform, missing-library, no-cuda-build, no-image,
// driver-too-old, ptx-too-new-for-driver, ptx-jit, native, relocatable-only,
// no-device-code. Code for another CPU is worst because nothing about the
// GPU or driver helps; code that does not load comes next, whatever its
// images; a build without CUDA uses no GPU at all; no image is worse than the driver problems
// because a driver update fixes only those. Binaries that launch nothing (no device code, only
// device-link inputs) rank last so that they never drag a component down.
int badness(Verdict verdict);  // larger is worse

// Whether `a` is worse than `b` (verdict_table's order); the worse of the
// two, `a` on a tie.
bool worse(Verdict a, Verdict b);
Verdict worse_of(Verdict a, Verdict b);

// A component's verdict: its worst binary's. No binaries: no-device-code.
Verdict worst_of(std::span<const Verdict> verdicts);

}  // namespace archfit::compat
