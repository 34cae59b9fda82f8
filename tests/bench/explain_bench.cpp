// Diagnosing a 50 MB log (issue 5, "Speed": under 0.5 s). The log is a
// ComfyUI console session: 50 MB of sampler progress lines and start-up
// output, an earlier failed prompt's traceback, and the last error near the
// end. Timed: the whole diagnosis (finding the last error, matching it,
// attributing it) on the text in memory, and `archfit explain --file` on it
// end to end (start, knowledge base, reading the file, printing).
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
#include <vector>

#include "diagnose/diagnosis.hpp"
#include "kb/knowledge_base.hpp"

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

}  // namespace

int main(int argc, char** argv) {
  int runs = 5;
  if (argc > 2 && std::strcmp(argv[1], "--runs") == 0) runs = std::max(1, std::atoi(argv[2]));
  const auto kb = archfit::kb::load_knowledge_base(ARCHFIT_KB_SOURCE_DIR);
  const std::string log = big_log();

  std::vector<double> in_memory;
  std::string category, component;
  for (int run = 0; run < runs; ++run) {
    const auto start = Clock::now();
    const auto diagnosis = archfit::diagnose::diagnose(kb, log);
    in_memory.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    category = diagnosis.category;
    component = diagnosis.component ? diagnosis.component->name : "none";
  }

  const fs::path file = fs::temp_directory_path() / "archfit-explain-bench.log";
  std::ofstream(file, std::ios::binary) << log;
  const std::string command = std::string(ARCHFIT_CLI) + " explain --kb '" +
                              ARCHFIT_KB_SOURCE_DIR + "' --file '" + file.string() +
                              "' > /dev/null";
  std::vector<double> end_to_end;
  for (int run = 0; run < runs; ++run) {
    const auto start = Clock::now();
    const int status = std::system(command.c_str());
    end_to_end.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      std::fprintf(stderr, "archfit explain failed: %s\n", command.c_str());
      return 1;
    }
  }
  fs::remove(file);

  std::printf("a %.1f MB ComfyUI log, last error: %s in %s\n", log.size() / 1048576.0,
              category.c_str(), component.c_str());
  std::printf("diagnose() in memory           median %7.1f ms of %d\n", median(in_memory), runs);
  std::printf("archfit explain --file, whole  median %7.1f ms of %d (target < 500 ms: %s)\n",
              median(end_to_end), runs, median(end_to_end) < 500 ? "met" : "MISSED");
  return 0;
}
