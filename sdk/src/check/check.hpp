#pragma once
// probe → scan → judge → advise: the pre-flight answer to "will this
// environment run on this GPU, and if not, what exactly do I change?".
// The request and its resources are in request.hpp, the report in report.hpp.
#include "report.hpp"
#include "request.hpp"

namespace archfit::check {

// Throws CheckError when the check cannot run as asked.
CheckReport run_check(const CheckRequest& request, const CheckResources& resources);

}  // namespace archfit::check
