// Diagnosing a 50 MB log (issue 5, "Speed": under 0.5 s). The log is a
// ComfyUI console session: 50 MB of sampler progress lines and start-up
// output, an earlier failed prompt's traceback, and the last error near the
// end. Timed: the whole diagnosis (finding the last error, matching it,
// attributing it) on the text in memory, and `archfit explain --file` on it
// end to end (start, knowledge base, reading the file, printing). With the
// demo environment built: the same weighed against a check of it (the
// check's own time apart), and `explain --report` end to end. And loading
// the knowledge base, which every archfit_diagnose_run call pays. Then 100
// MB logs of the shapes that once cost seconds (issue 23: padding before the
// error on its line was 0.6 s per MB): `archfit explain --file` on each, end
// to end (target: 1 s each).
//
//   archfit_explain_bench [--runs N]
#include <stdlib.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "check/check.hpp"
#include "check/report_json.hpp"
#include "diagnose/diagnosis.hpp"
#include "kb/knowledge_base.hpp"
#include "session/session.hpp"

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

constexpr size_t kLogBytes = 50u << 20;

std::string traceback(const std::string& message) {
  return "!!! Exception during processing !!! " + message +
         "\nTraceback (most recent call last):\n"
         "  File \"/home/user/ComfyUI/execution.py\", line 327, in execute\n"
         "    output_data, output_ui, has_subgraph = get_output_data(obj, input_data_all)\n"
         "  File \"/home/user/ComfyUI/comfy/ldm/modules/attention.py\", line 412, in forward\n"
         "    out = xformers.ops.memory_efficient_attention(q, k, v, attn_bias=mask)\n"
         "  File \"/home/user/ComfyUI/venv/lib/python3.12/site-packages/xformers/ops/fmha/"
         "__init__.py\", line 306, in memory_efficient_attention\n"
         "    return _memory_efficient_attention(\n"
         "torch.AcceleratorError: " +
         message +
         "\nCUDA kernel errors might be asynchronously reported at some other API call, so the "
         "stacktrace below might be incorrect.\nFor debugging consider passing "
         "CUDA_LAUNCH_BLOCKING=1\n\nPrompt executed in 3.21 seconds\n";
}

std::string big_log() {
  std::string log =
      "Total VRAM 32607 MB, total RAM 65459 MB\npytorch version: 2.5.1+cu124\n"
      "Device: cuda:0 NVIDIA GeForce RTX 5090 : cudaMallocAsync\n";
  log.reserve(kLogBytes + 4096);
  size_t step = 0;
  while (log.size() < kLogBytes / 2) {
    log += "100%|██████████| " + std::to_string(step % 20 + 1) + "/20 [00:05<00:00,  3.71it/s]\n";
    ++step;
  }
  log += traceback("CUDA error: out of memory");
  while (log.size() < kLogBytes) {
    log += "got prompt\n 45%|████▌     | 9/20 [00:02<00:02,  3.70it/s]\n";
  }
  log += traceback("CUDA error: no kernel image is available for execution on the device");
  return log;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

template <typename Body>
double median_ms(int runs, Body&& body) {
  std::vector<double> times;
  for (int run = 0; run < runs; ++run) {
    const auto start = Clock::now();
    body();
    times.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
  }
  return median(times);
}

// `command` run `runs` times; its median wall time, or -1 when it fails.
double command_ms(int runs, const std::string& command) {
  bool failed = false;
  const double ms = median_ms(runs, [&] {
    const int status = std::system(command.c_str());
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) failed = true;
  });
  if (failed) std::fprintf(stderr, "failed: %s\n", command.c_str());
  return failed ? -1 : ms;
}

constexpr size_t kShapeBytes = 100'000'000;
constexpr std::string_view kNoKernelImage =
    "RuntimeError: CUDA error: no kernel image is available for execution on the device\n";

// A 100 MB log of one shape: what comes before the error (or all of it).
struct Shape {
  const char* name;
  std::string (*make)();
};

std::string repeated(std::string_view unit, size_t bytes) {
  std::string out;
  out.reserve(bytes + unit.size());
  while (out.size() < bytes) out += unit;
  return out;
}

const Shape kShapes[] = {
    {"spaces, then the error on that line",
     [] { return std::string(kShapeBytes, ' ') + std::string(kNoKernelImage); }},
    {"NUL bytes, then the error on that line",
     [] { return std::string(kShapeBytes, '\0') + std::string(kNoKernelImage); }},
    {"one 100 MB line, then the error on it",
     [] { return std::string(kShapeBytes, 'x') + std::string(kNoKernelImage); }},
    {"100-byte lines, no error", [] { return repeated(std::string(99, 'x') + "\n", kShapeBytes); }},
    {"100-byte lines, the error last",
     [] {
       return repeated(std::string(99, 'x') + "\n", kShapeBytes) + std::string(kNoKernelImage);
     }},
    {"the error first, then 100-byte lines",
     [] {
       return std::string(kNoKernelImage) + repeated(std::string(99, 'x') + "\n", kShapeBytes);
     }},
    {"every line an ERROR line",
     [] { return repeated("ERROR: something failed here, an error line\n", kShapeBytes); }},
    {"a traceback, NULs before its exception line",
     [] {
       return "Traceback (most recent call last):\n  File \"/x/y.py\", line 1, in f\n" +
              std::string(kShapeBytes, '\0') + std::string(kNoKernelImage);
     }},
};

int hundred_megabyte_shapes(int runs) {
  const fs::path file = fs::temp_directory_path() / "archfit-explain-bench-shape.log";
  const std::string explain = std::string(ARCHFIT_CLI) + " explain --kb '" + ARCHFIT_KB_SOURCE_DIR +
                              "' --file '" + file.string() + "'";
  for (const auto& shape : kShapes) {
    std::ofstream(file, std::ios::binary) << shape.make();
    // Exit 1 (not recognised) is an answer here, not a failure.
    const double ms =
        median_ms(runs, [&] { (void)std::system((explain + " > /dev/null").c_str()); });
    std::printf("100 MB, %-42s median %7.1f ms of %d (target < 1000 ms: %s)\n", shape.name, ms,
                runs, ms < 1000 ? "met" : "MISSED");
  }
  fs::remove(file);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 5;
  if (argc > 2 && std::strcmp(argv[1], "--runs") == 0) runs = std::max(1, std::atoi(argv[2]));
  const auto kb = archfit::kb::load_knowledge_base(ARCHFIT_KB_SOURCE_DIR);
  const std::string log = big_log();

  std::string category, component;
  const double in_memory = median_ms(runs, [&] {
    const auto diagnosis = archfit::diagnose::diagnose(kb, log);
    category = archfit::kb::to_string(diagnosis.category);
    component = diagnosis.component ? diagnosis.component->name : "none";
  });
  const double kb_load =
      median_ms(runs, [] { (void)archfit::kb::load_knowledge_base(ARCHFIT_KB_SOURCE_DIR); });

  const fs::path file = fs::temp_directory_path() / "archfit-explain-bench.log";
  std::ofstream(file, std::ios::binary) << log;
  const std::string explain = std::string(ARCHFIT_CLI) + " explain --kb '" + ARCHFIT_KB_SOURCE_DIR +
                              "' --file '" + file.string() + "'";
  const double end_to_end = command_ms(runs, explain + " > /dev/null");
  if (end_to_end < 0) return 1;

  std::printf("a %.1f MB ComfyUI log, last error: %s in %s\n", log.size() / 1048576.0,
              category.c_str(), component.c_str());
  std::printf("%-44s median %7.1f ms of %d\n", "diagnose() in memory", in_memory, runs);
  std::printf("%-44s median %7.1f ms of %d (target < 500 ms: %s)\n",
              "archfit explain --file, whole", end_to_end, runs,
              end_to_end < 500 ? "met" : "MISSED");
  std::printf("%-44s median %7.2f ms of %d\n", "load_knowledge_base (each C ABI diagnose)", kb_load,
              runs);

  if (fs::exists(fs::path(ARCHFIT_DEMO_SITE) / "torch")) {
    archfit::check::CheckRequest request;
    request.gpus = {"RTX 5090"};
    request.driver = "575.51";
    request.site_packages = {ARCHFIT_DEMO_SITE};
    const auto document = archfit::check::check_document(
        archfit::session::Session({.kb_dir = fs::path(ARCHFIT_KB_SOURCE_DIR)}).check(request));
    const auto environment = archfit::check::read_report(document, "bench");
    archfit::diagnose::DiagnoseOptions weighed;
    weighed.environment = &environment;
    std::string verdict;
    const double with_environment = median_ms(runs, [&] {
      verdict = archfit::diagnose::to_string(
          archfit::diagnose::diagnose(kb, log, weighed).environment->verdict);
    });
    const fs::path report = fs::temp_directory_path() / "archfit-explain-bench-report.json";
    std::ofstream(report) << document.dump();
    const double with_report =
        command_ms(runs, explain + " --report '" + report.string() + "' > /dev/null");
    fs::remove(report);
    std::printf("%-44s median %7.1f ms of %d (%s)\n", "diagnose() weighed against a check",
                with_environment, runs, verdict.c_str());
    std::printf("%-44s median %7.1f ms of %d\n", "archfit explain --file --report, whole",
                with_report, runs);
  }
  fs::remove(file);
  return hundred_megabyte_shapes(runs);
}
