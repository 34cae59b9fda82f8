#pragma once
// What the test driver (fake_libcuda.c) recorded of the last launch it
// accepted, read through its fake_cuda_last_launch export, for tests that
// check a launch reached the driver as described (stream, grid, block,
// shared memory, parameters). `driver_path` is the fake libcuda the code
// under test loaded; all zero when it is not loaded.
#include <dlfcn.h>

struct FakeLaunch {  // fake_libcuda.c's struct fake_cuda_launch
  void* function;
  unsigned grid[3], block[3], shared_bytes;
  void* stream;
  void** parameters;
  unsigned long long count;  // accepted launches so far
};

inline FakeLaunch last_fake_launch(const char* driver_path) {
  FakeLaunch launch{};
  void* driver = ::dlopen(driver_path, RTLD_LAZY | RTLD_NOLOAD);
  if (!driver) return launch;
  auto* read = reinterpret_cast<void (*)(FakeLaunch*)>(::dlsym(driver, "fake_cuda_last_launch"));
  if (read) read(&launch);
  ::dlclose(driver);
  return launch;
}
