#include "module_desc.hpp"

#include <string>
#include <vector>

namespace archfit::jit {

namespace {

std::vector<std::string> strings(const char* const* items, size_t count, const char* name) {
  if (count != 0 && items == nullptr)
    throw ModuleDescError(std::string(name) + " is NULL but its count is " + std::to_string(count));
  std::vector<std::string> out;
  out.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    if (items[i] == nullptr)
      throw ModuleDescError(std::string(name) + "[" + std::to_string(i) + "] is NULL");
    out.emplace_back(items[i]);
  }
  return out;
}

}  // namespace

KernelModuleSpec spec_from_desc(const archfit_module_desc& desc) {
  KernelModuleSpec spec;
  spec.name = desc.name ? desc.name : "module";
  if (desc.source) spec.source = desc.source;
  if (desc.source_name) spec.source_name = desc.source_name;
  const auto names = strings(desc.header_names, desc.header_count, "header_names");
  const auto contents = strings(desc.header_contents, desc.header_count, "header_contents");
  for (size_t i = 0; i < names.size(); ++i) spec.headers[names[i]] = contents[i];
  spec.options = strings(desc.options, desc.option_count, "options");
  spec.entry_points = strings(desc.entry_points, desc.entry_point_count, "entry_points");
  if (desc.prebuilt_size != 0) {
    if (desc.prebuilt == nullptr)
      throw ModuleDescError("prebuilt is NULL but prebuilt_size is " +
                            std::to_string(desc.prebuilt_size));
    const auto* bytes = static_cast<const std::byte*>(desc.prebuilt);
    spec.prebuilt.assign(bytes, bytes + desc.prebuilt_size);
  }
  return spec;
}

}  // namespace archfit::jit
