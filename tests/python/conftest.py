"""Fixtures shared by the Python tests (the binding's, the wheel's, the host
adapters').

ctest (tests/python/CMakeLists.txt) sets the paths of what the build made;
run by hand, they default to the build in ./build:

  ARCHFIT_LIBRARY    build/sdk/libarchfit.so: the library the binding loads
  ARCHFIT_CLI        build/sdk/archfit: the command
  ARCHFIT_DEMO_SITE  build/tests/fixtures/demo/site-packages: nvcc-built, a
                     torch 2.5.1+cu124 with SASS sm_75 to sm_90 and no PTX,
                     and fastops with compute_90 PTX only
  ARCHFIT_WHEEL_DIR  build/python-wheel: where test_wheel keeps the wheel

The binding is imported from the source tree (host_adapters/python), so a
change to it is tested without building a wheel; test_wheel checks the
installed one.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BINDING_DIR = REPO / "host_adapters" / "python"
BUILD_DIR = REPO / "build"


def _configured(variable: str, default: Path) -> Path:
    return Path(os.environ.get(variable) or default)


# Before any test module imports archfit: the binding looks beside itself
# first (nothing there in the source tree), then ARCHFIT_LIBRARY.
os.environ.setdefault("ARCHFIT_LIBRARY", str(BUILD_DIR / "sdk" / "libarchfit.so"))
if str(BINDING_DIR) not in sys.path:
    sys.path.insert(0, str(BINDING_DIR))


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO


@pytest.fixture(scope="session")
def project_version() -> str:
    """archfit's version where it is written once: CMakeLists.txt's
    project(VERSION), read with the regex the wheel's build reads it with
    (pyproject.toml); archfit_version.h is generated from it."""
    import re

    match = re.search(r"project\(archfit VERSION ([0-9]+\.[0-9]+\.[0-9]+)",
                      (REPO / "CMakeLists.txt").read_text())
    assert match, "CMakeLists.txt has no project(archfit VERSION x.y.z)"
    return match.group(1)


@pytest.fixture(scope="session")
def archfit_library() -> Path:
    """libarchfit.so of the build: what `import archfit` loads in these tests."""
    path = _configured("ARCHFIT_LIBRARY", BUILD_DIR / "sdk" / "libarchfit.so")
    if not path.is_file():
        pytest.fail(f"ARCHFIT_LIBRARY={path}: no such file; build it first (cmake --build build)")
    return path


@pytest.fixture(scope="session")
def public_include_dirs(archfit_library) -> list:
    """What a C caller compiles against: sdk/include, and the build's
    sdk/include beside libarchfit.so with the generated archfit_version.h."""
    generated = archfit_library.parent / "include"
    if not (generated / "archfit" / "archfit_version.h").is_file():
        pytest.fail(f"no archfit/archfit_version.h in {generated}: configure the build first")
    return [REPO / "sdk" / "include", generated]


@pytest.fixture(scope="session")
def archfit_cli() -> Path:
    """The build's `archfit` command."""
    path = _configured("ARCHFIT_CLI", BUILD_DIR / "sdk" / "archfit")
    if not os.access(path, os.X_OK):
        pytest.fail(f"ARCHFIT_CLI={path}: not an executable; build it first (cmake --build build)")
    return path


@pytest.fixture(scope="session")
def demo_site() -> Path:
    """The demo site-packages; built by nvcc, so absent on a machine without it."""
    path = _configured("ARCHFIT_DEMO_SITE", BUILD_DIR / "tests" / "fixtures" / "demo" / "site-packages")
    if not (path / "torch" / "version.py").is_file():
        pytest.skip(
            f"no demo site-packages at {path}: it is built by nvcc (tests/fixtures, target "
            "archfit_demo_env); point CUDA_HOME or ARCHFIT_NVCC at a CUDA toolkit with nvcc"
        )
    return path


@pytest.fixture(scope="session")
def wheel_dir() -> Path:
    """Where the wheel is built and kept between runs (test_wheel)."""
    path = _configured("ARCHFIT_WHEEL_DIR", BUILD_DIR / "python-wheel")
    path.mkdir(parents=True, exist_ok=True)
    return path
