// diagnose/weigh: an error weighed against the environment it came from.
// The environment is a real check of a site-packages built from the nvcc
// fixtures: torch 2.5.1+cu124 with SASS sm_86 and sm_89 and no PTX,
// xformers 0.0.28.post1 with SASS sm_80 only, fastops 1.0 with compute_90 PTX
// only (ISA 9.0). Documents written by hand test only what a check cannot
// produce here (a machine's real GPUs) and malformed reports.
#include <gtest/gtest.h>

#include <memory>

#include "check/check.hpp"
#include "check/report_json.hpp"
#include "check/report_read.hpp"
#include "check_resources.hpp"
#include "compat/verdict.hpp"
#include "diagnose/diagnosis.hpp"
#include "fixture_site.hpp"
#include "kb/knowledge_base.hpp"
#include "render/diagnosis_text.hpp"

namespace fs = std::filesystem;
using namespace archfit::diagnose;
namespace check = archfit::check;

namespace {

const archfit::kb::KnowledgeBase& kb() {
  static const auto loaded = archfit::kb::load_knowledge_base(ARCHFIT_KB_SOURCE_DIR);
  return loaded;
}

constexpr const char* kNoKernelImage =
    "CUDA error: no kernel image is available for execution on the device";

// A traceback whose innermost frame outside PyTorch is in `package` under `site`.
std::string traceback_through(const fs::path& site, const std::string& package) {
  return "Traceback (most recent call last):\n"
         "  File \"/opt/ComfyUI/execution.py\", line 323, in execute\n"
         "    output_data = get_output_data(obj, input_data_all)\n"
         "  File \"" +
         (site / package / "ops.py").string() +
         "\", line 40, in forward\n"
         "    return _C.attention(q, k, v)\n"
         "  File \"" +
         (site / "torch/_ops.py").string() +
         "\", line 1116, in __call__\n"
         "    return self._op(*args, **kwargs)\n"
         "RuntimeError: " +
         kNoKernelImage + "\n";
}

class DiagnoseEnvironment : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const auto missing = archfit::testing::missing_three_build_fixture(); !missing.empty())
      GTEST_SKIP() << "nvcc fixture not built: " << missing;
    site_ = std::make_unique<archfit::testing::FixtureSite>(
        std::string("diagnose_") + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    archfit::testing::install_three_builds(*site_);
  }

  // The environment as `archfit check --gpu GPU [--driver D] --site-packages SITE` sees it.
  check::ReportedEnvironment checked(const std::string& gpu, const std::string& driver = "") {
    archfit::check::CheckRequest options;
    options.gpus = {gpu};
    if (!driver.empty()) options.driver = driver;
    options.site_packages = {site_->root()};
    const auto resources = archfit::testing::check_resources(
        site_->root() / "no-driver-here" / "libcuda.so.1", fs::path(ARCHFIT_KB_SOURCE_DIR));
    return check::read_report(
        archfit::check::check_document(archfit::check::run_check(options, resources)),
        "archfit check");
  }

  Diagnosis diagnosed(const std::string& text, const check::ReportedEnvironment& environment) {
    DiagnoseOptions options;
    options.environment = &environment;
    return diagnose(kb(), text, options);
  }

  std::unique_ptr<archfit::testing::FixtureSite> site_;
};

TEST_F(DiagnoseEnvironment, ACheckConfirmsTheComponentTheTracebackNamesInWords) {
  const Diagnosis d = diagnosed(traceback_through(site_->root(), "xformers"), checked("RTX 5090"));
  EXPECT_EQ(archfit::kb::to_string(d.category), "no-kernel-image");
  ASSERT_TRUE(d.component);
  EXPECT_EQ(d.component->name, "xformers");
  EXPECT_EQ(d.component->version, "0.0.28.post1");
  ASSERT_TRUE(d.environment);
  EXPECT_EQ(archfit::diagnose::to_string(d.environment->verdict), "confirms");
  ASSERT_FALSE(d.environment->evidence.empty());
  EXPECT_EQ(d.environment->evidence[0].rfind(
                "xformers 0.0.28.post1 has SASS for sm_80 and no PTX; your GPU is sm_120", 0),
            0u)
      << d.environment->evidence[0];
  // The text never named the GPU; the check did.
  EXPECT_EQ(d.sm, "sm_120");
  EXPECT_NE(d.explanation.find("sm_120"), std::string::npos) << d.explanation;
  // The check's own fix for xformers leads.
  ASSERT_FALSE(d.fix.empty());
  EXPECT_EQ(d.fix[0].line().rfind("xformers: ", 0), 0u) << d.fix[0].line();
  EXPECT_NE(archfit::render::diagnosis_text(d).find(
                "checked    confirms (archfit check): xformers 0.0.28.post1"),
            std::string::npos)
      << archfit::render::diagnosis_text(d);
  EXPECT_EQ(to_json(d)["environment"]["verdict"], "confirms");
  EXPECT_EQ(to_json(d)["component"]["version"], "0.0.28.post1");
}

TEST_F(DiagnoseEnvironment, TheHeadlineNamesTheGpuTheComponentItsCauseAndTheOneCommand) {
  // What a toast shows: the title people say ("RTX 5090", torch with its
  // local tag), the check's decisive sentence, and the check's first command.
  const Diagnosis d = diagnosed(traceback_through(site_->root(), "torch"), checked("RTX 5090"));
  ASSERT_TRUE(d.headline);
  EXPECT_EQ(d.headline->title, "RTX 5090 cannot run PyTorch 2.5.1+cu124");
  ASSERT_TRUE(d.environment);
  ASSERT_FALSE(d.environment->evidence.empty());
  EXPECT_EQ(d.headline->cause, d.environment->evidence.front());
  const auto commands = archfit::diagnose::fix_commands(d.environment->fix);
  ASSERT_FALSE(commands.empty());
  EXPECT_EQ(d.headline->command, commands.front());
  EXPECT_EQ(d.headline->command.rfind("pip install torch==", 0), 0u) << d.headline->command;
  EXPECT_EQ(d.headline->step.rfind("torch: ", 0), 0u) << d.headline->step;
  const auto json = to_json(d)["headline"];
  EXPECT_EQ(json["title"], d.headline->title);
  EXPECT_EQ(json["command"], d.headline->command);
  EXPECT_EQ(
      archfit::render::diagnosis_text(d).rfind("RTX 5090 cannot run PyTorch 2.5.1+cu124\n", 0), 0u)
      << archfit::render::diagnosis_text(d);
}

TEST_F(DiagnoseEnvironment, AComponentTheCheckFindsRunningIsNotBlamedInTheTitleWhatFailsIs) {
  // sm_89 runs xformers' sm_80 SASS: the title names what the check finds
  // failing instead (fastops' compute_90 PTX), with its fix's command.
  const Diagnosis d = diagnosed(traceback_through(site_->root(), "xformers"), checked("RTX 4090"));
  ASSERT_TRUE(d.headline);
  EXPECT_EQ(d.headline->title, "RTX 4090 cannot run fastops 1.0");
  EXPECT_EQ(d.headline->cause.rfind("fastops: _C.so: no SASS, PTX compute_90", 0), 0u)
      << d.headline->cause;
}

TEST_F(DiagnoseEnvironment, OnAGpuTheComponentRunsOnTheCheckRefutesItAndNamesWhatFails) {
  // sm_89: xformers' sm_80 SASS runs there; fastops' compute_90 PTX does not.
  const Diagnosis d = diagnosed(traceback_through(site_->root(), "xformers"), checked("RTX 4090"));
  ASSERT_TRUE(d.environment);
  EXPECT_EQ(archfit::diagnose::to_string(d.environment->verdict), "refutes");
  ASSERT_GE(d.environment->evidence.size(), 2u);
  EXPECT_NE(d.environment->evidence[0].find("your GPU is sm_89"), std::string::npos)
      << d.environment->evidence[0];
  EXPECT_NE(d.environment->evidence[0].find("it has SASS that runs there"), std::string::npos);
  EXPECT_NE(d.environment->evidence[1].find("fastops 1.0 (_C.so: no SASS, PTX compute_90"),
            std::string::npos)
      << d.environment->evidence[1];
}

TEST_F(DiagnoseEnvironment, PyTorchsOwnErrorIsPinnedOnTheOneComponentTheCheckFindsFailing) {
  // torch runs natively on sm_89; only fastops fails there.
  const Diagnosis d =
      diagnosed(std::string("torch.AcceleratorError: ") + kNoKernelImage, checked("RTX 4090"));
  ASSERT_TRUE(d.component);
  EXPECT_EQ(d.component->name, "fastops");
  EXPECT_EQ(d.component->version, "1.0");
  ASSERT_TRUE(d.environment);
  EXPECT_EQ(archfit::diagnose::to_string(d.environment->verdict), "confirms");
  EXPECT_NE(d.component->why.find("PyTorch has code for your GPU"), std::string::npos)
      << d.component->why;
  // The knowledge base's steps about PyTorch, and its "run archfit check",
  // are gone: the check found PyTorch runs, and has run.
  for (const auto& step : archfit::diagnose::fix_lines(d.fix)) {
    EXPECT_EQ(step.find("For PyTorch"), std::string::npos) << step;
    EXPECT_EQ(step.find("Run `archfit check`"), std::string::npos) << step;
  }
  // Without the environment, both are there.
  const Diagnosis alone = diagnose(kb(), std::string("torch.AcceleratorError: ") + kNoKernelImage);
  ASSERT_EQ(alone.fix.size(), 2u);
  EXPECT_EQ(alone.fix[0].line().rfind("Run `archfit check`", 0), 0u);
  EXPECT_EQ(alone.fix[1].line().rfind("For PyTorch", 0), 0u);
}

TEST_F(DiagnoseEnvironment, WithoutANamedComponentTheOnlyFailingOneIsNamed) {
  // A driver API name, no traceback, no package in the text.
  const Diagnosis d =
      diagnosed("cuModuleLoadData failed: CUDA_ERROR_NO_BINARY_FOR_GPU", checked("RTX 4090"));
  EXPECT_EQ(archfit::kb::to_string(d.category), "no-kernel-image");
  ASSERT_TRUE(d.component) << archfit::render::diagnosis_text(d);
  EXPECT_EQ(d.component->name, "fastops");
  EXPECT_EQ(archfit::diagnose::to_string(d.environment->verdict), "confirms");
}

TEST_F(DiagnoseEnvironment, WhenEverythingOnDiskRunsTheCheckSaysTheCodeCameFromElsewhere) {
  // fastops' compute_90 PTX JIT-compiles on Hopper; torch's sm_86/sm_89 and
  // xformers' sm_80 SASS do not run there, so take them away.
  for (const char* gone :
       {"torch", "torch-2.5.1+cu124.dist-info", "xformers", "xformers-0.0.28.post1.dist-info"})
    fs::remove_all(site_->root() / gone);
  const Diagnosis d =
      diagnosed("cuModuleLoadData failed: CUDA_ERROR_NO_BINARY_FOR_GPU", checked("H100"));
  ASSERT_TRUE(d.environment);
  EXPECT_EQ(archfit::diagnose::to_string(d.environment->verdict), "refutes")
      << archfit::render::diagnosis_text(d);
  ASSERT_GE(d.environment->evidence.size(), 2u);
  EXPECT_NE(d.environment->evidence[1].find("built at run time"), std::string::npos);
}

TEST_F(DiagnoseEnvironment, PtxTooNewForTheDriverIsConfirmedOnTheComponentThatCarriesIt) {
  // Driver 570.86 knows PTX ISA up to 8.7; fastops' PTX is ISA 9.0.
  const Diagnosis d = diagnosed(
      "RuntimeError: CUDA error: the provided PTX was compiled with an unsupported toolchain.",
      checked("H100", "570.86"));
  EXPECT_EQ(archfit::kb::to_string(d.category), "ptx-too-new-for-driver");
  ASSERT_TRUE(d.environment);
  EXPECT_EQ(archfit::diagnose::to_string(d.environment->verdict), "confirms");
  EXPECT_NE(d.environment->evidence[0].find("fastops"), std::string::npos)
      << d.environment->evidence[0];
}

TEST_F(DiagnoseEnvironment, ADriverTooOldForTorchsCudaIsConfirmedAndANewOneRefuted) {
  const std::string text = "CUDA driver version is insufficient for CUDA runtime version";
  const Diagnosis old_driver = diagnosed(text, checked("RTX 3090", "470.82"));
  ASSERT_TRUE(old_driver.environment);
  EXPECT_EQ(archfit::diagnose::to_string(old_driver.environment->verdict), "confirms");
  EXPECT_NE(old_driver.environment->evidence[0].find("525"), std::string::npos);
  EXPECT_NE(old_driver.environment->evidence[0].find("CUDA 12.4"), std::string::npos)
      << old_driver.environment->evidence[0];
  const Diagnosis new_driver = diagnosed(text, checked("RTX 3090", "570.86"));
  EXPECT_EQ(archfit::diagnose::to_string(new_driver.environment->verdict), "refutes");
}

TEST_F(DiagnoseEnvironment, ANodePacksOwnCompiledCodeIsWeighedByItsFolder) {
  // custom_nodes/ComfyUI-FastOps: a node pack with an extension built for sm_80 only.
  const fs::path custom_nodes = site_->root().parent_path() / "custom_nodes";
  fs::create_directories(custom_nodes / "ComfyUI-FastOps");
  fs::copy_file(fs::path(ARCHFIT_FIXTURE_DIR) / "sm_80.so",
                custom_nodes / "ComfyUI-FastOps" / "_fastops.so");
  archfit::check::CheckRequest options;
  options.gpus = {"RTX 5090"};
  options.custom_nodes = custom_nodes;
  const auto resources = archfit::testing::check_resources(
      site_->root() / "no-driver-here" / "libcuda.so.1", fs::path(ARCHFIT_KB_SOURCE_DIR));
  const check::ReportedEnvironment environment = check::read_report(
      archfit::check::check_document(archfit::check::run_check(options, resources)),
      "archfit check");
  const std::string traceback =
      "Traceback (most recent call last):\n"
      "  File \"" +
      (custom_nodes / "ComfyUI-FastOps" / "nodes.py").string() +
      "\", line 7, in run\n    return _fastops.blur(x)\n"
      "RuntimeError: CUDA error: no kernel image is available for execution on the device\n";
  const Diagnosis d = diagnosed(traceback, environment);
  ASSERT_TRUE(d.component);
  EXPECT_EQ(d.component->kind, "custom_node");
  EXPECT_EQ(d.component->name, "ComfyUI-FastOps");
  ASSERT_TRUE(d.environment);
  EXPECT_EQ(archfit::diagnose::to_string(d.environment->verdict), "confirms");
  EXPECT_EQ(d.environment->evidence[0].rfind(
                "ComfyUI-FastOps has SASS for sm_80 and no PTX; your GPU is sm_120", 0),
            0u)
      << d.environment->evidence[0];
}

TEST_F(DiagnoseEnvironment, WithoutAnEnvironmentTheVersionComesFromTheDistInfoBesideTheFrame) {
  const Diagnosis d = diagnose(kb(), traceback_through(site_->root(), "xformers"));
  ASSERT_TRUE(d.component);
  EXPECT_EQ(d.component->version, "0.0.28.post1");
  EXPECT_FALSE(d.environment);
  // A path that is not on this machine gives no version, and no error.
  const Diagnosis elsewhere =
      diagnose(kb(), traceback_through("/nowhere/site-packages", "xformers"));
  ASSERT_TRUE(elsewhere.component);
  EXPECT_EQ(elsewhere.component->version, "");
}

// A machine's own GPUs cannot be had here (no driver): the check document
// as `archfit check` writes it on such a machine.
nlohmann::json real_machine(nlohmann::json devices, const std::string& torch) {
  return {{"schema", "archfit.check/1"},
          {"verdict", "fits"},
          {"devices", std::move(devices)},
          {"driver", {{"version", "570.86.16"}, {"cuda_version", "12.8"}, {"simulated", false}}},
          {"torch", torch},
          {"components", nlohmann::json::array()},
          {"findings", nlohmann::json::array()}};
}

TEST(DiagnoseEnvironmentDocument, NoDeviceIsConfirmedByACpuTorchOrAnEmptyMachineAndRefutedByAGpu) {
  const std::string text = "RuntimeError: No CUDA GPUs are available";
  const auto diagnosed = [&](const nlohmann::json& document) {
    const check::ReportedEnvironment environment = check::read_report(document, "report.json");
    DiagnoseOptions options;
    options.environment = &environment;
    return diagnose(kb(), text, options);
  };
  const nlohmann::json rtx5090 = {
      {"name", "NVIDIA GeForce RTX 5090"}, {"sm", 120}, {"simulated", false}};
  const Diagnosis cpu_torch =
      diagnosed(real_machine(nlohmann::json::array({rtx5090}), "2.7.0+cpu"));
  EXPECT_EQ(archfit::kb::to_string(cpu_torch.category), "no-device");
  EXPECT_EQ(archfit::diagnose::to_string(cpu_torch.environment->verdict), "confirms");
  EXPECT_NE(cpu_torch.environment->evidence[0].find("CPU-only"), std::string::npos);
  EXPECT_EQ(
      archfit::diagnose::to_string(
          diagnosed(real_machine(nlohmann::json::array(), "2.7.0+cu128")).environment->verdict),
      "confirms");
  const Diagnosis gpu_here =
      diagnosed(real_machine(nlohmann::json::array({rtx5090}), "2.7.0+cu128"));
  EXPECT_EQ(archfit::diagnose::to_string(gpu_here.environment->verdict), "refutes");
  EXPECT_NE(gpu_here.environment->evidence[0].find("CUDA_VISIBLE_DEVICES"), std::string::npos);
  EXPECT_EQ(gpu_here.environment->source, "report.json");
}

TEST(DiagnoseHeadline, WithoutAnEnvironmentTheTitleSaysWhatTheTextTellsAndUnrecognisedHasNone) {
  DiagnoseOptions none;
  // torch's own warning names the GPU, its arch and torch, and lists what
  // torch was built for: judged as a check would, and the knowledge base's
  // torch builds give the one command for that arch.
  const Diagnosis named =
      diagnose(kb(),
               "/venv/lib/python3.12/site-packages/torch/cuda/__init__.py:235: UserWarning: \n"
               "NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the "
               "current PyTorch installation.\nThe current PyTorch install supports CUDA "
               "capabilities sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90.\n",
               none);
  ASSERT_TRUE(named.headline);
  EXPECT_EQ(named.headline->title, "RTX 5090 cannot run torch");
  EXPECT_EQ(named.headline->command, "pip install torch==2.15.0");
  ASSERT_TRUE(named.printed_by);
  EXPECT_EQ(named.printed_by->library, "torch");
  EXPECT_EQ(named.gpu, "NVIDIA GeForce RTX 5090");
  ASSERT_TRUE(named.environment);
  EXPECT_EQ(named.environment->source, "the message");
  EXPECT_EQ(archfit::diagnose::to_string(named.environment->verdict), "confirms");
  // CUDA's own text names no component: the title says what the text tells.
  const Diagnosis relayed = diagnose(
      kb(),
      "torch.AcceleratorError: CUDA error: no kernel image is available for execution on the "
      "device\nNVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible",
      none);
  ASSERT_TRUE(relayed.headline);
  EXPECT_EQ(relayed.headline->title, "A component here has no kernel for RTX 5090");
  const Diagnosis bare = diagnose(
      kb(), "RuntimeError: CUDA error: no kernel image is available for execution on the device",
      none);
  ASSERT_TRUE(bare.headline);
  EXPECT_EQ(bare.headline->title, "Your GPU cannot run torch");  // torch raised it
  EXPECT_TRUE(bare.headline->command.empty());
  EXPECT_FALSE(bare.headline->step.empty());
  const Diagnosis oom = diagnose(kb(), "torch.OutOfMemoryError: CUDA out of memory.", none);
  ASSERT_TRUE(oom.headline);
  EXPECT_EQ(oom.headline->title, "The GPU ran out of memory");
  const Diagnosis missing =
      diagnose(kb(), "FileNotFoundError: [Errno 2] No such file: 'x.png'", none);
  EXPECT_FALSE(missing.headline);
  EXPECT_TRUE(to_json(missing)["headline"].is_null());
}

TEST(DiagnoseEnvironmentDocument, AReportThatIsNotACheckIsRefusedNamingTheField) {
  const auto message = [](const nlohmann::json& document) -> std::string {
    try {
      check::read_report(document, "x");
    } catch (const check::ReportReadError& error) {
      return error.what();
    }
    return "accepted";
  };
  EXPECT_NE(message(nlohmann::json::array()).find("not a JSON object"), std::string::npos);
  EXPECT_NE(message({{"schema", "archfit.diagnosis/1"}}).find("archfit.check/1"),
            std::string::npos);
  nlohmann::json document = real_machine(nlohmann::json::array(), "");
  document["components"] = {{{"verdict", "native"}}};
  EXPECT_EQ(message(document), "components[0] has no \"name\"");
  document["components"] = {{{"name", "x"}, {"verdict", 3}}};
  EXPECT_EQ(message(document), "components[0].verdict is number, not string");
  document["components"] = {{{"name", "x"}, {"verdict", "native"}, {"binaries", {{{"sass", 1}}}}}};
  EXPECT_EQ(message(document), "components[0].binaries[0].sass is number, not array");
  document.erase("devices");
  EXPECT_EQ(message(document), "the report has no \"devices\"");
}

}  // namespace

// A saved report from before `blocks` was written: what blocks comes from
// compat's verdict table, not a list in diagnose/ (issue 25).
TEST(DiagnoseEnvironmentTable, AReportWithoutBlocksIsReadWithTheCoresVerdictTable) {
  nlohmann::json document = {{"schema", "archfit.check/1"},
                             {"devices", nlohmann::json::array()},
                             {"components", nlohmann::json::array()},
                             {"stacks", nlohmann::json::array()}};
  for (const auto& facts : archfit::compat::verdict_table()) {
    const std::string name(facts.name);
    document["components"].push_back({{"name", "c-" + name}, {"verdict", name}});
    document["stacks"].push_back({{"name", "s-" + name}, {"verdict", name}});
  }
  document["components"].push_back({{"name", "c-later"}, {"verdict", "a-verdict-added-later"}});
  const check::ReportedEnvironment environment = check::read_report(document, "a saved report");
  const auto table = archfit::compat::verdict_table();
  ASSERT_EQ(environment.components.size(), table.size() + 1);
  for (std::size_t i = 0; i < table.size(); ++i) {
    EXPECT_EQ(environment.components[i].blocks, table[i].blocks) << table[i].name;
    EXPECT_EQ(environment.stacks[i].blocks, table[i].blocks) << table[i].name;
    EXPECT_EQ(environment.components[i].runs(), archfit::compat::runs(table[i].verdict))
        << table[i].name;
  }
  EXPECT_FALSE(environment.components.back().blocks);  // unknown to this archfit: not a failure
  EXPECT_FALSE(environment.components.back().runs());
}

// Issue 33: a knowledge-base recipe shown for a component the check had no
// fix for is written for the interpreter and shell the check's fixes were
// (the report's `commands_for`), never as a bare pip for another Python.
TEST(DiagnoseRecipes, ARecipeIsWrittenForTheCheckedEnvironmentsInterpreter) {
  check::ReportedEnvironment environment;
  environment.source = "archfit check";
  environment.devices.push_back({.name = "GeForce RTX 5090", .cc = {12, 0}});
  environment.command_target = {"/home/ana/ComfyUI/.venv/bin/python", false};
  DiagnoseOptions options;
  options.environment = &environment;
  const Diagnosis d = diagnose(
      kb(), traceback_through("/home/ana/ComfyUI/.venv/lib/python3.12/site-packages", "xformers"),
      options);
  ASSERT_TRUE(d.component);
  EXPECT_EQ(d.component->name, "xformers");
  bool recipe = false;
  for (const auto& step : d.fix) {
    const std::string line = step.line();
    recipe |=
        line.find("\"/home/ana/ComfyUI/.venv/bin/python\" -m pip install") != std::string::npos;
    EXPECT_EQ(line.rfind("pip ", 0), std::string::npos) << line;
    EXPECT_EQ(line.find("\" pip "), std::string::npos) << line;
  }
  EXPECT_TRUE(recipe) << archfit::render::diagnosis_text(d);
}
