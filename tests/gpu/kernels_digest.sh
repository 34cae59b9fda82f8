#!/bin/sh
# A short digest of kernels/ (sources and headers, in a fixed order): pack.sh
# records it, run.sh compares it with the checkout it runs in, because the
# GPU programs read the sources from the checkout and the fatbins from the pack.
cd "$(dirname "$0")/../.."
find kernels -type f \( -name '*.cu' -o -name '*.cuh' -o -name '*.h' -o -name '*.hpp' \) |
  LC_ALL=C sort | xargs cat | sha256sum | cut -c1-16
