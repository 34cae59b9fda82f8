"""The `archfit` command of the wheel (and `python -m archfit`): the bundled
archfit/bin/archfit binary, run in this process's place with the same
arguments, so its exit code (0 fits, 1 fails, 2 could not run), output and
terminal handling are exactly the command's."""

from __future__ import annotations

import os
import sys
from pathlib import Path


def command_path() -> Path:
    return Path(__file__).resolve().parent / "bin" / "archfit"


def main() -> int:
    binary = command_path()
    if not os.access(binary, os.X_OK):
        state = "is not executable" if binary.exists() else "is missing"
        print(
            f"archfit: the archfit command bundled with this package {state} ({binary}).\n"
            "Reinstall the wheel (pip install --force-reinstall archfit), or run the archfit "
            "binary of a source build (build/sdk/archfit).",
            file=sys.stderr,
        )
        return 2
    # argv[0] is the bare name, not the console script's path: the command
    # prints it in its usage lines, and an absolute argv[0] elsewhere than
    # the binary must not be where it looks for the knowledge base.
    try:
        os.execv(binary, ["archfit", *sys.argv[1:]])
    except OSError as error:
        print(f"archfit: cannot run {binary}: {error}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
