"""The knowledge base's tables against the real wheels: which build PyPI
carries for every torch release (torch/version.py in each PyPI wheel), which
torchvision and torchaudio are pinned to each version (their METADATA), the
architectures of the PyPI builds installed in the stack environments
(libtorch_cuda.so), and xformers' releases (their torch pin, and the images
of those in the environments). Where a table and a wheel disagree, the table
is wrong."""

from __future__ import annotations

import collections
import json
import re
import subprocess
from pathlib import Path

import pytest
import yaml

import pypi
from stacks import TORCH_OF

KB = Path(__file__).resolve().parents[2] / "sdk" / "data" / "kb"
TORCH_KB = yaml.safe_load((KB / "torch.yaml").read_text())
COMPONENTS_KB = yaml.safe_load((KB / "components.yaml").read_text())


def versions_of(release):
    for entry in release["versions"]:
        yield entry if isinstance(entry, dict) else {"version": entry}


RELEASES = [(release["release"], v["version"]) for release in TORCH_KB["releases"]
            for v in versions_of(release)]


def kb_release(version):
    return next(r for r in TORCH_KB["releases"]
                if any(v["version"] == version for v in versions_of(r)))


def kb_version(version):
    return next(v for v in versions_of(kb_release(version)) if v["version"] == version)


@pytest.mark.parametrize("series,version", RELEASES)
def test_pypi_carries_the_build_the_table_names(series, version):
    wheel = pypi.linux_wheel("torch", version)
    assert wheel, f"PyPI has no cp311 manylinux x86_64 torch {version}"
    text = pypi.read_member(wheel["url"], "torch/version.py")
    found = re.search(r"__version__ = '([^']+)'", text).group(1)
    assert found == f"{version}+{kb_release(version)['pypi']['tag']}", wheel["filename"]


def companion_cases():
    for _, version in RELEASES:
        for name in ("torchvision", "torchaudio"):
            pin = kb_version(version).get(name)
            if pin is not None:
                yield version, name, pin["version"] if isinstance(pin, dict) else pin


def admits(specifier: str, version: str) -> bool:
    def numbers(v):
        return [int(p) for p in re.findall(r"\d+", v.split("+")[0])]

    if specifier.startswith("=="):
        return numbers(specifier[2:]) == numbers(version)
    if specifier.startswith(">="):
        floor, found = numbers(specifier[2:]), numbers(version)
        return found[:len(floor)] >= floor
    return False


@pytest.mark.parametrize("torch_version,name,pin", list(companion_cases()))
def test_each_companion_is_the_one_pinned_to_its_torch(torch_version, name, pin):
    wheel = pypi.linux_wheel(name, pin)
    assert wheel, f"PyPI has no {name} {pin}"
    on_torch = [r for r in pypi.requires_dist(pypi.read_member(wheel["url"], ".dist-info/METADATA"))
                if re.match(r"torch\b", r) and "extra ==" not in r]
    specifiers = [re.sub(r"^torch\s*\(?\s*|\)?$", "", r).strip() for r in on_torch]
    # torchaudio 2.11.0 states no torch requirement; it is built with 2.11.0.
    assert all(admits(s, torch_version) for s in specifiers), (wheel["filename"], on_torch)


def libtorch_cuda_main_list(site: Path, archfit_bin: Path):
    """The architectures every kernel file of libtorch_cuda.so is built for
    (a few kernels are built for one more, such as sm_90a): SASS and PTX."""
    proc = subprocess.run([str(archfit_bin), "scan", "--json",
                           str(site / "torch" / "lib" / "libtorch_cuda.so")],
                          capture_output=True, text=True, check=True)
    images = json.loads(proc.stdout)["files"][0]["images"]
    counts = collections.Counter((i["kind"], i["sm"], i["variant"]) for i in images)
    most = max(counts.values())
    sass = sorted(sm for (kind, sm, variant), n in counts.items()
                  if kind == "sass" and variant == "plain" and n >= most * 0.9)
    ptx = sorted(sm for (kind, sm, variant) in counts if kind == "ptx" and variant == "plain")
    return sass, ptx


@pytest.mark.parametrize("env", sorted(TORCH_OF))
def test_the_pypi_builds_hold_the_tables_architectures(stack_sites, archfit_bin, env):
    version, tag = TORCH_OF[env].split("+")
    assert kb_release(version)["pypi"]["tag"] == tag
    (build,) = [b for b in kb_release(version)["builds"] if b["tag"] == tag]
    assert (build["sass"], build["ptx"]) == libtorch_cuda_main_list(stack_sites[env], archfit_bin), \
        build.get("source")


XFORMERS = next(c for c in COMPONENTS_KB["components"] if c["name"] == "xformers")


@pytest.mark.parametrize("release", XFORMERS["releases"], ids=lambda r: r["version"])
def test_each_xformers_release_requires_the_torch_the_table_says(release):
    wheel = pypi.linux_wheel("xformers", release["version"])
    assert wheel, release["version"]
    on_torch = [r for r in pypi.requires_dist(pypi.read_member(wheel["url"], ".dist-info/METADATA"))
                if re.match(r"torch\b", r) and "extra ==" not in r]
    assert [r.replace(" ", "").removeprefix("torch") for r in on_torch] == [release["torch"]]


# xformers in the stack environments: its main library's images.
INSTALLED_XFORMERS = {"torch-2.5.1": "0.0.28.post3", "torch-2.8.0": "0.0.32.post2",
                      "torch-2.15.0": "0.0.35"}


@pytest.mark.parametrize("env", sorted(INSTALLED_XFORMERS))
def test_the_xformers_releases_hold_the_tables_images(stack_sites, archfit_bin, env):
    (release,) = [r for r in XFORMERS["releases"] if r["version"] == INSTALLED_XFORMERS[env]]
    proc = subprocess.run([str(archfit_bin), "scan", "--json",
                           str(stack_sites[env] / "xformers" / "_C.so")],
                          capture_output=True, text=True, check=True)
    images = json.loads(proc.stdout)["files"][0]["images"]
    found = sorted({("sm_" if i["kind"] == "sass" else "compute_") + str(i["sm"]) +
                    ("" if i["variant"] == "plain" else i["variant"])
                    for i in images if not i["relocatable"]})
    assert found == sorted(release["archs"]), release["source"]
