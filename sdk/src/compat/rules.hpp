#pragma once
// The rule table: can this image run on this device, and what does that make
// of a whole binary. Scan, check, diagnose and JIT selection all ask here
// (docs/design.md, decision 3); nothing else restates a rule.
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "arch.hpp"
#include "binary/image.hpp"
#include "verdict.hpp"

namespace archfit::compat {

// What the judge knows of the driver. Which PTX ISA a driver release
// JIT-compiles is knowledge-base data; without it archfit assumes a driver
// new enough, and every verdict that rests on that says so.
struct Driver {
  std::string version;                         // "570.86.16", for messages; empty when unknown
  std::optional<binary::Version> max_ptx_isa;  // nullopt: unknown, assumed new enough
};

// SASS runs on the same major with an equal or higher minor; an `a` image
// only on exactly its capability; an `f` image within its family, at its
// capability or above.
bool sass_runs_on(const Arch& image, ComputeCapability device);
// The driver JIT-compiles plain PTX for any capability at or above its
// target, of any major; `a` and `f` PTX keep the SASS limits.
bool ptx_jits_for(const Arch& image, ComputeCapability device);
// nullopt when the driver's limit is unknown.
std::optional<bool> driver_knows_ptx_isa(const Driver& driver, binary::Version isa);
// Where an image of this kind and arch can run, in words:
// "sm_86 SASS runs only on 8.x devices at 8.6 or above".
std::string where_it_runs(binary::ImageKind kind, const Arch& arch);

enum class ImageFit {
  runs,          // SASS the device runs
  jit,           // PTX the driver JIT-compiles for the device
  ptx_too_new,   // PTX for the device, of an ISA version the driver does not know
  wrong_arch,    // built for capabilities that exclude the device
  link_input,    // relocatable SASS/PTX or LTO-IR: consumed by a device link, never launched
  unrecognised,  // an entry kind (or SM number) archfit cannot judge
};
std::string_view to_string(ImageFit fit);

ImageFit judge_image(const binary::Image& image, ComputeCapability device, const Driver& driver);

struct BinaryJudgement {
  Verdict verdict = Verdict::no_device_code;
  // The image the runtime would load: SASS before PTX, then the highest
  // capability, then the most specific variant. Also set for
  // ptx-too-new-for-driver (the PTX that would have run).
  std::optional<std::size_t> chosen;  // index into FileScan::images
  std::string chosen_arch;            // "sm_90", "compute_90a"; empty when none
  std::vector<std::string> sass;      // distinct launchable SASS archs, ascending
  std::vector<std::string> ptx;       // distinct launchable PTX archs, ascending
  // "SASS sm_80 sm_86 sm_90, no PTX; device is sm_120 (12.0)"
  std::string evidence;
  // Why, in a sentence or two, and what it means for the user.
  std::string explanation;
  // The verdict assumed a driver that knows the PTX's ISA version.
  bool assumes_driver = false;
  // The scan met problems, so images may be missing from the judgement.
  bool scan_incomplete = false;
};

BinaryJudgement judge_binary(const binary::FileScan& scan, ComputeCapability device,
                             const Driver& driver = {});

// Where a host binary is to run: the CPU it was built for and the one of
// the machine the device sits in, as ELF names them ("x86_64", "aarch64");
// empty when not known (a cubin, fatbin or PTX file has no CPU).
struct Placement {
  std::string_view binary_machine;
  std::string_view device_machine;
  std::string_view device_name;  // for the evidence: "RTX 5090"
};

// judge_binary, but first the wrong-platform rule: a host library built for
// another CPU than the device's machine never loads, whatever its images.
BinaryJudgement judge_binary(const binary::FileScan& scan, ComputeCapability device,
                             const Driver& driver, const Placement& placement);

// A list of compile targets, as build systems and torch's arch flags name
// them ("sm_86" SASS, "compute_90" PTX), judged as a binary carrying exactly
// those images would be: native, ptx-jit, or no-image; no-device-code for an
// empty list. Names it cannot read are skipped.
Verdict judge_arch_list(std::span<const std::string> targets, ComputeCapability device);

// The binary whose verdict is the component's (worst_of); the first of
// equals. nullopt when there are none.
std::optional<std::size_t> worst_binary(std::span<const BinaryJudgement> binaries);

}  // namespace archfit::compat
