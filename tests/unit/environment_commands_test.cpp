// A fix in the environment's own interpreter and the user's shell (issue
// 33): POSIX sh for a Linux venv, cmd and PowerShell for a Windows tree,
// paths with spaces, quotes and non-ASCII letters kept whole.
#include "check/environment_commands.hpp"

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
  const CommandTarget odd{"/home/zoë/My Comfy/$venv/bin/python", false};
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
}

}  // namespace
