#pragma once
// CLI11's ExistingFile and ExistingDirectory for paths given in UTF-8: the
// command line is read as UTF-8 on every OS (sys/console.hpp), but CLI11's
// own checks read the text in the ANSI code page on Windows, where a folder
// named in another script ("C:\Users\José", "模型") would then be missing.
// The same words as CLI11's, so both builds say the same thing.
#include <CLI/CLI.hpp>

namespace archfit::cli {

CLI::Validator existing_file();
CLI::Validator existing_directory();

}  // namespace archfit::cli
