#include "module_confirm.hpp"

#include <new>
#include <span>

#include "binary/elf.hpp"
#include "binary/fatbin.hpp"
#include "binary/payload.hpp"
#include "sys/driver_library.hpp"

namespace archfit::env {

namespace {

binary::ByteReader reader(const std::vector<uint8_t>& image) {
  return binary::ByteReader(std::as_bytes(std::span(image)));
}

bool is_fatbin(const binary::ByteReader& bytes) {
  return bytes.contains(0, 4) && bytes.u32(0, "magic") == binary::fatbin::kContainerMagic;
}

constexpr uint64_t kElf64ProgramHeaderSize = 56;
constexpr uint16_t kExtendedProgramHeaderCount = 0xffff;  // PN_XNUM

// Why the driver must not read this ELF, or "": its section table, its
// program header table and every segment it describes lie inside `bytes`.
std::string elf_problem(const binary::ByteReader& bytes) {
  try {
    const binary::ElfFile file = binary::read_elf(bytes);
    if (!file.problems.empty()) return file.problems.front().message;
    // read_elf checks the section table; the driver reads the program headers too.
    const uint64_t offset = bytes.u64(0x20, "e_phoff");
    const uint64_t count = bytes.u16(0x38, "e_phnum"), entry = bytes.u16(0x36, "e_phentsize");
    if (count == 0) return {};
    if (count == kExtendedProgramHeaderCount)
      return "the ELF uses extended program header numbering (PN_XNUM), which no cubin does";
    if (entry < kElf64ProgramHeaderSize) {
      return "the ELF's program header entries are " + std::to_string(entry) +
             " bytes, smaller than an ELF64 program header (56)";
    }
    if (!bytes.contains(offset, count * entry)) {  // both at most 65535: no overflow
      return "the ELF program headers extend past the end of the image (" +
             std::to_string(bytes.size()) + " bytes)";
    }
    for (uint64_t i = 0; i < count; ++i) {
      const uint64_t header = offset + i * entry;
      const uint64_t data = bytes.u64(header + 8, "p_offset");
      const uint64_t size = bytes.u64(header + 32, "p_filesz");
      if (size != 0 && !bytes.contains(data, size)) {
        return "ELF segment " + std::to_string(i) + " (offset " + binary::hex(data) + ", " +
               std::to_string(size) + " bytes) extends past the end of the image (" +
               std::to_string(bytes.size()) + " bytes)";
      }
    }
  } catch (const binary::ScanError& error) {
    return error.what();
  }
  return {};
}

// Why the driver must not read this fatbin container, or "": it parses whole
// (every entry inside it), and each SASS entry's cubin, decompressed where
// it is compressed, passes elf_problem. The container is read back from the
// file after the scan, so it is checked again here, not trusted.
std::string fatbin_problem(const binary::ByteReader& bytes) {
  std::vector<binary::Image> images;
  try {
    binary::read_container(bytes, 0, bytes.size(), {"the container"}, images);
  } catch (const binary::ScanError& error) {
    return error.what();
  }
  for (const binary::Image& image : images) {
    if (image.kind != binary::ImageKind::sass) continue;
    try {
      const std::vector<std::byte> cubin = binary::payload_bytes(bytes, image);
      if (std::string problem = elf_problem(binary::ByteReader(cubin)); !problem.empty())
        return "the " + image.arch_name() + " entry at " + binary::hex(image.offset) + ": " +
               problem;
    } catch (const binary::ScanError& error) {
      return "the " + image.arch_name() + " entry: " + error.what();
    } catch (const std::bad_alloc&) {
      return "the " + image.arch_name() + " entry at " + binary::hex(image.offset) +
             ": no memory to decompress it for checking";
    }
  }
  return {};
}

// cuModuleLoadData takes no length: the driver trusts the sizes inside the
// image. Bytes whose own headers reach past their end would have it read
// outside the buffer, so those are never handed over; this says why.
std::string cut_short(const std::vector<uint8_t>& image) {
  if (image.empty()) return "no bytes to load";
  const binary::ByteReader bytes = reader(image);
  if (is_fatbin(bytes)) return fatbin_problem(bytes);
  switch (binary::classify_elf(bytes)) {
    case binary::ElfClass::not_elf:
      return {};
    case binary::ElfClass::other_elf:
      return "a 32-bit or big-endian ELF, which no CUDA driver loads";
    case binary::ElfClass::elf64_le:
      break;
  }
  return elf_problem(bytes);
}

// Anything else is handed over as text, which the driver reads up to a NUL.
const void* bytes_for_driver(const std::vector<uint8_t>& image, std::vector<uint8_t>& copy) {
  const binary::ByteReader bytes = reader(image);
  if (is_fatbin(bytes) || binary::classify_elf(bytes) != binary::ElfClass::not_elf ||
      image.back() == 0) {
    return image.data();
  }
  copy.reserve(image.size() + 1);
  copy.assign(image.begin(), image.end());
  copy.push_back(0);
  return copy.data();
}

std::string describe(const sys::DriverLibrary& library, CUresult result) {
  return library.error_name(result) + ": " + library.error_text(result);
}

constexpr const char* kNotConfirmed = " The verdicts could not be confirmed by the driver.";

// Whether the library has what loading modules needs; if not, a finding says what is missing.
bool can_load_modules(const sys::DriverLibrary& library, ModuleConfirmation& out) {
  if (!library.lacking({"cuInit", "cuDeviceGet"}).empty()) {
    out.findings.push_back(library.not_a_driver() + kNotConfirmed);
    return false;
  }
  const auto lacking = library.lacking({"cuDevicePrimaryCtxRetain", "cuDevicePrimaryCtxRelease_v2",
                                        "cuCtxPushCurrent_v2", "cuCtxPopCurrent_v2",
                                        "cuModuleLoadData", "cuModuleUnload"});
  if (lacking.empty()) return true;
  std::string names;
  for (const auto& name : lacking) names += (names.empty() ? "" : ", ") + name;
  out.findings.push_back("The CUDA driver library " + library.location().string() + " lacks " +
                         names + ", which loading device code needs." + kNotConfirmed);
  return false;
}

void describe_device(const sys::DriverApi& api, CUdevice device, ModuleConfirmation& out) {
  if (api.device_get_name) {
    char name[256] = {};
    if (api.device_get_name(name, sizeof name - 1, device) == CUDA_SUCCESS) out.device_name = name;
  }
  if (api.device_get_attribute) {
    api.device_get_attribute(&out.cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device);
    api.device_get_attribute(&out.cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device);
  }
}

ModuleLoad load_one(const sys::DriverLibrary& library, const ModuleRequest& request) {
  const sys::DriverApi& api = library.api();
  ModuleLoad load;
  load.label = request.label;
  load.problem = cut_short(request.image);
  if (!load.problem.empty()) return load;
  std::vector<uint8_t> copy;
  const void* data = bytes_for_driver(request.image, copy);
  CUmodule module = nullptr;
  const CUresult result = api.module_load_data(&module, data);
  load.asked = true;
  load.result = static_cast<int>(result);
  load.loaded = result == CUDA_SUCCESS;
  if (load.loaded) {
    api.module_unload(module);
  } else {
    load.error_name = library.error_name(result);
    load.error_text = library.error_text(result);
  }
  return load;
}

}  // namespace

ModuleConfirmation confirm_modules(std::span<const ModuleRequest> requests,
                                   const ModuleConfirmOptions& options) {
  ModuleConfirmation out;
  sys::DriverLibrary library(options.library);
  if (!library.loaded()) {
    out.findings.push_back(library.failure() + kNotConfirmed);
    return out;
  }
  out.library = library.location();
  if (!can_load_modules(library, out)) return out;
  const sys::DriverApi& api = library.api();
  if (api.driver_get_version && api.driver_get_version(&out.cuda_version) != CUDA_SUCCESS)
    out.cuda_version = 0;

  if (const CUresult init = api.init(0); init != CUDA_SUCCESS) {
    out.findings.push_back("The CUDA driver is installed but cuInit failed (" +
                           describe(library, init) + ")." + kNotConfirmed);
    return out;
  }
  const std::string gpu = "GPU " + std::to_string(options.device);
  CUdevice device = 0;
  if (const CUresult result = api.device_get(&device, options.device); result != CUDA_SUCCESS) {
    out.findings.push_back(gpu + " could not be opened (" + describe(library, result) + ")." +
                           kNotConfirmed);
    return out;
  }
  describe_device(api, device, out);
  CUcontext context = nullptr;
  if (const CUresult result = api.primary_ctx_retain(&context, device); result != CUDA_SUCCESS) {
    out.findings.push_back("The primary context of " + gpu + " could not be retained (" +
                           describe(library, result) + ")." + kNotConfirmed);
    return out;
  }
  if (const CUresult result = api.ctx_push_current(context); result != CUDA_SUCCESS) {
    out.findings.push_back("The primary context of " + gpu + " could not be made current (" +
                           describe(library, result) + ")." + kNotConfirmed);
    api.primary_ctx_release(device);
    return out;
  }
  out.loads.reserve(requests.size());
  for (const ModuleRequest& request : requests) out.loads.push_back(load_one(library, request));

  CUcontext popped = nullptr;
  if (const CUresult result = api.ctx_pop_current(&popped);
      result != CUDA_SUCCESS || popped != context) {
    out.findings.push_back("The primary context of " + gpu + " was not the current one afterwards" +
                           (result == CUDA_SUCCESS ? "" : " (" + describe(library, result) + ")") +
                           ".");
  }
  if (const CUresult result = api.primary_ctx_release(device); result != CUDA_SUCCESS) {
    out.findings.push_back("The primary context of " + gpu + " could not be released (" +
                           describe(library, result) + ").");
  }
  return out;
}

}  // namespace archfit::env
