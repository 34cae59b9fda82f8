#include "sys/machine.hpp"

#include "sys/windows/wide.hpp"

namespace archfit::sys {

// In ELF's names, as the Linux build reports them: a DLL built for another
// CPU is compared with this one the same way (binary/host_binary.hpp).
std::string this_machine() {
  SYSTEM_INFO info{};
  ::GetNativeSystemInfo(&info);
  switch (info.wProcessorArchitecture) {
    case PROCESSOR_ARCHITECTURE_AMD64:
      return "x86_64";
    case PROCESSOR_ARCHITECTURE_ARM64:
      return "aarch64";
    default:
      return {};
  }
}

unsigned long this_process_id() { return ::GetCurrentProcessId(); }

// WSL2 is a Linux; a Windows build runs on Windows itself.
bool running_under_wsl(const char*) { return false; }

}  // namespace archfit::sys
