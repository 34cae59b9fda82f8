#pragma once
// `archfit check --labels nfd`: the node's labels for node-feature-discovery
// (fleet/node_labels.hpp, docs/fleet.md) — its GPUs' arch and driver, and
// for each environment in --labels-config whether it fits — printed, or
// written whole to a file NFD's local source reads.
#include <ostream>
#include <string>

#include "probe_options.hpp"

namespace archfit::cli {

struct LabelsRequest {
  std::string format;        // "nfd", the one known
  std::string config;        // --labels-config: the environments; "" for the node's labels only
  std::string output;        // --labels-output: the file, replaced whole; "" for stdout
  unsigned ttl_seconds = 0;  // --labels-ttl: `# +expiry-time` that far ahead; 0 for none
};

// 0 when the labels were written (whatever they say), 2 when they could not
// be: a bad config, an environment named on the command line instead of in
// the config, a file that cannot be written. Messages go to `errors`.
int write_node_labels(const ProbeOptions& probe, const LabelsRequest& request,
                      std::ostream& errors);

}  // namespace archfit::cli
