// The test-only driver (tests/fakes/fake_libcuda.c) must answer like the real
// one for what the JIT path and --confirm use: contexts, module loading,
// kernel lookup and launch. Reached through sys::DriverLibrary, as archfit does.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "fixture_files.hpp"
#include "saved_env.hpp"
#include "sys/driver_library.hpp"

namespace {

using archfit::sys::DriverLibrary;
using archfit::testing::kFixtureDir;

class FakeDriver : public archfit::testing::FixtureTest {
 protected:
  void SetUp() override {
    FixtureTest::SetUp();
    if (IsSkipped()) return;
    archfit::testing::set_env("ARCHFIT_FAKE_CUDA_DEVICES",
                              "Ampere,8.6,1073741824;Blackwell,12.0,1073741824");
    archfit::testing::set_env("ARCHFIT_FAKE_CUDA_VERSION", "13000");
    archfit::testing::unset_env("ARCHFIT_FAKE_CUDA_INIT");
    archfit::testing::unset_env("ARCHFIT_FAKE_CUDA_MODULE_LOAD");
    ASSERT_TRUE(driver_.loaded()) << driver_.failure();
    const auto lacking = driver_.lacking(
        {"cuInit", "cuDevicePrimaryCtxRetain", "cuDevicePrimaryCtxRelease_v2",
         "cuCtxPushCurrent_v2", "cuCtxPopCurrent_v2", "cuCtxSetCurrent", "cuCtxGetCurrent",
         "cuModuleLoadData", "cuModuleUnload", "cuModuleGetFunction", "cuLaunchKernel",
         "cuGetErrorName", "cuGetErrorString"});
    ASSERT_TRUE(lacking.empty()) << lacking.front();
    ASSERT_EQ(api_.init(0), CUDA_SUCCESS);
  }

  // Makes device `ordinal`'s primary context current; TearDown undoes it.
  void enter(int ordinal) {
    ASSERT_EQ(api_.primary_ctx_retain(&context_, ordinal), CUDA_SUCCESS);
    device_ = ordinal;
    ASSERT_EQ(api_.ctx_push_current(context_), CUDA_SUCCESS);
  }
  void TearDown() override {
    if (!context_) return;
    CUcontext popped = nullptr;
    EXPECT_EQ(api_.ctx_pop_current(&popped), CUDA_SUCCESS);
    EXPECT_EQ(popped, context_);
    EXPECT_EQ(api_.primary_ctx_release(device_), CUDA_SUCCESS);
  }

  CUresult load(CUmodule& module, const std::string& fixture) {
    auto bytes = archfit::testing::read_bytes(kFixtureDir / fixture);
    if (fixture.ends_with(".ptx")) bytes.push_back(0);
    return api_.module_load_data(&module, bytes.data());
  }

  CUresult launch(CUfunction function, unsigned grid, unsigned block) {
    return api_.launch_kernel(function, grid, 1, 1, block, 1, 1, 0, nullptr, nullptr, nullptr);
  }

  archfit::testing::SavedEnv saved_{"ARCHFIT_FAKE_CUDA_VERSION", "ARCHFIT_FAKE_CUDA_INIT",
                                    "ARCHFIT_FAKE_CUDA_DEVICES", "ARCHFIT_FAKE_CUDA_MODULE_LOAD"};
  DriverLibrary driver_{ARCHFIT_FAKE_CUDA};
  const archfit::sys::DriverApi& api_ = driver_.api();
  CUcontext context_ = nullptr;
  CUdevice device_ = 0;
};

}  // namespace

TEST_F(FakeDriver, FindsKernelsByTheirMangledNames) {
  // A cubin, PTX text, zstd-compressed PTX, LZ4-compressed SASS.
  const struct {
    const char* fixture;
    int device;
  } cases[] = {{"sm_80.cubin", 0},
               {"compute_90.ptx", 1},
               {"compute_90.fatbin", 1},
               {"compress_speed.fatbin", 0}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.fixture);
    enter(c.device);
    CUmodule module = nullptr;
    ASSERT_EQ(load(module, c.fixture), CUDA_SUCCESS);
    CUfunction scale = nullptr, offset = nullptr, missing = nullptr;
    EXPECT_EQ(api_.module_get_function(&scale, module, "_Z5scalePffi"), CUDA_SUCCESS);
    EXPECT_EQ(api_.module_get_function(&offset, module, "_Z6offsetPffi"), CUDA_SUCCESS);
    EXPECT_NE(scale, offset);
    EXPECT_EQ(api_.module_get_function(&missing, module, "scale"), CUDA_ERROR_NOT_FOUND);
    EXPECT_EQ(api_.module_unload(module), CUDA_SUCCESS);
    TearDown();
    context_ = nullptr;
  }
}

TEST_F(FakeDriver, AcceptsAWellFormedLaunchAndRunsNothing) {
  enter(0);
  CUmodule module = nullptr;
  ASSERT_EQ(load(module, "sm_80.cubin"), CUDA_SUCCESS);
  CUfunction scale = nullptr;
  ASSERT_EQ(api_.module_get_function(&scale, module, "_Z5scalePffi"), CUDA_SUCCESS);
  EXPECT_EQ(launch(scale, 4, 256), CUDA_SUCCESS);
  EXPECT_EQ(launch(scale, 0, 256), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(launch(scale, 4, 2048), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(launch(nullptr, 4, 256), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(api_.module_unload(module), CUDA_SUCCESS);
  EXPECT_EQ(launch(scale, 4, 256), CUDA_ERROR_INVALID_HANDLE);  // its module is gone
  EXPECT_EQ(api_.module_unload(module), CUDA_ERROR_INVALID_HANDLE);
}

TEST_F(FakeDriver, LoadingNeedsACurrentLiveContext) {
  CUmodule module = nullptr;
  EXPECT_EQ(load(module, "sm_80.cubin"), CUDA_ERROR_INVALID_CONTEXT);
  CUcontext context = nullptr;
  ASSERT_EQ(api_.primary_ctx_retain(&context, 0), CUDA_SUCCESS);
  ASSERT_EQ(api_.ctx_push_current(context), CUDA_SUCCESS);
  ASSERT_EQ(api_.primary_ctx_release(0), CUDA_SUCCESS);  // the last reference: the context is gone
  EXPECT_EQ(load(module, "sm_80.cubin"), CUDA_ERROR_CONTEXT_IS_DESTROYED);
  EXPECT_EQ(api_.primary_ctx_release(0), CUDA_ERROR_INVALID_CONTEXT);
  CUcontext popped = nullptr;
  EXPECT_EQ(api_.ctx_pop_current(&popped), CUDA_SUCCESS);
  EXPECT_EQ(popped, context);
}

TEST_F(FakeDriver, KeepsAContextStackPerThread) {
  CUcontext current = reinterpret_cast<CUcontext>(1);
  ASSERT_EQ(api_.ctx_get_current(&current), CUDA_SUCCESS);
  EXPECT_EQ(current, nullptr);
  CUcontext ampere = nullptr, blackwell = nullptr;
  ASSERT_EQ(api_.primary_ctx_retain(&ampere, 0), CUDA_SUCCESS);
  ASSERT_EQ(api_.primary_ctx_retain(&blackwell, 1), CUDA_SUCCESS);
  EXPECT_NE(ampere, blackwell);
  ASSERT_EQ(api_.ctx_push_current(ampere), CUDA_SUCCESS);
  ASSERT_EQ(api_.ctx_push_current(blackwell), CUDA_SUCCESS);
  ASSERT_EQ(api_.ctx_get_current(&current), CUDA_SUCCESS);
  EXPECT_EQ(current, blackwell);
  // The device of the current context decides: sm_80 runs on 8.6, not on 12.0.
  CUmodule module = nullptr;
  EXPECT_EQ(load(module, "sm_80.cubin"), CUDA_ERROR_NO_BINARY_FOR_GPU);
  ASSERT_EQ(api_.ctx_set_current(ampere), CUDA_SUCCESS);  // replaces the top
  ASSERT_EQ(load(module, "sm_80.cubin"), CUDA_SUCCESS);
  EXPECT_EQ(api_.module_unload(module), CUDA_SUCCESS);
  ASSERT_EQ(api_.ctx_set_current(nullptr), CUDA_SUCCESS);  // pops
  ASSERT_EQ(api_.ctx_get_current(&current), CUDA_SUCCESS);
  EXPECT_EQ(current, ampere);
  CUcontext popped = nullptr;
  ASSERT_EQ(api_.ctx_pop_current(&popped), CUDA_SUCCESS);
  EXPECT_EQ(api_.ctx_pop_current(&popped), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_EQ(api_.primary_ctx_release(0), CUDA_SUCCESS);
  EXPECT_EQ(api_.primary_ctx_release(1), CUDA_SUCCESS);
}

TEST_F(FakeDriver, NamesErrorsLikeTheDriverAndRefusesUnknownCodes) {
  const char* name = nullptr;
  EXPECT_EQ(api_.get_error_name(CUDA_ERROR_NO_BINARY_FOR_GPU, &name), CUDA_SUCCESS);
  EXPECT_STREQ(name, "CUDA_ERROR_NO_BINARY_FOR_GPU");
  EXPECT_EQ(driver_.error_name(CUDA_ERROR_UNSUPPORTED_PTX_VERSION),
            "CUDA_ERROR_UNSUPPORTED_PTX_VERSION");
  // A code no driver names yet (777). It stays inside CUresult's range
  // (0..1023, from CUDA_ERROR_UNKNOWN = 999): casting 12345, as this test
  // once did, is undefined behaviour in C++, which UBSan reported.
  const auto unknown = static_cast<CUresult>(777);
  EXPECT_EQ(api_.get_error_name(unknown, &name), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(driver_.error_name(unknown), "CUDA error 777");
  EXPECT_EQ(driver_.error_text(unknown), "CUDA error 777");
}

TEST_F(FakeDriver, GarbageIsAnInvalidImageAndBrokenPtxAFailedJit) {
  enter(0);
  CUmodule module = nullptr;
  EXPECT_EQ(api_.module_load_data(&module,
                                  "\x7f"
                                  "ELF not really"),
            CUDA_ERROR_INVALID_IMAGE);
  EXPECT_EQ(api_.module_load_data(&module, ""), CUDA_ERROR_INVALID_IMAGE);
  EXPECT_EQ(api_.module_load_data(&module, "// a comment\n.version 9.0\n.address_size 64\n"),
            CUDA_ERROR_INVALID_PTX);
  EXPECT_EQ(api_.module_load_data(&module, ".version 9.0\n.target sm_80\n"), CUDA_SUCCESS);
  EXPECT_EQ(api_.module_unload(module), CUDA_SUCCESS);
}

// Issue 33: under WSL2 the Windows driver's libcuda.so.1 is in
// /usr/lib/wsl/lib (no libcuda.so beside it), found by the loader only where
// ld.so.conf names the folder; archfit looks there after the loader's path.
TEST(DriverLibraryDefaults, TheLoadersPathFirstThenWslsDriverFolder) {
  const auto candidates = archfit::sys::default_driver_libraries();
#ifdef _WIN32
  // Windows has one driver library, found by the loader's search order.
  ASSERT_EQ(candidates, std::vector<std::filesystem::path>{"nvcuda.dll"});
  GTEST_SKIP() << "the WSL folder is Linux's";
#endif
  ASSERT_EQ(candidates.size(), 2u);
  EXPECT_EQ(candidates[0], "libcuda.so.1");
  EXPECT_EQ(candidates[1], "/usr/lib/wsl/lib/libcuda.so.1");
  if (std::filesystem::exists(candidates[1]) || archfit::sys::DriverLibrary().loaded())
    GTEST_SKIP() << "this machine has a driver";
  // With neither, the failure names the library a user knows.
  const archfit::sys::DriverLibrary none;
  EXPECT_FALSE(none.loaded());
  EXPECT_EQ(none.failure().rfind("No NVIDIA driver: libcuda.so.1 could not be loaded", 0), 0u)
      << none.failure();
}
