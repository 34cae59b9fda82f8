#pragma once
// The one error type of the compat module. The rules themselves never fail;
// only text from outside (an arch name, a driver version) can be malformed,
// and the message says which text and why.
#include <stdexcept>
#include <string>

namespace archfit::compat {

class CompatError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

}  // namespace archfit::compat
