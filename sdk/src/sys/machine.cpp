#include "sys/machine.hpp"

#include <sys/utsname.h>

namespace archfit::sys {

std::string this_machine() {
  struct utsname name {};
  if (::uname(&name) != 0) return {};
  return name.machine;
}

}  // namespace archfit::sys
