#include "report.hpp"

namespace archfit::check {

std::string StackResult::name_and_version() const {
  return version.empty() ? name : name + " " + version;
}

std::string DeviceInfo::label() const { return name + " (" + cc.sm_name() + ")"; }

std::string_view to_string(Reach reach) {
  switch (reach) {
    case Reach::loaded:
      return "loaded";
    case Reach::feature:
      return "feature";
    case Reach::unreached:
      break;
  }
  return "unreached";
}

std::string_view to_string(OverallVerdict verdict) {
  switch (verdict) {
    case OverallVerdict::fits:
      return "fits";
    case OverallVerdict::fails:
      return "fails";
    case OverallVerdict::unknown:
      break;
  }
  return "unknown";
}

}  // namespace archfit::check
