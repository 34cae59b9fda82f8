#include "cuda_driver.hpp"

#include <cstdio>

#include "sys/driver_library.hpp"
#include "sys/read_file.hpp"
#include "util/pattern.hpp"

namespace archfit::env {

namespace {

std::string format_uuid(const CUuuid& uuid) {
  // nvidia-smi's form: GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx
  std::string out = "GPU-";
  char byte[3];
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    std::snprintf(byte, sizeof byte, "%02x", static_cast<unsigned char>(uuid.bytes[i]));
    out += byte;
  }
  return out;
}

void read_release(const DriverProbeOptions& options, DriverProbe& probe) {
  const auto text = sys::read_file(options.proc_version);
  if (!text) return;  // no kernel module loaded: the findings already say why
  probe.release = parse_nvrm_release(*text);
}

}  // namespace

std::string DriverProbe::cuda_version_string() const {
  if (cuda_version <= 0) return {};
  return std::to_string(cuda_version / 1000) + "." + std::to_string((cuda_version % 1000) / 10);
}

std::string parse_nvrm_release(const std::string& text) {
  static const util::Pattern release(R"(Kernel Module(?:\s+for\s+\S+)?\s+(\d+\.\d+(?:\.\d+)?))");
  const auto match = release.search(text);
  return match ? (*match)[1] : std::string();
}

DriverProbe probe_driver(const DriverProbeOptions& options) {
  DriverProbe probe;
  read_release(options, probe);
  sys::DriverLibrary library(options.library);
  if (!library.loaded()) {
    probe.findings.push_back(library.failure());
    return probe;
  }
  probe.library = library.location();

  const sys::DriverApi& api = library.api();
  // What the probe cannot do without; the UUID is optional.
  const auto lacking =
      library.lacking({"cuInit", "cuDriverGetVersion", "cuDeviceGetCount", "cuDeviceGet",
                       "cuDeviceGetName", "cuDeviceGetAttribute", "cuDeviceTotalMem_v2"});
  if (!lacking.empty()) {
    probe.findings.push_back(library.not_a_driver());
    return probe;
  }
  if (api.driver_get_version(&probe.cuda_version) != CUDA_SUCCESS) probe.cuda_version = 0;

  const CUresult init = api.init(0);
  if (init != CUDA_SUCCESS) {
    std::string sentence =
        "The CUDA driver is installed but cuInit failed: " + library.error_text(init) + ".";
    if (init == CUDA_ERROR_NO_DEVICE)
      sentence = "The CUDA driver is installed but sees no GPU (cuInit: no CUDA-capable device).";
    if (init == CUDA_ERROR_SYSTEM_DRIVER_MISMATCH ||
        init == CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE) {
      sentence +=
          " The user-space driver library and the kernel module are of different versions; reboot "
          "or reinstall the driver.";
    }
    probe.findings.push_back(sentence);
    return probe;
  }
  int count = 0;
  if (const CUresult result = api.device_get_count(&count); result != CUDA_SUCCESS || count <= 0) {
    probe.findings.push_back(result == CUDA_SUCCESS ? "The CUDA driver works but reports no GPU."
                                                    : "The CUDA driver could not count GPUs: " +
                                                          library.error_text(result) + ".");
    return probe;
  }
  for (int ordinal = 0; ordinal < count; ++ordinal) {
    CUdevice device = 0;
    if (const CUresult result = api.device_get(&device, ordinal); result != CUDA_SUCCESS) {
      probe.findings.push_back("GPU " + std::to_string(ordinal) +
                               " could not be opened: " + library.error_text(result) + ".");
      continue;
    }
    GpuDevice gpu;
    gpu.ordinal = ordinal;
    char name_buffer[256] = {};
    if (api.device_get_name(name_buffer, sizeof name_buffer - 1, device) == CUDA_SUCCESS)
      gpu.name = name_buffer;
    api.device_get_attribute(&gpu.cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device);
    api.device_get_attribute(&gpu.cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device);
    size_t memory = 0;
    if (api.device_total_mem(&memory, device) == CUDA_SUCCESS) gpu.total_memory = memory;
    CUuuid uuid{};
    if (api.device_get_uuid && api.device_get_uuid(&uuid, device) == CUDA_SUCCESS)
      gpu.uuid = format_uuid(uuid);
    int domain = 0, bus = 0, slot = 0;
    api.device_get_attribute(&domain, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, device);
    api.device_get_attribute(&bus, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, device);
    api.device_get_attribute(&slot, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, device);
    char pci[32];
    std::snprintf(pci, sizeof pci, "%04x:%02x:%02x.0", domain, bus, slot);
    gpu.pci_bus_id = pci;
    if (gpu.cc_major <= 0) {
      probe.findings.push_back("GPU " + std::to_string(ordinal) + " (" + gpu.name +
                               ") did not report its compute capability.");
      continue;
    }
    probe.devices.push_back(std::move(gpu));
  }
  return probe;
}

}  // namespace archfit::env
