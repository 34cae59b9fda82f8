// The longest single line each text entry point takes on a 256 KB thread
// stack (issue 34, "Figures": goal at least 64 MB, in linear time): each
// parser of text archfit did not write is given one line of LINE_MB
// megabytes (default 64, then twice that) on a thread with a 256 KB stack,
// and the rate it read it at is printed with whether the answer was right.
// A parser that recursed per character would kill this process instead.
//
//   archfit_long_line_bench [LINE_MB]
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include "../unit/small_stack.hpp"
#include "diagnose/diagnosis.hpp"
#include "env/cuda_driver.hpp"
#include "env/python_env.hpp"
#include "env/requirement.hpp"
#include "fleet/fleet_config.hpp"
#include "kb/knowledge_base.hpp"
#include "plugin/manifest.hpp"
#include "util/pattern.hpp"

namespace fs = std::filesystem;

namespace {

// Runs `parse` on the small stack; prints MB/s over `bytes` and whether
// `right` held afterwards.
void measure(const char* entry_point, size_t bytes, const std::function<void()>& parse,
             const std::function<bool()>& right) {
  double seconds = 0;
  const bool ran = archfit::testing::on_small_stack([&] {
    const auto start = std::chrono::steady_clock::now();
    parse();
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  });
  if (!ran) {
    std::printf("%-44s could not make a 256 KB thread\n", entry_point);
    return;
  }
  std::printf("%-44s %6zu MB line: %8.1f MB/s, %s\n", entry_point, bytes >> 20,
              static_cast<double>(bytes) / (1 << 20) / (seconds > 0 ? seconds : 1e-9),
              right() ? "answer right" : "ANSWER WRONG");
}

fs::path write_temporary(const std::string& name, const std::string& text) {
  const fs::path path = fs::temp_directory_path() / (name + std::to_string(::getpid()));
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

void run_all(size_t line, const archfit::kb::KnowledgeBase& kb) {
  const std::string error =
      "RuntimeError: CUDA error: no kernel image is available for execution on the device";
  {
    const std::string text = error + std::string(line, 'x');
    archfit::diagnose::Diagnosis found;
    measure(
        "explain: the error, then its line runs on", text.size(),
        [&] { found = archfit::diagnose::diagnose(kb, text); },
        [&] { return found.category == archfit::kb::ErrorCategory::no_kernel_image; });
  }
  {
    std::string report;
    while (report.size() < line) report += "   1234567890 sm_ 12 . ( ) , text\t";
    report += error;
    archfit::diagnose::Diagnosis found;
    measure(
        "explain: a report of whitespace, digits, text", report.size(),
        [&] { found = archfit::diagnose::diagnose(kb, report); },
        [&] { return found.category == archfit::kb::ErrorCategory::no_kernel_image; });
  }
  {
    const std::string text = "__version__ = '" + std::string(line, '9') + "'\ncuda = '12.8'\n";
    std::optional<archfit::env::TorchBuild> build;
    measure(
        "torch/version.py", text.size(),
        [&] { build = archfit::env::parse_torch_version_py(text); },
        [&] { return build && build->cuda == "12.8"; });
  }
  {
    const std::string text = "Summary: " + std::string(line, 's') + "\nName: torch\n\n";
    std::string name;
    measure(
        "METADATA header", text.size(), [&] { name = archfit::env::metadata_field(text, "Name"); },
        [&] { return name == "torch"; });
  }
  {
    const std::string text = "torch/lib/libc10.so,sha256=" + std::string(line, 'h') + ",42";
    std::vector<std::string> fields;
    measure(
        "RECORD row", text.size(), [&] { fields = archfit::env::parse_csv_line(text); },
        [&] { return fields.size() == 3 && fields[2] == "42"; });
  }
  {
    const std::string text = "nvidia-cublas-cu12 (>=" + std::string(line, '1') + ")";
    std::optional<archfit::env::Requirement> requirement;
    measure(
        "Requires-Dist", text.size(), [&] { requirement = archfit::env::parse_requirement(text); },
        [&] { return !requirement || requirement->name == "nvidia-cublas-cu12"; });
  }
  {
    const std::string text =
        std::string(line, 'K') + " NVRM version: NVIDIA UNIX x86_64 Kernel Module  570.86.16  Thu";
    std::string release;
    measure(
        "/proc/driver/nvidia/version", text.size(),
        [&] { release = archfit::env::parse_nvrm_release(text); },
        [&] { return release == "570.86.16"; });
  }
  {
    std::string text;
    while (text.size() < line) text += "sm_90a, compute_120, ";
    const archfit::util::Pattern arch(R"((?:sm|compute)_[0-9]+[af]?)");
    size_t found = 0;
    measure(
        "a knowledge-base pattern over a long text", text.size(),
        [&] { found = arch.find_all(text).size(); }, [&] { return found > 0; });
  }
  {
    const fs::path path = write_temporary(
        "archfit_bench_manifest_",
        "schema: archfit.plugin/1\nname: " + std::string(line, 'n') + "\nlibrary: l.so\nabi: 1\n");
    std::string refused;
    measure(
        "plugin manifest (YAML)", fs::file_size(path),
        [&] {
          try {
            (void)archfit::plugin::read_manifest(path);
          } catch (const archfit::plugin::PluginError& error) {
            refused = error.what();
          }
        },
        [&] { return refused.find("name") != std::string::npos; });
    fs::remove(path);
  }
  {
    const fs::path path =
        write_temporary("archfit_bench_fleet_",
                        "schema: archfit.fleet/1\nenvironments:\n  - name: demo\n    venv: /" +
                            std::string(line, 'v') + "\n");
    size_t environments = 0;
    std::string refused;
    measure(
        "fleet config (YAML)", fs::file_size(path),
        [&] {
          try {
            environments = archfit::fleet::read_fleet_config(path).environments.size();
          } catch (const archfit::fleet::FleetConfigError& error) {
            refused = error.what();
          }
        },
        [&] { return environments == 1 || !refused.empty(); });
    fs::remove(path);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const size_t megabytes = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 64;
  const auto kb = archfit::kb::load_knowledge_base(ARCHFIT_KB_SOURCE_DIR);
  std::printf("each entry point, one line, on a thread with a 256 KB stack\n");
  run_all(megabytes << 20, kb);
  if (argc <= 1) run_all(size_t{128} << 20, kb);  // twice: linear time shows as the same rate
  return 0;
}
