// sys/run_program: a program's output, how it ended, and the variables set
// for it over this process's environment (what `jit bundle` hands each
// `archfit jit compile` it starts: the cache and NVRTC it was given).
#include "sys/run_program.hpp"

#include <gtest/gtest.h>

#include <cstdlib>

using namespace archfit::sys;

TEST(RunProgram, CapturesOutputAndExitStatus) {
  ProgramOptions options;
  options.merge_stderr = true;
  const auto result = run_program("/bin/sh", {"-c", "echo out; echo err >&2; exit 3"}, options);
  EXPECT_TRUE(result.exited);
  EXPECT_EQ(result.exit_status, 3);
  EXPECT_EQ(result.output, "out\nerr\n");
}

TEST(RunProgram, VariablesAreSetOverThisProcesssEnvironment) {
  ::setenv("ARCHFIT_RUN_PROGRAM_KEPT", "kept", 1);
  ::setenv("ARCHFIT_RUN_PROGRAM_REPLACED", "old", 1);
  ProgramOptions options;
  options.environment = {{"ARCHFIT_RUN_PROGRAM_REPLACED", "new"},
                         {"ARCHFIT_RUN_PROGRAM_ADDED", "Modèles 模型"}};
  const auto result = run_program(
      "/bin/sh",
      {"-c",
       "printf '%s|%s|%s|' \"$ARCHFIT_RUN_PROGRAM_KEPT\" \"$ARCHFIT_RUN_PROGRAM_REPLACED\" "
       "\"$ARCHFIT_RUN_PROGRAM_ADDED\"; env | grep -c '^ARCHFIT_RUN_PROGRAM_REPLACED='"},
      options);
  ::unsetenv("ARCHFIT_RUN_PROGRAM_KEPT");
  ::unsetenv("ARCHFIT_RUN_PROGRAM_REPLACED");
  ASSERT_TRUE(result.succeeded()) << result.output;
  // Replaced, not given twice.
  EXPECT_EQ(result.output, "kept|new|Modèles 模型|1\n");
  // This process's own environment is left as it was.
  EXPECT_EQ(std::getenv("ARCHFIT_RUN_PROGRAM_ADDED"), nullptr);
}

TEST(RunProgram, AProgramPastItsTimeLimitIsStopped) {
  ProgramOptions options;
  options.timeout = std::chrono::milliseconds(200);
  const auto result = run_program("/bin/sh", {"-c", "sleep 30"}, options);
  EXPECT_TRUE(result.timed_out);
  EXPECT_FALSE(result.succeeded());
}
