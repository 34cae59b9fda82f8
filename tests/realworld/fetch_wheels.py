#!/usr/bin/env python3
"""Download the real-world tier's wheels from PyPI into a cache, once.

The set is pinned: each wheel by name, version, file name and sha256, fetched
with a fixed platform list and Python 3.11 so that every interpreter gets the
same files. A wheel already in the cache (right size) is not fetched again.
The cache is $ARCHFIT_REALWORLD_CACHE, else ~/.cache/archfit-realworld; the
wheels go into its wheels/ folder.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import subprocess
import sys
from pathlib import Path

PLATFORMS = (
    "manylinux_2_28_x86_64",
    "manylinux2014_x86_64",
    "manylinux_2_17_x86_64",
    "manylinux1_x86_64",
    "manylinux_2_24_x86_64",
)
PYTHON_VERSION = "3.11"


@dataclasses.dataclass(frozen=True)
class Wheel:
    requirement: str
    file: str
    size: int
    sha256: str


# Keyed by the name the tests use.
WHEELS = {
    # PyPI's torch 2.5.1 is the CUDA 12.4 build (torch/version.py: 2.5.1+cu124).
    "torch-2.5.1": Wheel(
        "torch==2.5.1",
        "torch-2.5.1-cp311-cp311-manylinux1_x86_64.whl",
        906474467,
        "de5b7d6740c4b636ef4db92be922f0edc425b65ed78c5076c43c42d362a45457",
    ),
    # PyPI's torch 2.8.0 is the CUDA 12.8 build (2.8.0+cu128), with SASS sm_120.
    "torch-2.8.0": Wheel(
        "torch==2.8.0",
        "torch-2.8.0-cp311-cp311-manylinux_2_28_x86_64.whl",
        888063640,
        "c12fa219f51a933d5f80eeb3a7a5d0cbe9168c0a14bbb4055f1979431660879b",
    ),
    # Requires torch==2.5.1.
    "xformers": Wheel(
        "xformers==0.0.28.post3",
        "xformers-0.0.28.post3-cp311-cp311-manylinux_2_28_x86_64.whl",
        16715691,
        "825563e129f6b22885c2a91e464ff617382f4d78876cc92d96ff618e875aaee3",
    ),
    "bitsandbytes": Wheel(
        "bitsandbytes==0.45.0",
        "bitsandbytes-0.45.0-py3-none-manylinux_2_24_x86_64.whl",
        69084267,
        "0f0323de1ff1fdf8383e79bdad1283516a4c05a6fd2b44a363bf4e059422305b",
    ),
    # The NVRTC torch 2.5.1 pins (Requires-Dist: nvidia-cuda-nvrtc-cu12==12.4.127).
    "nvrtc": Wheel(
        "nvidia-cuda-nvrtc-cu12==12.4.127",
        "nvidia_cuda_nvrtc_cu12-12.4.127-py3-none-manylinux2014_x86_64.whl",
        24640306,
        "a178759ebb095827bd30ef56598ec182b85547f1508941a3d560eb7ea1fbf338",
    ),
}


def cache_dir() -> Path:
    configured = os.environ.get("ARCHFIT_REALWORLD_CACHE")
    return Path(configured) if configured else Path.home() / ".cache" / "archfit-realworld"


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def download(wheel: Wheel, dest: Path) -> None:
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:"]
    for platform in PLATFORMS:
        command += ["--platform", platform]
    command += ["--python-version", PYTHON_VERSION, "--dest", str(dest), wheel.requirement]
    subprocess.run(command, check=True)
    path = dest / wheel.file
    if not path.is_file():
        raise SystemExit(f"pip download {wheel.requirement} did not produce {path}")
    actual = sha256_of(path)
    if actual != wheel.sha256:
        path.unlink()
        raise SystemExit(f"{wheel.file}: sha256 {actual}, expected {wheel.sha256}; removed")


def fetch(log=print) -> dict[str, Path]:
    """Every pinned wheel's path in the cache, downloading those missing."""
    dest = cache_dir() / "wheels"
    dest.mkdir(parents=True, exist_ok=True)
    paths = {}
    for key, wheel in WHEELS.items():
        path = dest / wheel.file
        if path.is_file() and path.stat().st_size == wheel.size:
            log(f"cached      {wheel.file} ({wheel.size / 1e6:.0f} MB)")
        else:
            if path.exists():  # a partial or different file: pip would keep it
                path.unlink()
            log(f"downloading {wheel.requirement} into {dest}")
            download(wheel, dest)
        paths[key] = path
    return paths


if __name__ == "__main__":
    fetch()
