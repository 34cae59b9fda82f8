"""PyPI's win_amd64 wheels as a Windows user has them (issue 33): every
.dll and .pyd read down to its images, each cross-checked with a reader of
this tier's own (pe_fatbin.py), and judged by `check --wheel`."""

from __future__ import annotations

import json
import subprocess
import zipfile
from collections import Counter

import pytest

import fetch_wheels
import pe_fatbin

SEPARATOR = "!/"


@pytest.fixture(scope="module")
def windows_wheels():
    return fetch_wheels.fetch(log=lambda line: None, wheels=fetch_wheels.WINDOWS_WHEELS)


def archfit_json(archfit_bin, *args):
    """archfit ARGS --json: (exit code, document); exit 2 (unknown) is an answer too."""
    proc = subprocess.run([str(archfit_bin), *args, "--json"], capture_output=True, text=True)
    assert proc.returncode in (0, 1, 2), proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def independent_images(wheel):
    """{member: Counter of (kind, arch, section, relocatable)} for every
    .dll/.pyd the independent reader finds device code in."""
    found = {}
    with zipfile.ZipFile(wheel) as whl:
        for member in whl.namelist():
            if not member.lower().endswith((".dll", ".pyd")):
                continue
            read = pe_fatbin.read(whl.read(member))
            if read.images:
                found[member] = Counter((i.kind, i.arch, i.section, i.relocatable)
                                        for i in read.images)
    return found


@pytest.mark.parametrize("key", sorted(fetch_wheels.WINDOWS_WHEELS))
def test_scan_reads_every_windows_binary_as_the_independent_reader_does(
        archfit_bin, windows_wheels, key):
    wheel = windows_wheels[key]
    rc, doc = archfit_json(archfit_bin, "scan", str(wheel))
    assert rc == 0, [f["errors"] for f in doc["files"] if f["errors"]]
    prefix = str(wheel) + SEPARATOR
    scanned = {f["path"][len(prefix):]: f for f in doc["files"]}
    expected = independent_images(wheel)
    with_images = {member for member, f in scanned.items() if f["images"]}
    assert with_images == set(expected), key
    for member, images in expected.items():
        f = scanned[member]
        assert f["format"] == "pe", member
        assert f["error"] is None, f["errors"]
        assert Counter((i["kind"], i["arch"], i["section"], i["relocatable"])
                       for i in f["images"]) == images, member
    # Every Windows binary of the wheel was read as PE, none passed over.
    with zipfile.ZipFile(wheel) as whl:
        binaries = {m for m in whl.namelist() if m.lower().endswith((".dll", ".pyd"))}
    assert binaries <= {m for m, f in scanned.items() if f["format"] == "pe"}


# Facts measured on these wheels with a reader of our own (the project's
# notes, "Windows binaries"): each a member, and the SASS and PTX it carries.
MEASURED = {
    "win-xformers": ("xformers/_C.pyd", {"sm_75", "sm_80", "sm_90a"}, {"compute_80"}),
    "win-onnxruntime-gpu": ("onnxruntime/capi/onnxruntime_providers_cuda.dll",
                            {"sm_75", "sm_80", "sm_86", "sm_89", "sm_90a", "sm_120a"},
                            {"compute_120"}),
    # Its compute_120 PTX is in __nv_rel only: device-link inputs, never
    # launched, so no driver JIT-compiles it for a GPU its SASS misses.
    "win-bitsandbytes": ("bitsandbytes/libbitsandbytes_cuda128.dll",
                         {"sm_70", "sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_100",
                          "sm_120"}, set()),
}


@pytest.mark.parametrize("key", sorted(MEASURED))
def test_the_measured_images_of_a_windows_binary(archfit_bin, windows_wheels, key):
    member, sass, ptx = MEASURED[key]
    wheel = windows_wheels[key]
    _, doc = archfit_json(archfit_bin, "scan", str(wheel))
    (f,) = [f for f in doc["files"] if f["path"] == f"{wheel}{SEPARATOR}{member}"]
    runnable = [i for i in f["images"] if not i["relocatable"]]
    assert {i["arch"] for i in runnable if i["kind"] == "sass"} == sass
    assert {i["arch"] for i in runnable if i["kind"] == "ptx"} == ptx


@pytest.mark.parametrize("key,gpu,verdict", [
    # xformers 0.0.35 for Windows: SASS sm_75/80/90a, PTX compute_80. sm_80
    # SASS runs on sm_89; sm_120 has only the PTX to JIT-compile.
    ("win-xformers", "RTX 4090", "native"),
    ("win-xformers", "RTX 5090", "ptx-jit"),
    ("win-xformers", "RTX 3090", "native"),
    ("win-onnxruntime-gpu", "RTX 5090", "native"),
    ("win-onnxruntime-gpu", "GTX 1080", "no-image"),
])
def test_check_wheel_judges_a_windows_wheel(archfit_bin, windows_wheels, key, gpu, verdict):
    rc, doc = archfit_json(archfit_bin, "check", "--wheel", str(windows_wheels[key]),
                           "--gpu", gpu, "--driver", "580.88")
    verdicts = {c["name"]: c["verdict"] for c in doc["components"]}
    name = fetch_wheels.WINDOWS_WHEELS[key].requirement.split("==")[0]
    assert verdicts.get(name) == verdict, (verdicts, doc["summary"])
    assert rc == (1 if verdict == "no-image" else 0), doc["summary"]


@pytest.mark.parametrize("key", sorted(fetch_wheels.WINDOWS_WHEELS))
def test_scan_names_what_each_windows_binary_imports_and_delay_loads(
        archfit_bin, windows_wheels, key):
    """`linkage.needed` of each .dll and .pyd is its import table's DLLs, then
    its delay-load table's, as an independent reader finds them."""
    wheel = windows_wheels[key]
    _, doc = archfit_json(archfit_bin, "scan", str(wheel))
    prefix = str(wheel) + SEPARATOR
    scanned = {f["path"][len(prefix):]: f for f in doc["files"]}
    delay_loaded = 0
    with zipfile.ZipFile(wheel) as whl:
        for member in whl.namelist():
            if not member.lower().endswith((".dll", ".pyd")):
                continue
            imports, delayed = pe_fatbin.imported_dlls(whl.read(member))
            delay_loaded += len(delayed)
            f = scanned[member]
            assert f["machine"] == "x86_64", member
            needed = f["linkage"]["needed"] if f["linkage"] else []
            assert needed == imports + delayed, member
    # onnxruntime.dll and its _pybind11_state.pyd delay-load SHELL32.dll;
    # triton-windows' libtriton.pyd SHELL32.dll and ole32.dll.
    if key in ("win-onnxruntime-gpu", "win-onnxruntime-cpu", "win-triton-windows"):
        assert delay_loaded > 0, key
