// The machine archfit runs on (sys/machine): its CPU, and whether it is
// WSL2's Linux, whose GPU driver is the Windows one.
#include "sys/machine.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace {

namespace fs = std::filesystem;

// Whether a kernel release file reading `text` says WSL.
bool wsl_with_release(const std::string& text) {
  const fs::path file =
      fs::temp_directory_path() / ("archfit_osrelease_" + std::to_string(::getpid()));
  std::ofstream(file) << text;
  const bool wsl = archfit::sys::running_under_wsl(file.string().c_str());
  fs::remove(file);
  return wsl;
}

TEST(Machine, NamesItsCpuAsElfDoes) {
  const auto machine = archfit::sys::this_machine();
#if defined(__x86_64__)
  EXPECT_EQ(machine, "x86_64");
#elif defined(__aarch64__)
  EXPECT_EQ(machine, "aarch64");
#endif
}

TEST(Machine, TellsWsl2ByItsKernelRelease) {
#ifdef _WIN32
  // Windows is never WSL, whatever a file says.
  EXPECT_FALSE(wsl_with_release("5.15.167.4-microsoft-standard-WSL2\n"));
  GTEST_SKIP() << "a Linux kernel's release file";
#endif
  // Microsoft's WSL2 kernels, and WSL1's, as /proc/sys/kernel/osrelease reads.
  EXPECT_TRUE(wsl_with_release("5.15.167.4-microsoft-standard-WSL2\n"));
  EXPECT_TRUE(wsl_with_release("4.4.0-19041-Microsoft\n"));
  // Debian's and a custom kernel.
  EXPECT_FALSE(wsl_with_release("6.1.0-26-amd64\n"));
  EXPECT_FALSE(wsl_with_release(""));
  EXPECT_FALSE(archfit::sys::running_under_wsl("/nonexistent/osrelease"));
}

}  // namespace
