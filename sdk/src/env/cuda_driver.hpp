#pragma once
// The machine's real GPUs and driver, asked through the CUDA driver API.
// libcuda is loaded at run time (docs/design.md, decision 1), so archfit starts on
// a machine with no driver, no GPU or a broken install; each of those comes
// back as a finding in a plain sentence, never as a crash.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace archfit::env {

struct GpuDevice {
  int ordinal = 0;
  std::string name;  // "NVIDIA GeForce RTX 5090"
  int cc_major = 0;  // 12
  int cc_minor = 0;  // 0
  uint64_t total_memory = 0;
  std::string uuid;        // "GPU-1b2c…", as nvidia-smi prints it
  std::string pci_bus_id;  // "0000:01:00.0"
};

struct DriverProbe {
  std::optional<std::filesystem::path> library;  // the libcuda that was loaded
  int cuda_version = 0;                          // cuDriverGetVersion: 12080 for CUDA 12.8
  std::string release;                           // "570.86.16", from /proc/driver/nvidia/version
  std::vector<GpuDevice> devices;
  std::vector<std::string> findings;  // why there is no device, in words

  bool usable() const { return !devices.empty(); }
  std::string cuda_version_string() const;  // "12.8"; "" when unknown
};

struct DriverProbeOptions {
  // Where to load libcuda from; empty: "libcuda.so.1" through the loader path.
  std::filesystem::path library;
  // Where the kernel module states its version; a test points elsewhere.
  std::filesystem::path proc_version = "/proc/driver/nvidia/version";
};

DriverProbe probe_driver(const DriverProbeOptions& options = {});

// "NVRM version: NVIDIA UNIX x86_64 Kernel Module  570.86.16  Thu …" → "570.86.16".
std::string parse_nvrm_release(const std::string& proc_version_text);

}  // namespace archfit::env
