#!/usr/bin/env bash
# tools/format.sh check|fix — the project's C, C++ and CUDA sources against
# .clang-format, with clang-format 14 and no other (`make format-check`,
# `make format`; .ci/run runs the check before the tests):
#   check  lists each file clang-format would change and fails if there is one
#   fix    rewrites them in place
# Pinned: another major version formats the same file differently, so a check
# that passes on one machine would fail on the next. CLANG_FORMAT names the
# binary (default clang-format-14, Debian 12's package of that name).
#
# The files are the tracked ones (git ls-files; a new file is checked once it
# is added) under the project's own folders: never a build tree, a venv or a
# generated header. The repository vendors no third-party C or C++ source, so
# nothing else is left out.
set -euo pipefail
cd "$(dirname "$0")/.."

required_major=14
clang_format="${CLANG_FORMAT:-clang-format-$required_major}"
mode="${1:-}"
if [[ "$mode" != check && "$mode" != fix ]]; then
  echo "usage: tools/format.sh check|fix" >&2
  exit 2
fi

install_hint="install it with: sudo apt-get install clang-format-$required_major (Debian 12), or run make format-check, which does"
if ! command -v "$clang_format" >/dev/null; then
  echo "archfit: $clang_format was not found; the formatting check needs clang-format $required_major: $install_hint" >&2
  exit 1
fi
version="$("$clang_format" --version)"
if [[ ! "$version" =~ version\ ([0-9]+)\. ]] || [[ "${BASH_REMATCH[1]}" != "$required_major" ]]; then
  echo "archfit: $clang_format is \"$version\"; the formatting check needs clang-format $required_major" \
       "exactly (another major version formats differently): $install_hint" >&2
  exit 1
fi
# An unknown key or a bad value in .clang-format, said once and plainly.
if ! "$clang_format" --style=file --assume-filename=sdk/x.cpp --dump-config >/dev/null; then
  echo "archfit: clang-format $required_major cannot read .clang-format" >&2
  exit 1
fi

if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  echo "archfit: tools/format.sh lists the sources with git ls-files: run it in a git checkout" >&2
  exit 1
fi
files=()
while IFS= read -r -d '' file; do
  [[ -f "$file" ]] && files+=("$file")  # not one deleted but not yet committed
done < <(git ls-files -z -- sdk plugins host_adapters tests samples kernels \
           | grep -zE '\.(c|h|cpp|hpp|cu|cuh)$')

if [[ "$mode" == fix ]]; then
  printf '%s\0' "${files[@]}" | xargs -0 "$clang_format" --style=file -i
  echo "archfit: formatted ${#files[@]} files with clang-format $required_major"
  exit 0
fi

# One warning per change; the files are what matters here.
if output="$(printf '%s\0' "${files[@]}" | xargs -0 "$clang_format" --style=file --dry-run --Werror 2>&1)"; then
  echo "archfit: all ${#files[@]} C/C++ files are formatted (clang-format $required_major)"
  exit 0
fi
differ="$(sed -n 's/^\(.*\):[0-9][0-9]*:[0-9][0-9]*: error: code should be clang-formatted.*/\1/p' <<<"$output" | sort -u)"
if [[ -z "$differ" ]]; then
  printf '%s\n' "$output" >&2
  echo "archfit: clang-format failed" >&2
  exit 1
fi
echo "archfit: these files differ from what clang-format $required_major makes of them (.clang-format):" >&2
sed 's/^/  /' <<<"$differ" >&2
echo "archfit: $(wc -l <<<"$differ") of ${#files[@]} files; make format rewrites them" >&2
exit 1
