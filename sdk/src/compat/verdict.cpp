#include "verdict.hpp"

#include <array>
#include <utility>

namespace archfit::compat {

namespace {

// In badness order, best first; worst_of and badness both read it.
constexpr std::array<VerdictFacts, 11> kVerdicts = {{
    // verdict, name, blocks, warns, runs, meaning
    {Verdict::unknown, "unknown", false, false, false,
     "there is device code, but no GPU to judge it against"},
    {Verdict::no_device_code, "no-device-code", false, false, false, "no CUDA device code at all"},
    {Verdict::relocatable_only, "relocatable-only", false, false, false,
     "only device-link inputs, which are never launched"},
    {Verdict::native, "native", false, false, true, "a SASS image runs on the device"},
    {Verdict::ptx_jit, "ptx-jit", false, true, true,
     "no SASS for the device, but PTX the driver JIT-compiles: it runs, the first run is slow"},
    {Verdict::ptx_too_new_for_driver, "ptx-too-new-for-driver", true, false, false,
     "PTX would run, but the driver does not know its ISA version"},
    {Verdict::driver_too_old, "driver-too-old", true, false, false,
     "the driver is older than the build's CUDA major or the GPU needs"},
    {Verdict::no_image, "no-image", true, false, false, "nothing here can run on the device"},
    {Verdict::no_cuda_build, "no-cuda-build", true, false, false,
     "a framework built without CUDA (CPU-only or ROCm): it never uses the NVIDIA GPU"},
    {Verdict::missing_library, "missing-library", true, false, false,
     "a library it links is neither in the environment nor where the loader looks: it does not "
     "load at all"},
    {Verdict::wrong_platform, "wrong-platform", true, false, false,
     "built for another CPU: the loader refuses it"},
}};

const VerdictFacts& facts_of(Verdict verdict) {
  for (const auto& facts : kVerdicts) {
    if (facts.verdict == verdict) return facts;
  }
  return kVerdicts.front();  // unreachable: every enumerator is in the table
}

}  // namespace

std::span<const VerdictFacts> verdict_table() { return kVerdicts; }

std::string_view to_string(Verdict verdict) { return facts_of(verdict).name; }

std::optional<Verdict> verdict_from_string(std::string_view name) {
  for (const auto& facts : kVerdicts) {
    if (facts.name == name) return facts.verdict;
  }
  return std::nullopt;
}

bool is_failure(Verdict verdict) { return facts_of(verdict).blocks; }

bool is_warning(Verdict verdict) { return facts_of(verdict).warns; }

bool runs(Verdict verdict) { return facts_of(verdict).runs; }

int badness(Verdict verdict) {
  for (std::size_t i = 0; i < kVerdicts.size(); ++i) {
    if (kVerdicts[i].verdict == verdict) return static_cast<int>(i);
  }
  return 0;
}
bool worse(Verdict a, Verdict b) { return badness(a) > badness(b); }

Verdict worse_of(Verdict a, Verdict b) { return worse(b, a) ? b : a; }

Verdict worst_of(std::span<const Verdict> verdicts) {
  Verdict worst = Verdict::no_device_code;
  for (const Verdict verdict : verdicts) worst = worse_of(worst, verdict);
  return worst;
}

}  // namespace archfit::compat
