// A fix in the environment's own interpreter and the user's shell (issue
// 33): POSIX sh for a Linux venv, cmd and PowerShell for a Windows tree,
// paths with spaces, quotes and non-ASCII letters kept whole.
#include "check/environment_commands.hpp"
#include "sys/utf8_path.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

using archfit::check::command_for;
using archfit::check::CommandTarget;
using archfit::check::Shell;
using archfit::check::windows_path;

const CommandTarget kLinuxVenv{"/home/ana/comfy/.venv/bin/python", false};
const CommandTarget kPortable{"/mnt/c/ComfyUI_windows_portable/python_embeded/python.exe", true};

TEST(EnvironmentCommands, ALinuxVenvsPipIsItsInterpreterInDoubleQuotes) {
  EXPECT_EQ(command_for("pip install torch==2.8.0+cu128 --index-url "
                        "https://download.pytorch.org/whl/cu128",
                        kLinuxVenv, Shell::posix),
            "\"/home/ana/comfy/.venv/bin/python\" -m pip install torch==2.8.0+cu128 --index-url "
            "https://download.pytorch.org/whl/cu128");
  EXPECT_EQ(command_for("pip uninstall -y xformers", kLinuxVenv, Shell::posix),
            "\"/home/ana/comfy/.venv/bin/python\" -m pip uninstall -y xformers");
}

TEST(EnvironmentCommands, PosixQuotingKeepsSpacesDollarsAndNonAsciiWhole) {
  // A path from UTF-8 text, as archfit makes every path that arrives as text.
  const CommandTarget odd{archfit::sys::path_of_utf8("/home/zoë/My Comfy/$venv/bin/python"), false};
  EXPECT_EQ(command_for("pip install -U \"bitsandbytes>=0.45.3\"", odd, Shell::posix),
            "'/home/zoë/My Comfy/$venv/bin/python' -m pip install -U \"bitsandbytes>=0.45.3\"");
  EXPECT_EQ(command_for("cd \"/srv/custom nodes/pack\" && TORCH_CUDA_ARCH_LIST=\"8.9;12.0\" pip "
                        "install --no-build-isolation --force-reinstall .",
                        kLinuxVenv, Shell::posix),
            "cd \"/srv/custom nodes/pack\" && TORCH_CUDA_ARCH_LIST=\"8.9;12.0\" "
            "\"/home/ana/comfy/.venv/bin/python\" -m pip install --no-build-isolation "
            "--force-reinstall .");
}

TEST(EnvironmentCommands, PortablesPipIsPythonEmbededInWindowsWordsForCmd) {
  EXPECT_EQ(command_for("pip install torch==2.8.0+cu128 torchvision==0.23.0+cu128 "
                        "--index-url https://download.pytorch.org/whl/cu128",
                        kPortable, Shell::cmd),
            "\"C:\\ComfyUI_windows_portable\\python_embeded\\python.exe\" -m pip install "
            "torch==2.8.0+cu128 torchvision==0.23.0+cu128 --index-url "
            "https://download.pytorch.org/whl/cu128");
  EXPECT_EQ(command_for("cd \"/mnt/d/AI/ComfyUI/custom_nodes/My Pack\" && "
                        "TORCH_CUDA_ARCH_LIST=\"12.0\" pip install --no-build-isolation .",
                        kPortable, Shell::cmd),
            "cd /d \"D:\\AI\\ComfyUI\\custom_nodes\\My Pack\" && set \"TORCH_CUDA_ARCH_LIST=12.0\" "
            "&& \"C:\\ComfyUI_windows_portable\\python_embeded\\python.exe\" -m pip install "
            "--no-build-isolation .");
  EXPECT_EQ(command_for("pip install -U \"bitsandbytes>=0.45.3\"", kPortable, Shell::cmd),
            "\"C:\\ComfyUI_windows_portable\\python_embeded\\python.exe\" -m pip install -U "
            "\"bitsandbytes>=0.45.3\"");
}

TEST(EnvironmentCommands, PowerShellCallsTheInterpreterAndSetsVariablesItsWay) {
  EXPECT_EQ(command_for("pip install torch==2.8.0+cu128", kPortable, Shell::powershell),
            "& 'C:\\ComfyUI_windows_portable\\python_embeded\\python.exe' -m pip install "
            "torch==2.8.0+cu128");
  EXPECT_EQ(command_for("cd \"/mnt/c/Users/O'Neil/pack\" && TORCH_CUDA_ARCH_LIST=\"12.0\" pip "
                        "install -U \"bitsandbytes>=0.45.3\"",
                        kPortable, Shell::powershell),
            "Set-Location -ErrorAction Stop -LiteralPath 'C:\\Users\\O''Neil\\pack'; "
            "$env:TORCH_CUDA_ARCH_LIST = '12.0'; "
            "& 'C:\\ComfyUI_windows_portable\\python_embeded\\python.exe' -m pip install -U "
            "'bitsandbytes>=0.45.3'");
}

TEST(EnvironmentCommands, WithoutAnInterpreterPipStaysAndIsOnlyQuoted) {
  EXPECT_EQ(command_for("pip install -U \"bitsandbytes>=0.45.3\"", CommandTarget{}, Shell::posix),
            "pip install -U \"bitsandbytes>=0.45.3\"");
}

TEST(EnvironmentCommands, WslPathsBecomeDrivePathsAndOthersKeepTheirWords) {
  EXPECT_EQ(windows_path("/mnt/c/ComfyUI_windows_portable/python_embeded/python.exe"),
            "C:\\ComfyUI_windows_portable\\python_embeded\\python.exe");
  EXPECT_EQ(windows_path("/mnt/d"), "D:\\");
  EXPECT_EQ(windows_path("/srv/win/python.exe"), "\\srv\\win\\python.exe");
  // UTF-8 text in and out, byte for byte: found under Wine (issue 35), where
  // the path made of a std::string read "Modèles" as "ModÃ¨les".
  EXPECT_EQ(windows_path("/mnt/c/Users/Jos\xc3\xa9/Mod\xc3\xa8les \xe6\xa8\xa1\xe5\x9e\x8b"),
            "C:\\Users\\Jos\xc3\xa9\\Mod\xc3\xa8les \xe6\xa8\xa1\xe5\x9e\x8b");
  EXPECT_EQ(windows_path("C:\\Users\\Jos\xc3\xa9"), "C:\\Users\\Jos\xc3\xa9");
}

}  // namespace

namespace {

// Issue 34 row 4a: cmd.exe expands %NAME% inside double quotes and has no
// escape there, so a folder named with a % would run as another path. Such a
// fix gets no cmd command, says why, and keeps its PowerShell form, whose
// single quotes take % as it is.
TEST(EnvironmentCommands, APathHoldingAPercentGetsNoCmdCommandButItsPowerShellOne) {
  archfit::check::CheckReport report;
  archfit::check::StackResult stack;
  stack.fix.summary = "Install torch 2.8.0+cu128.";
  stack.fix.commands = {"pip install torch==2.8.0+cu128"};
  report.stacks.push_back(stack);
  const CommandTarget percent{"/mnt/c/Users/ana%PATH%x/python_embeded/python.exe", true};
  archfit::check::speak_in_environment(report, percent);
  const archfit::check::Fix& fix = report.stacks[0].fix;
  EXPECT_TRUE(fix.commands.empty()) << fix.commands[0];
  EXPECT_EQ(fix.shell, "cmd");
  EXPECT_EQ(fix.summary,
            "Install torch 2.8.0+cu128. " + std::string(archfit::check::kCmdCannotQuotePercent));
  ASSERT_EQ(fix.powershell_commands.size(), 1u);
  EXPECT_EQ(fix.powershell_commands[0],
            "& 'C:\\Users\\ana%PATH%x\\python_embeded\\python.exe' -m pip install "
            "torch==2.8.0+cu128");
  // Without a %, cmd gets its command as before.
  archfit::check::CheckReport plain;
  plain.stacks.push_back(stack);
  archfit::check::speak_in_environment(plain, kPortable);
  ASSERT_EQ(plain.stacks[0].fix.commands.size(), 1u);
  EXPECT_EQ(plain.stacks[0].fix.summary, "Install torch 2.8.0+cu128.");
}

}  // namespace
