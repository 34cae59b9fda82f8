#pragma once
// Which bytes of a judged binary `archfit check --confirm` hands to the
// driver (env/module_confirm.hpp): one container, the one that holds the
// image the judge picked, read back from the file that was scanned.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "binary/image.hpp"

namespace archfit::check {

// A standalone cubin or PTX file: the whole file (PTX with a NUL added, as
// cuModuleLoadData reads text up to one). A host library or a fatbin file:
// the fatbin container, from its 16-byte header to its end, that holds image
// `chosen` (compat::BinaryJudgement::chosen) when that is given and
// launchable, else the first container with a launchable image. nullopt when
// nothing in the file is launchable (no device code, only device-link inputs)
// or the file can no longer be read as it was scanned.
std::optional<std::vector<uint8_t>> container_to_confirm(
    const binary::FileScan& scan, std::optional<std::size_t> chosen = std::nullopt);

}  // namespace archfit::check
