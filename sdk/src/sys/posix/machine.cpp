#include "sys/machine.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <string>

namespace archfit::sys {

std::string this_machine() {
  struct utsname name {};
  if (::uname(&name) != 0) return {};
  return name.machine;
}

unsigned long this_process_id() { return static_cast<unsigned long>(::getpid()); }

bool running_under_wsl(const char* kernel_release_file) {
  std::ifstream file(kernel_release_file);
  std::string release;
  std::getline(file, release);
  std::transform(release.begin(), release.end(), release.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return release.find("microsoft") != std::string::npos;
}

}  // namespace archfit::sys
