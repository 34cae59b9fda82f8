#include "scan_json.hpp"

#include "elf_linkage.hpp"
#include "path_bytes.hpp"
#include "scan_error.hpp"

namespace archfit::binary {

using nlohmann::json;

namespace {

json payload_json(const PayloadInfo& info) {
  json out = json::object();
  if (info.ptx_version) out["ptx_version"] = info.ptx_version->to_string();
  if (!info.ptx_target.empty()) out["ptx_target"] = info.ptx_target;
  if (info.cubin_elf_type)
    out["elf_type"] = *info.cubin_elf_type == 1   ? "rel"
                      : *info.cubin_elf_type == 2 ? "exec"
                                                  : "other";
  if (info.cubin_abi_version) out["abi_version"] = *info.cubin_abi_version;
  if (info.cubin_sm) out["sm"] = *info.cubin_sm;
  if (info.cubin_e_flags) out["e_flags"] = hex(*info.cubin_e_flags);
  if (info.cubin_variant) out["variant"] = to_string(*info.cubin_variant);
  if (!info.toolkit.empty()) out["toolkit"] = info.toolkit;
  if (!info.producer_options.empty()) out["producer_options"] = info.producer_options;
  out["disagreements"] = info.disagreements;
  out["error"] = info.error.empty() ? json(nullptr) : json(info.error);
  return out;
}

}  // namespace

json to_json(const Image& image) {
  json out = {
      {"kind", to_string(image.kind)},
      {"kind_code", image.kind_code},
      {"sm", image.sm},
      {"variant", to_string(image.variant)},
      {"arch", image.arch_name()},
      {"ptx_isa", image.kind == ImageKind::ptx ? json(image.ptx_isa.to_string()) : json(nullptr)},
      {"elf_abi",
       image.kind == ImageKind::sass && image.elf_abi ? json(image.elf_abi) : json(nullptr)},
      {"compression", to_string(image.compression)},
      {"size", image.size},
      {"compressed_size", image.compressed_size},
      {"uncompressed_size", image.uncompressed_size},
      {"section", image.section},
      {"offset", image.offset},
      {"container_offset", image.container_offset},
      {"relocatable", image.relocatable},
      {"debug", image.debug},
      {"flags", hex(image.flags)},
  };
  if (!image.identifier.empty()) out["identifier"] = image.identifier;
  if (image.payload) out["payload"] = payload_json(*image.payload);
  return out;
}

json to_json(const FileScan& scan) {
  json errors = json::array();
  for (const auto& problem : scan.problems) errors.push_back(problem.message);
  json images = json::array();
  for (const auto& image : scan.images) images.push_back(to_json(image));
  json out = json::object();
  put_path(out, scan.path);
  out["format"] = to_string(scan.format);
  out["machine"] = scan.machine ? json(machine_name(scan.machine)) : json(nullptr);
  if (scan.linkage) {
    out["linkage"] = {
        {"name", scan.linkage->name.empty() ? json(nullptr) : json(scan.linkage->name)},
        {"needed", scan.linkage->needed},
        {"rpath", scan.linkage->rpath},
        {"runpath", scan.linkage->runpath}};
  } else {
    out["linkage"] = nullptr;
  }
  out["size"] = scan.file_size;
  out["containers"] = scan.containers;
  out["error"] = scan.problems.empty() ? json(nullptr) : json(scan.problems.front().message);
  out["errors"] = std::move(errors);
  out["images"] = std::move(images);
  return out;
}

json scan_document(const std::vector<FileScan>& files, const std::vector<SkippedPath>& skipped) {
  json list = json::array();
  for (const auto& scan : files) list.push_back(to_json(scan));
  json not_followed = json::array();
  for (const auto& path : skipped) {
    json entry = json::object();
    put_path(entry, path.path);
    entry["reason"] = path.reason;
    not_followed.push_back(std::move(entry));
  }
  return {
      {"schema", kScanSchema}, {"files", std::move(list)}, {"skipped", std::move(not_followed)}};
}

}  // namespace archfit::binary
