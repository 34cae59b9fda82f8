#include "sys/driver_library.hpp"

namespace archfit::sys {

// The driver installs nvcuda.dll in System32, which the loader searches.
std::vector<std::filesystem::path> default_driver_libraries() { return {"nvcuda.dll"}; }

}  // namespace archfit::sys
