#pragma once
// The Session settings of one `archfit` command: the environment read once
// (session/environment_settings.hpp), each malformed variable named on
// `warnings`, for the command line's options to add to.
#include <ostream>

#include "session/session.hpp"

namespace archfit::cli {

session::SessionSettings run_settings(std::ostream& warnings);

}  // namespace archfit::cli
