#include "sys/driver_library.hpp"

namespace archfit::sys {

std::vector<std::filesystem::path> default_driver_libraries() {
  // WSL2 puts the Windows driver's libcuda in /usr/lib/wsl/lib, which the
  // loader finds only where ld.so.conf names it (ld.wsl.conf); there is no
  // libcuda.so there, only libcuda.so.1.
  return {"libcuda.so.1", "/usr/lib/wsl/lib/libcuda.so.1"};
}

}  // namespace archfit::sys
