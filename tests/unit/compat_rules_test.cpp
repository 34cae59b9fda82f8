#include "compat/rules.hpp"

#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <vector>

#include "compat/arch.hpp"
#include "compat/torch_check.hpp"

namespace archfit::compat {
// Names, not bytes, in failure messages.
void PrintTo(ImageFit fit, std::ostream* out) { *out << to_string(fit); }
void PrintTo(Verdict verdict, std::ostream* out) { *out << to_string(verdict); }
}  // namespace archfit::compat

namespace {

using archfit::binary::FileScan;
using archfit::binary::Image;
using archfit::binary::ImageKind;
using archfit::binary::Variant;
using archfit::binary::Version;
using archfit::compat::Arch;
using archfit::compat::ComputeCapability;
using archfit::compat::Driver;
using archfit::compat::ImageFit;
using archfit::compat::judge_binary;
using archfit::compat::judge_image;
using archfit::compat::parse_arch;
using archfit::compat::ptx_jits_for;
using archfit::compat::sass_runs_on;
using archfit::compat::Verdict;

ComputeCapability device(const char* name) {
  return archfit::compat::parse_compute_capability(name);
}

bool sass(const char* image, const char* on) { return sass_runs_on(parse_arch(image), device(on)); }
bool ptx(const char* image, const char* on) { return ptx_jits_for(parse_arch(image), device(on)); }

// An image as the scanner reports it, from "sm_90a", "compute_90" or "lto_90".
Image image(const std::string& name, Version isa = {9, 0}, bool relocatable = false) {
  Image out;
  std::string arch = name;
  if (name.starts_with("lto_")) {
    out.kind = ImageKind::lto;
    out.kind_code = 8;
    arch = name.substr(4);
  } else if (name.starts_with("compute_")) {
    out.kind = ImageKind::ptx;
    out.kind_code = 1;
    out.ptx_isa = isa;
  } else {
    out.kind = ImageKind::sass;
    out.kind_code = 2;
  }
  const Arch parsed = parse_arch(arch);
  out.sm = parsed.cc.sm();
  out.variant = parsed.variant;
  out.relocatable = relocatable || out.kind == ImageKind::lto;
  return out;
}

FileScan scan_of(std::vector<Image> images) {
  FileScan scan;
  scan.path = "lib/_C.so";
  scan.images = std::move(images);
  return scan;
}

Driver driver_knowing(Version isa, std::string version = "570.86.16") {
  return {std::move(version), isa};
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// --- SASS -------------------------------------------------------------------

TEST(CompatSass, RunsOnTheSameMajorWithAnEqualOrHigherMinor) {
  // Blackwell compatibility guide: an 8.0 cubin runs on 8.6, not the reverse.
  EXPECT_TRUE(sass("sm_80", "8.0"));
  EXPECT_TRUE(sass("sm_80", "8.6"));
  EXPECT_TRUE(sass("sm_80", "8.9"));
  EXPECT_FALSE(sass("sm_86", "8.0"));
  EXPECT_TRUE(sass("sm_120", "12.1"));
  EXPECT_FALSE(sass("sm_121", "12.0"));
  EXPECT_TRUE(sass("sm_100", "10.3"));
}

TEST(CompatSass, NeverRunsOnAnotherMajor) {
  // Same guide: 8.x cubins do not run on 9.0.
  EXPECT_FALSE(sass("sm_80", "9.0"));
  EXPECT_FALSE(sass("sm_89", "9.0"));
  EXPECT_FALSE(sass("sm_90", "10.0"));
  EXPECT_FALSE(sass("sm_100", "11.0"));
  EXPECT_FALSE(sass("sm_103", "12.0"));
  EXPECT_FALSE(sass("sm_90", "12.0"));
  EXPECT_FALSE(sass("sm_120", "10.0"));  // 120 > 100 as integers, but 12.0 is not 10.x
}

TEST(CompatSass, ArchSpecificRunsOnlyOnItsExactCapability) {
  EXPECT_TRUE(sass("sm_90a", "9.0"));
  EXPECT_TRUE(sass("sm_100a", "10.0"));
  EXPECT_FALSE(sass("sm_100a", "10.3"));
  // DGX Spark (12.1) runs sm_120 and sm_120f, not sm_120a (docs/cuda-binaries.md).
  EXPECT_TRUE(sass("sm_120", "12.1"));
  EXPECT_TRUE(sass("sm_120f", "12.1"));
  EXPECT_FALSE(sass("sm_120a", "12.1"));
}

TEST(CompatSass, FamilySpecificRunsWithinItsFamilyAtOrAboveItsCapability) {
  // ptxas 13.0 accepts compute_100f for sm_100 and sm_103 only, and
  // compute_120f for 120 and 121; f SASS is taken to follow the same families.
  EXPECT_TRUE(sass("sm_100f", "10.0"));
  EXPECT_TRUE(sass("sm_100f", "10.3"));
  EXPECT_FALSE(sass("sm_100f", "11.0"));
  EXPECT_FALSE(sass("sm_100f", "12.0"));
  EXPECT_FALSE(sass("sm_103f", "10.0"));
  EXPECT_TRUE(sass("sm_110f", "11.0"));
  EXPECT_FALSE(sass("sm_110f", "12.0"));
  EXPECT_TRUE(sass("sm_120f", "12.0"));
  EXPECT_FALSE(sass("sm_121f", "12.0"));
}

// --- PTX --------------------------------------------------------------------

TEST(CompatPtx, PlainPtxJitsForAnyCapabilityAtOrAboveItsTargetOfAnyMajor) {
  // ptxas 13.0 accepts plain compute_90 for every sm ≥ 90, 110 and 12x included.
  for (const char* on : {"9.0", "10.0", "10.3", "11.0", "12.0", "12.1"}) {
    EXPECT_TRUE(ptx("compute_90", on)) << on;
  }
  EXPECT_FALSE(ptx("compute_90", "8.9"));
  EXPECT_TRUE(ptx("compute_100", "12.0"));
  EXPECT_TRUE(ptx("compute_75", "8.0"));
  EXPECT_FALSE(ptx("compute_120", "10.3"));
  EXPECT_FALSE(ptx("compute_86", "8.0"));
}

TEST(CompatPtx, ArchSpecificPtxJitsOnlyForItsExactCapability) {
  // ptxas 13.0 accepts compute_XXa only for sm_XXa.
  EXPECT_TRUE(ptx("compute_90a", "9.0"));
  EXPECT_FALSE(ptx("compute_90a", "10.0"));
  EXPECT_TRUE(ptx("compute_100a", "10.0"));
  EXPECT_FALSE(ptx("compute_100a", "10.3"));
  EXPECT_FALSE(ptx("compute_120a", "12.1"));
}

TEST(CompatPtx, FamilyPtxJitsWhereptxas13AcceptsIt) {
  // ptxas 13.0 accepts compute_100f PTX for sm_100 and sm_103 only.
  EXPECT_TRUE(ptx("compute_100f", "10.0"));
  EXPECT_TRUE(ptx("compute_100f", "10.3"));
  EXPECT_FALSE(ptx("compute_100f", "11.0"));
  EXPECT_FALSE(ptx("compute_100f", "12.0"));
  EXPECT_FALSE(ptx("compute_100f", "12.1"));
  // compute_103f: 103 only; compute_110f: 110 only.
  EXPECT_FALSE(ptx("compute_103f", "10.0"));
  EXPECT_TRUE(ptx("compute_103f", "10.3"));
  EXPECT_TRUE(ptx("compute_110f", "11.0"));
  EXPECT_FALSE(ptx("compute_110f", "12.0"));
  // compute_120f: 120 and 121; compute_121f: 121 only.
  EXPECT_TRUE(ptx("compute_120f", "12.0"));
  EXPECT_TRUE(ptx("compute_120f", "12.1"));
  EXPECT_FALSE(ptx("compute_121f", "12.0"));
}

TEST(CompatPtx, DriverMustKnowThePtxIsaVersion) {
  // cudaErrorUnsupportedPtxVersion (222): "PTX was generated by a compiler
  // newer than what is supported by the CUDA driver".
  const Image ptx90 = image("compute_90", {9, 0});
  EXPECT_EQ(judge_image(ptx90, device("12.0"), driver_knowing({8, 7})), ImageFit::ptx_too_new);
  EXPECT_EQ(judge_image(ptx90, device("12.0"), driver_knowing({9, 0})), ImageFit::jit);
  EXPECT_EQ(judge_image(ptx90, device("12.0"), driver_knowing({9, 1})), ImageFit::jit);
  // ISA versions compare as numbers: 8.10 is newer than 8.9.
  EXPECT_EQ(judge_image(image("compute_90", {8, 10}), device("12.0"), driver_knowing({8, 9})),
            ImageFit::ptx_too_new);
  // The ISA check never rescues PTX built for the wrong arch.
  EXPECT_EQ(judge_image(ptx90, device("8.9"), driver_knowing({9, 1})), ImageFit::wrong_arch);
}

TEST(CompatPtx, UnknownDriverIsAssumedToKnowTheIsa) {
  EXPECT_EQ(judge_image(image("compute_90", {9, 1}), device("12.0"), Driver{}), ImageFit::jit);
  EXPECT_FALSE(archfit::compat::driver_knows_ptx_isa(Driver{}, {9, 1}));
  EXPECT_EQ(archfit::compat::driver_knows_ptx_isa(driver_knowing({8, 7}), {8, 7}), true);
  EXPECT_EQ(archfit::compat::driver_knows_ptx_isa(driver_knowing({8, 7}), {8, 8}), false);
}

// --- Images that never run ----------------------------------------------------

TEST(CompatImage, RelocatableImagesAreDeviceLinkInputsNeverLaunched) {
  // -rdc cubins (ET_REL, __nv_relfatbin) match the device but are not loadable.
  EXPECT_EQ(judge_image(image("sm_80", {}, /*relocatable=*/true), device("8.0"), {}),
            ImageFit::link_input);
  EXPECT_EQ(judge_image(image("compute_80", {8, 0}, /*relocatable=*/true), device("8.0"), {}),
            ImageFit::link_input);
}

TEST(CompatImage, LtoIrNeverRuns) {
  Image lto = image("lto_90");
  lto.relocatable = false;  // even if a reader forgot to mark it
  EXPECT_EQ(judge_image(lto, device("9.0"), {}), ImageFit::link_input);
}

TEST(CompatImage, UnknownKindsAndImpossibleSmNumbersAreNotJudged) {
  Image unknown = image("sm_90");
  unknown.kind = ImageKind::unknown;
  unknown.kind_code = 16;
  EXPECT_EQ(judge_image(unknown, device("9.0"), {}), ImageFit::unrecognised);
  Image garbage = image("compute_90");
  garbage.sm = 0;  // would otherwise "JIT" everywhere as compute_0
  EXPECT_EQ(judge_image(garbage, device("9.0"), {}), ImageFit::unrecognised);
}

TEST(CompatImage, SaysWhereAnImageRunsInWords) {
  EXPECT_EQ(archfit::compat::where_it_runs(ImageKind::sass, parse_arch("sm_86")),
            "sm_86 SASS runs only on 8.x devices at 8.6 or above");
  EXPECT_EQ(archfit::compat::where_it_runs(ImageKind::sass, parse_arch("sm_120a")),
            "sm_120a SASS runs only on exactly 12.0");
  EXPECT_EQ(archfit::compat::where_it_runs(ImageKind::ptx, parse_arch("compute_103f")),
            "compute_103f PTX runs only on the 10.x family at 10.3 or above");
  EXPECT_EQ(archfit::compat::where_it_runs(ImageKind::ptx, parse_arch("compute_90")),
            "compute_90 PTX runs only on devices at 9.0 or above");
}

// --- Binaries ---------------------------------------------------------------

TEST(CompatBinary, NativeWhenASassImageRunsNamingTheImageChosen) {
  const FileScan scan = scan_of({image("sm_80"), image("sm_86"), image("sm_90")});
  const auto judgement = judge_binary(scan, device("8.9"));
  EXPECT_EQ(judgement.verdict, Verdict::native);
  ASSERT_TRUE(judgement.chosen);
  EXPECT_EQ(*judgement.chosen, 1u);
  EXPECT_EQ(judgement.chosen_arch, "sm_86");
  EXPECT_EQ(judgement.evidence, "SASS sm_80 sm_86 sm_90, no PTX; device is sm_89 (8.9)");
  EXPECT_EQ(judgement.sass, (std::vector<std::string>{"sm_80", "sm_86", "sm_90"}));
  EXPECT_TRUE(judgement.ptx.empty());
  EXPECT_FALSE(judgement.assumes_driver);
}

TEST(CompatBinary, RuntimePrefersSassOverPtx) {
  const FileScan scan = scan_of({image("compute_90", {8, 4}), image("sm_90")});
  const auto judgement = judge_binary(scan, device("9.0"), driver_knowing({8, 7}));
  EXPECT_EQ(judgement.verdict, Verdict::native);
  EXPECT_EQ(judgement.chosen_arch, "sm_90");
}

TEST(CompatBinary, PrefersTheImageBuiltMostNarrowlyForTheDevice) {
  const FileScan scan = scan_of({image("sm_90a"), image("sm_90"), image("sm_80")});
  EXPECT_EQ(judge_binary(scan, device("9.0")).chosen_arch, "sm_90a");
}

TEST(CompatBinary, PtxJitExplainsTheSlowFirstRunAndTheCache) {
  const FileScan scan = scan_of({image("sm_80"), image("sm_86"), image("compute_90", {8, 4})});
  const auto judgement = judge_binary(scan, device("12.0"), driver_knowing({8, 7}));
  EXPECT_EQ(judgement.verdict, Verdict::ptx_jit);
  EXPECT_EQ(judgement.chosen_arch, "compute_90");
  EXPECT_EQ(judgement.evidence,
            "SASS sm_80 sm_86, PTX compute_90 (ISA 8.4); device is sm_120 (12.0); "
            "driver 570.86.16 knows PTX ISA up to 8.7");
  EXPECT_EQ(judgement.ptx, (std::vector<std::string>{"compute_90"}));
  for (const char* part :
       {"first run compiles", "minutes", "~/.nv/ComputeCache", "%APPDATA%\\NVIDIA\\ComputeCache",
        "CUDA_CACHE_PATH", "CUDA_CACHE_MAXSIZE"}) {
    EXPECT_TRUE(contains(judgement.explanation, part)) << part << " in " << judgement.explanation;
  }
  EXPECT_FALSE(judgement.assumes_driver);
}

TEST(CompatBinary, PtxJitWithAnUnknownDriverSaysItAssumesANewEnoughOne) {
  const FileScan scan = scan_of({image("compute_90", {9, 0})});
  const auto judgement = judge_binary(scan, device("12.0"));
  EXPECT_EQ(judgement.verdict, Verdict::ptx_jit);
  EXPECT_TRUE(judgement.assumes_driver);
  EXPECT_TRUE(contains(judgement.explanation, "assumes the driver knows PTX ISA 9.0"))
      << judgement.explanation;
}

TEST(CompatBinary, PicksTheNewestPtxTheDeviceCanJit) {
  const FileScan scan = scan_of(
      {image("compute_75", {8, 4}), image("compute_90", {8, 4}), image("compute_120", {8, 4})});
  EXPECT_EQ(judge_binary(scan, device("10.0")).chosen_arch, "compute_90");
}

TEST(CompatBinary, NoImageNamesWhatIsThereAndWhyNoneRuns) {
  // The RTX 5090 report: a torch 2.6 style build with SASS up to sm_90 and no PTX.
  const FileScan scan = scan_of({image("sm_80"), image("sm_86"), image("sm_90")});
  const auto judgement = judge_binary(scan, device("12.0"));
  EXPECT_EQ(judgement.verdict, Verdict::no_image);
  EXPECT_FALSE(judgement.chosen);
  EXPECT_EQ(judgement.evidence, "SASS sm_80 sm_86 sm_90, no PTX; device is sm_120 (12.0)");
  EXPECT_TRUE(
      contains(judgement.explanation, "sm_90 SASS runs only on 9.x devices at 9.0 or above"))
      << judgement.explanation;
  EXPECT_TRUE(contains(judgement.explanation, "no PTX")) << judgement.explanation;
}

TEST(CompatBinary, NoImageWhenOnlyPtxForANewerDeviceExists) {
  const FileScan scan = scan_of({image("sm_80"), image("compute_90", {8, 4})});
  const auto judgement = judge_binary(scan, device("8.6"));
  EXPECT_EQ(judgement.verdict, Verdict::native);  // sm_80 runs on 8.6
  EXPECT_EQ(judge_binary(scan, device("7.5")).verdict, Verdict::no_image);
  EXPECT_TRUE(contains(judge_binary(scan, device("7.5")).explanation,
                       "compute_90 PTX runs only on devices at 9.0 or above"));
}

TEST(CompatBinary, DescribesEachArchOnceAmongThousandsOfImages) {
  std::vector<Image> images;
  for (int i = 0; i < 2000; ++i) images.push_back(image(i % 2 ? "sm_90" : "sm_80"));
  images.push_back(image("compute_90", {7, 8}));
  images.push_back(image("compute_90", {8, 4}));
  const auto judgement = judge_binary(scan_of(std::move(images)), device("9.0"));
  EXPECT_EQ(judgement.evidence,
            "SASS sm_80 sm_90, PTX compute_90 (ISA 7.8, 8.4); device is sm_90 (9.0)");
}

TEST(CompatBinary, PtxTooNewForDriverWhenOnlyUnknownIsaPtxWouldRun) {
  const FileScan scan = scan_of({image("sm_90"), image("compute_120", {8, 8})});
  const auto judgement = judge_binary(scan, device("12.0"), driver_knowing({8, 7}));
  EXPECT_EQ(judgement.verdict, Verdict::ptx_too_new_for_driver);
  EXPECT_EQ(judgement.chosen_arch, "compute_120");
  EXPECT_TRUE(contains(judgement.explanation, "ISA 8.8")) << judgement.explanation;
  EXPECT_TRUE(contains(judgement.explanation, "up to ISA 8.7")) << judgement.explanation;
  EXPECT_TRUE(contains(judgement.explanation, "newer driver")) << judgement.explanation;
  // The same binary with a driver that knows ISA 8.8 is JIT-compiled.
  EXPECT_EQ(judge_binary(scan, device("12.0"), driver_knowing({8, 8})).verdict, Verdict::ptx_jit);
}

TEST(CompatBinary, OlderPtxTheDriverKnowsBeatsNewerPtxItDoesNot) {
  const FileScan scan = scan_of({image("compute_90", {8, 4}), image("compute_120", {8, 8})});
  const auto judgement = judge_binary(scan, device("12.0"), driver_knowing({8, 7}));
  EXPECT_EQ(judgement.verdict, Verdict::ptx_jit);
  EXPECT_EQ(judgement.chosen_arch, "compute_90");
}

TEST(CompatBinary, RelocatableOnlyWhenEveryImageIsADeviceLinkInput) {
  // libnccl's __nv_relfatbin: ET_REL cubins for the very device still never launch.
  const FileScan scan = scan_of({image("sm_120", {}, true), image("lto_90")});
  const auto judgement = judge_binary(scan, device("12.0"));
  EXPECT_EQ(judgement.verdict, Verdict::relocatable_only);
  EXPECT_FALSE(judgement.chosen);
  EXPECT_TRUE(judgement.sass.empty());
  EXPECT_EQ(judgement.evidence,
            "no SASS, no PTX, device-link inputs lto_90 sm_120; device is sm_120 (12.0)");
}

TEST(CompatBinary, RelocatableImagesDoNotCountTowardARunnableImage) {
  const FileScan scan = scan_of({image("sm_80"), image("sm_120", {}, true)});
  EXPECT_EQ(judge_binary(scan, device("12.0")).verdict, Verdict::no_image);
}

TEST(CompatBinary, NoDeviceCodeForAHostOnlyFile) {
  const auto judgement = judge_binary(scan_of({}), device("12.0"));
  EXPECT_EQ(judgement.verdict, Verdict::no_device_code);
  EXPECT_FALSE(judgement.scan_incomplete);
  EXPECT_EQ(judgement.explanation, "Holds no CUDA device code.");
}

TEST(CompatBinary, FlagsAScanThatMetProblems) {
  FileScan scan = scan_of({image("sm_90")});
  scan.problems.push_back({0x40, "at offset 0x40: truncated container"});
  const auto judgement = judge_binary(scan, device("9.0"));
  EXPECT_TRUE(judgement.scan_incomplete);
  EXPECT_TRUE(contains(judgement.evidence, "scan incomplete (1 problems)")) << judgement.evidence;
}

TEST(CompatBinary, ComponentVerdictComesFromItsWorstBinary) {
  const std::vector<archfit::compat::BinaryJudgement> binaries = {
      judge_binary(scan_of({}), device("12.0")),
      judge_binary(scan_of({image("sm_120")}), device("12.0")),
      judge_binary(scan_of({image("sm_90")}), device("12.0")),
      judge_binary(scan_of({image("compute_90")}), device("12.0")),
  };
  EXPECT_EQ(archfit::compat::worst_binary(binaries), 2u);
  EXPECT_FALSE(archfit::compat::worst_binary({}));
}

// --- Where torch's own check is wrong -------------------------------------------

std::vector<Image> images_from_arch_list(const std::vector<std::string>& arch_list) {
  std::vector<Image> images;
  for (const auto& arch : arch_list) images.push_back(image(arch, {8, 4}));
  return images;
}

TEST(CompatTorchCheck, WarnsAboutPtxThatRunsWhereArchfitSaysPtxJit) {
  // sm_50 … sm_90 plus compute_90 PTX on an RTX 5090 (12.0): torch compares
  // only majors of sm_ entries, finds no 12, and warns; the driver JIT-compiles
  // the PTX and it runs.
  const std::vector<std::string> arch_list = {"sm_50", "sm_60", "sm_70", "sm_75",
                                              "sm_80", "sm_86", "sm_90", "compute_90"};
  EXPECT_FALSE(archfit::compat::torch_check_cubins_passes(arch_list, device("12.0")));
  const auto judgement = judge_binary(scan_of(images_from_arch_list(arch_list)), device("12.0"));
  EXPECT_EQ(judgement.verdict, Verdict::ptx_jit);
}

TEST(CompatTorchCheck, StaysSilentAboutSm86OnlyOnAnA100WhereArchfitSaysNoImage) {
  // sm_86 SASS on 8.0: torch sees major 8 and passes; 8.6 SASS does not run on 8.0.
  const std::vector<std::string> arch_list = {"sm_86"};
  EXPECT_TRUE(archfit::compat::torch_check_cubins_passes(arch_list, device("8.0")));
  const auto judgement = judge_binary(scan_of(images_from_arch_list(arch_list)), device("8.0"));
  EXPECT_EQ(judgement.verdict, Verdict::no_image);
}

TEST(CompatTorchCheck, AgreesWhenSassForTheDeviceIsThere) {
  // torch 2.7.0+cu128 on an RTX 5090.
  const std::vector<std::string> arch_list = {"sm_75",  "sm_80",  "sm_86",      "sm_90",
                                              "sm_100", "sm_120", "compute_120"};
  EXPECT_TRUE(archfit::compat::torch_check_cubins_passes(arch_list, device("12.0")));
  EXPECT_EQ(judge_binary(scan_of(images_from_arch_list(arch_list)), device("12.0")).verdict,
            Verdict::native);
}

TEST(CompatTorchCheck, ReproducesTorchIgnoringPtxStrippingSuffixesAndEmptyLists) {
  const std::vector<std::string> ptx_only = {"compute_90"};
  EXPECT_FALSE(archfit::compat::torch_check_cubins_passes(ptx_only, device("9.0")));
  const std::vector<std::string> suffixed = {"sm_90a"};
  EXPECT_TRUE(archfit::compat::torch_check_cubins_passes(suffixed, device("9.0")));
  // torch checks nothing when the list is empty (CUDA unavailable).
  EXPECT_TRUE(archfit::compat::torch_check_cubins_passes({}, device("12.0")));
}

// --- a list of compile targets (torch's arch flags) -------------------------

TEST(CompatArchList, Torch271Cu126HasNoImageForAnRtx50AndRunsOnAnAda) {
  // torch 2.7.1+cu126's NVCC_FLAGS_EXTRA (tests/data/torch/README.md).
  const std::vector<std::string> cu126 = {"sm_50", "sm_60", "sm_70", "sm_75",
                                          "sm_80", "sm_86", "sm_90"};
  EXPECT_EQ(archfit::compat::judge_arch_list(cu126, device("12.0")), Verdict::no_image);
  EXPECT_EQ(archfit::compat::judge_arch_list(cu126, device("8.9")), Verdict::native);
  EXPECT_EQ(archfit::compat::judge_arch_list(cu126, device("9.0")), Verdict::native);
}

TEST(CompatArchList, PtxInTheListIsJitOnANewerDevice) {
  const std::vector<std::string> with_ptx = {"sm_80", "sm_90", "compute_90"};
  EXPECT_EQ(archfit::compat::judge_arch_list(with_ptx, device("12.0")), Verdict::ptx_jit);
  // SASS is preferred where it runs.
  EXPECT_EQ(archfit::compat::judge_arch_list(with_ptx, device("9.0")), Verdict::native);
  // Arch-specific PTX JITs for its own capability only.
  const std::vector<std::string> specific = {"compute_90a"};
  EXPECT_EQ(archfit::compat::judge_arch_list(specific, device("12.0")), Verdict::no_image);
}

TEST(CompatArchList, AnEmptyOrUnreadableListHasNoDeviceCode) {
  EXPECT_EQ(archfit::compat::judge_arch_list({}, device("12.0")), Verdict::no_device_code);
  const std::vector<std::string> unreadable = {"sm_", "gfx90a", "compute_x", ""};
  EXPECT_EQ(archfit::compat::judge_arch_list(unreadable, device("12.0")), Verdict::no_device_code);
  // Names it cannot read do not hide one it can.
  const std::vector<std::string> mixed = {"sm_bogus", "sm_120"};
  EXPECT_EQ(archfit::compat::judge_arch_list(mixed, device("12.0")), Verdict::native);
}

}  // namespace

namespace {

// The wrong-platform rule lives with the others (issue 32): a host library
// built for another CPU than the device's machine never loads, whatever its
// images; where either CPU is unknown, the GPU rules alone decide.
TEST(CompatPlacement, AHostLibraryForAnotherCpuIsWrongPlatformBeforeAnyGpuRule) {
  const FileScan scan = scan_of({image("sm_120")});
  const ComputeCapability rtx5090{12, 0};
  const auto elsewhere = judge_binary(
      scan, rtx5090, Driver{},
      {.binary_machine = "x86_64", .device_machine = "aarch64", .device_name = "DGX Spark"});
  EXPECT_EQ(elsewhere.verdict, archfit::compat::Verdict::wrong_platform);
  EXPECT_EQ(elsewhere.evidence, "built for x86_64; DGX Spark sits in an aarch64 machine");
  const auto here = judge_binary(scan, rtx5090, Driver{}, {"x86_64", "x86_64", "RTX 5090"});
  EXPECT_EQ(here.verdict, archfit::compat::Verdict::native);
  const auto unknown_cpu = judge_binary(scan, rtx5090, Driver{}, {"", "aarch64", "RTX 5090"});
  EXPECT_EQ(unknown_cpu.verdict, archfit::compat::Verdict::native);
}

TEST(CompatVerdictOrder, WorseIsTheTablesOrderAndWorseOfKeepsTheFirstOnATie) {
  using archfit::compat::Verdict;
  EXPECT_TRUE(archfit::compat::worse(Verdict::no_image, Verdict::native));
  EXPECT_FALSE(archfit::compat::worse(Verdict::native, Verdict::no_image));
  EXPECT_FALSE(archfit::compat::worse(Verdict::ptx_jit, Verdict::ptx_jit));
  EXPECT_EQ(archfit::compat::worse_of(Verdict::native, Verdict::no_image), Verdict::no_image);
  EXPECT_EQ(archfit::compat::worse_of(Verdict::wrong_platform, Verdict::native),
            Verdict::wrong_platform);
}

}  // namespace
