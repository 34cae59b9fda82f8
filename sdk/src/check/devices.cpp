#include "devices.hpp"

#include <cctype>

#include "env/cuda_driver.hpp"
#include "kb/kb_error.hpp"
#include "sys/driver_library.hpp"
#include "sys/machine.hpp"
#include "sys/utf8_path.hpp"

namespace archfit::check {

namespace {

// One sentence: why there is nothing to judge against.
std::string why_no_gpu(const env::DriverProbe& probe) {
  if (!probe.library)
    return "no NVIDIA driver is installed here (" +
           sys::utf8_of(sys::default_driver_libraries().front()) + " cannot be loaded)";
  if (probe.findings.empty()) return "the driver reports no GPU";
  std::string why = probe.findings.front();
  if (!why.empty() && why.back() == '.') why.pop_back();
  if (!why.empty()) why[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(why[0])));
  return why;
}

}  // namespace

void choose_devices(const CheckRequest& request, const CheckResources& resources,
                    const kb::KnowledgeBase& kb, CheckReport& report) {
  const std::string machine = sys::this_machine();
  for (const auto& name : request.gpus) {
    try {
      const auto gpu = kb.resolve_gpu(name);
      DeviceInfo device;
      device.name = gpu.name;
      device.cc = gpu.cc;
      device.simulated = true;
      const auto* architecture = kb.architecture(gpu.cc);
      const bool jetson = architecture && architecture->platform == kb::DriverPlatform::jetson;
      device.machine = gpu.entry && !gpu.entry->machine.empty() ? gpu.entry->machine
                       : jetson                                 ? "aarch64"
                                                                : machine;
      report.devices.push_back(std::move(device));
    } catch (const kb::KbError& error) {
      throw CheckError(std::string("--gpu: ") + error.what());
    }
  }
  // Devices and driver both simulated: nothing the real driver says is used.
  if (!request.gpus.empty() && request.driver) return;
  env::DriverProbeOptions probe_options;
  probe_options.library = resources.libcuda;
  const env::DriverProbe probe = env::probe_driver(probe_options);
  report.driver.version = probe.release;
  report.driver.cuda_version = probe.cuda_version_string();
  if (probe.library && sys::running_under_wsl())
    report.driver.family = kb::DriverFamily::windows_driver;
  if (!request.gpus.empty()) return;
  for (const auto& gpu : probe.devices) {
    DeviceInfo device;
    device.name = gpu.name;
    device.cc = {static_cast<uint32_t>(gpu.cc_major), static_cast<uint32_t>(gpu.cc_minor)};
    device.memory = gpu.total_memory;
    device.ordinal = gpu.ordinal;
    device.machine = machine;
    report.devices.push_back(std::move(device));
  }
  if (report.devices.empty()) report.no_gpu = why_no_gpu(probe);
}

void choose_driver(const CheckRequest& request, const kb::KnowledgeBase& kb, CheckReport& report) {
  // A Windows environment runs on a Windows driver, whatever reads it.
  if (report.command_target.windows) report.driver.family = kb::DriverFamily::windows_driver;
  const auto family = report.driver.family;
  if (request.driver) {
    report.driver.version = *request.driver;
    report.driver.cuda_version.clear();
    report.driver.simulated = true;
  } else if (report.driver.version.empty() && !report.driver.cuda_version.empty()) {
    // WSL2 has no /proc/driver/nvidia/version; the CUDA release the driver
    // reports bounds its number from below, which is all a check compares.
    if (const auto bound = kb.driver_reporting_cuda(report.driver.cuda_version, family)) {
      report.driver.version = bound->to_string();
      report.driver.at_least = true;
    }
  }
  for (auto& device : report.devices) device.first_driver = kb.first_driver_for(device.cc, family);
  if (report.driver.version.empty()) return;
  try {
    report.driver.max_ptx_isa = kb.max_ptx_isa_for_driver(report.driver.version, family);
  } catch (const kb::KbError& error) {
    throw CheckError(std::string("--driver: ") + error.what());
  }
  const auto driver = kb::parse_driver_version(report.driver.version);
  for (auto& device : report.devices) {
    if (device.first_driver && driver)
      device.driver_knows_it = compat::driver_knows_device(*driver, *device.first_driver);
  }
}

}  // namespace archfit::check
