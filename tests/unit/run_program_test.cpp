// sys/run_program: a program's output, how it ended, and the variables set
// for it over this process's environment (what `jit bundle` hands each
// `archfit jit compile` it starts: the cache and NVRTC it was given). The
// same cases on Windows (cross-built, under Wine) through cmd.exe, in a job
// object (sys/windows/run_program.cpp).
#include "sys/run_program.hpp"
#include "saved_env.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

using namespace archfit::sys;

namespace {

// A shell and what to ask of it for each case.
struct Shell {
  const char* program;
  std::vector<std::string> print_and_exit_3;  // "out" to stdout, "err" to stderr
  const char* printed;
  std::vector<std::string> print_variables;  // KEPT|REPLACED, and on POSIX ADDED|count
  const char* variables_printed;
  std::vector<std::string> run_for_long;
  const char* missing_program;
  std::vector<std::string> print_folder;  // the folder it runs in
  // More to stderr than a pipe holds, and a line to stdout: a reader that
  // reads one pipe to its end before the other would wait for good.
  std::vector<std::string> flood_stderr_then_print;
  std::vector<std::string> print_without_end;  // line after line, for minutes
};

#ifdef _WIN32
const Shell kShell{"C:\\windows\\system32\\cmd.exe",
                   {"/c", "echo out& echo err>&2& exit 3"},
                   "out\r\nerr\r\n",
                   {"/c", "echo %ARCHFIT_RUN_PROGRAM_KEPT%^|%ARCHFIT_RUN_PROGRAM_REPLACED%"},
                   "kept|new\r\n",
                   {"/c", "for /L %i in (1,1,2000000000) do rem"},
                   "C:\\no\\such\\program.exe",
                   {"/c", "cd"},
                   // stdout first: Wine's cmd mishandles a redirected ( … ) block.
                   {"/c",
                    "echo out& for /L %i in (1,1,3000) do @echo line %i of stderr, to fill a "
                    "pipe past its 64 KiB>&2"},
                   {"/c", "for /L %i in (1,1,2000000000) do @echo line %i"}};
#else
const Shell kShell{
    "/bin/sh",
    {"-c", "echo out; echo err >&2; exit 3"},
    "out\nerr\n",
    {"-c",
     "printf '%s|%s|%s|' \"$ARCHFIT_RUN_PROGRAM_KEPT\" \"$ARCHFIT_RUN_PROGRAM_REPLACED\" "
     "\"$ARCHFIT_RUN_PROGRAM_ADDED\"; env | grep -c '^ARCHFIT_RUN_PROGRAM_REPLACED='"},
    // Replaced, not given twice.
    "kept|new|Modèles 模型|1\n",
    {"-c", "sleep 30"},
    "/no/such/program",
    {"-c", "pwd"},
    {"-c",
     "seq 1 3000 | sed 's/.*/line & of stderr, to fill a pipe past its 64 KiB/' >&2; echo out"},
    {"-c", "yes line"}};
#endif

}  // namespace

TEST(RunProgram, CapturesOutputAndExitStatus) {
  ProgramOptions options;
  options.standard_error = StandardError::merged;
  const auto result = run_program(kShell.program, kShell.print_and_exit_3, options);
  EXPECT_TRUE(result.exited);
  EXPECT_EQ(result.exit_status, 3);
  EXPECT_EQ(result.output, kShell.printed);
}

TEST(RunProgram, VariablesAreSetOverThisProcesssEnvironment) {
  archfit::testing::set_env("ARCHFIT_RUN_PROGRAM_KEPT", "kept");
  archfit::testing::set_env("ARCHFIT_RUN_PROGRAM_REPLACED", "old");
  ProgramOptions options;
  options.environment = {{"ARCHFIT_RUN_PROGRAM_REPLACED", "new"},
                         {"ARCHFIT_RUN_PROGRAM_ADDED", "Modèles 模型"}};
  const auto result = run_program(kShell.program, kShell.print_variables, options);
  archfit::testing::unset_env("ARCHFIT_RUN_PROGRAM_KEPT");
  archfit::testing::unset_env("ARCHFIT_RUN_PROGRAM_REPLACED");
  ASSERT_TRUE(result.succeeded()) << result.output;
  EXPECT_EQ(result.output, kShell.variables_printed);
  // This process's own environment is left as it was.
  EXPECT_EQ(std::getenv("ARCHFIT_RUN_PROGRAM_ADDED"), nullptr);
}

TEST(RunProgram, AProgramPastItsTimeLimitIsStopped) {
  ProgramOptions options;
  options.timeout = std::chrono::milliseconds(200);
  const auto result = run_program(kShell.program, kShell.run_for_long, options);
  EXPECT_TRUE(result.timed_out);
  EXPECT_FALSE(result.succeeded());
}

TEST(RunProgram, AProgramThatIsNotThereCannotBeStarted) {
  EXPECT_THROW(run_program(kShell.missing_program, {}), std::system_error);
}

TEST(RunProgram, StderrCapturedApartLeavesStdoutWhole) {
  ProgramOptions options;
  options.standard_error = StandardError::captured;
  const auto result = run_program(kShell.program, kShell.flood_stderr_then_print, options);
  ASSERT_TRUE(result.succeeded()) << result.output;
  EXPECT_EQ(result.output.substr(0, 3), "out");
  EXPECT_GT(result.error_output.size(), size_t{65536});
  EXPECT_NE(result.error_output.find("line 3000 of stderr"), std::string::npos);
  EXPECT_EQ(result.error_output.find("out"), std::string::npos);
}

TEST(RunProgram, StartsInTheFolderItIsGiven) {
  const std::filesystem::path folder =
      std::filesystem::temp_directory_path() / "archfit run_program folder";
  std::filesystem::create_directories(folder);
  ProgramOptions options;
  options.working_directory = folder;
  const auto result = run_program(kShell.program, kShell.print_folder, options);
  std::filesystem::remove_all(folder);
  ASSERT_TRUE(result.succeeded()) << result.output;
  // Both print it without a trailing separator, and a line end after.
  const std::u8string expected = folder.u8string();
  EXPECT_EQ(result.output.substr(0, result.output.find_first_of("\r\n")),
            std::string(expected.begin(), expected.end()));
}

// A program that prints without end is killed on passing the limit, not
// read until its time runs out (a plugin that floods, on Windows).
TEST(RunProgram, AProgramPrintingPastTheLimitIsStoppedThen) {
  ProgramOptions options;
  options.timeout = std::chrono::seconds(60);
  options.standard_error = StandardError::merged;
  options.max_output = 64 << 10;
  options.stop_past_max_output = true;
  const auto started = std::chrono::steady_clock::now();
  const auto result = run_program(kShell.program, kShell.print_without_end, options);
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(30));
  EXPECT_TRUE(result.output_overflowed);
  EXPECT_FALSE(result.timed_out);
  EXPECT_FALSE(result.succeeded());
  EXPECT_EQ(result.output.size(), options.max_output);
  EXPECT_EQ(result.how_it_ended(options), "stopped after writing more than 65536 bytes");
}
