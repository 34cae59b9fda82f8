#pragma once
// The check's answer in one line — what uv's --torch-backend=auto and
// light-the-torch say from the driver alone, said from the GPU's arch, the
// driver and every CUDA package: the verdict, the first stack that fails and
// where, and the command that fixes it. Every front end shows this line.
#include <string>

#include "check.hpp"

namespace archfit::check {

std::string summary_line(const CheckReport& report);

// "has no image for GeForce RTX 5090 (sm_120)": what a failing verdict means
// for a stack, in words that follow its name.
std::string failure_words(const StackResult& stack, const CheckReport& report);

}  // namespace archfit::check
