"""A ComfyUI_windows_portable tree as a Windows user has it (issue 33), read
from Linux as WSL reads /mnt/c: python_embeded\\Lib\\site-packages holding
PyPI's win_amd64 wheels — torch 2.8.0, which PyPI builds CPU-only for
Windows, xformers, onnxruntime-gpu and bitsandbytes — judged on several
GPUs and drivers, found by a bare `archfit check`, and its fix given in
python_embeded\\python.exe for cmd and PowerShell."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
import zipfile
from pathlib import Path

import pytest

import fetch_wheels

PORTABLE_WHEELS = ("win-torch-2.8.0-cpu", "win-xformers", "win-onnxruntime-gpu",
                   "win-bitsandbytes", "win-triton-windows")


@pytest.fixture(scope="module")
def portable():
    """<tmp>/ComfyUI_windows_portable, its wheels unpacked as pip lays them."""
    wheels = fetch_wheels.fetch(log=lambda line: None, wheels=fetch_wheels.WINDOWS_WHEELS)
    top = Path(tempfile.mkdtemp(prefix="archfit-portable-")) / "ComfyUI_windows_portable"
    site = top / "python_embeded" / "Lib" / "site-packages"
    site.mkdir(parents=True)
    (top / "python_embeded" / "python.exe").write_bytes(b"")  # never run: being there counts
    (top / "python_embeded" / "python312._pth").write_text("python312.zip\n.\nLib/site-packages\n")
    for key in PORTABLE_WHEELS:
        with zipfile.ZipFile(wheels[key]) as whl:
            whl.extractall(site)
    (top / "ComfyUI" / "custom_nodes").mkdir(parents=True)
    (top / "ComfyUI" / "main.py").write_text("# ComfyUI\n")
    yield top
    shutil.rmtree(top.parent, ignore_errors=True)


def check(archfit_bin, *args, cwd=None, index=None):
    env = dict(os.environ)
    env.pop("VIRTUAL_ENV", None)
    env.pop("CONDA_PREFIX", None)
    if index:
        env["XDG_CACHE_HOME"] = str(index)
    start = time.monotonic()
    proc = subprocess.run([str(archfit_bin), "check", *args, "--json"], capture_output=True,
                          text=True, cwd=cwd, env=env)
    seconds = time.monotonic() - start
    assert proc.returncode in (0, 1, 2), proc.stderr
    return proc.returncode, json.loads(proc.stdout), seconds


def torch_stack(doc):
    return next(s for s in doc["stacks"] if s["anchor"] == "torch")


@pytest.mark.parametrize("gpu,driver", [("RTX 5090", "576.02"), ("RTX 4090", "572.16"),
                                        ("RTX 3060", "560.94")])
def test_the_cpu_only_torch_fails_the_portable_tree_with_a_fix_in_python_embeded(
        archfit_bin, portable, gpu, driver):
    rc, doc, _ = check(archfit_bin, "--comfyui", str(portable / "ComfyUI"), "--gpu", gpu,
                       "--driver", driver, "--no-index")
    assert rc == 1 and doc["verdict"] == "fails", doc["summary"]
    torch = torch_stack(doc)
    assert torch["verdict"] == "no-cuda-build" and torch["blocks"]
    assert torch["version"] == "2.8.0+cpu"
    fix = torch["fix"]
    python = "\\".join(["", *portable.parts[1:], "python_embeded", "python.exe"])
    first = fix["commands"][0]
    assert first.startswith(f'"{python}" -m pip install torch==') , first
    # PyPI's Windows torch is CPU-only: PyTorch's index, torch, torchvision
    # and torchaudio pinned together with the CUDA label.
    assert "+cu" in first and "--index-url https://download.pytorch.org/whl/cu" in first
    for companion in (" torchvision==", " torchaudio=="):
        assert any(companion in command for command in fix["commands"]), fix["commands"]
    assert fix["shell"] == "cmd"
    assert fix["powershell_commands"][0].startswith(f"& '{python}' -m pip install torch==")
    for command in fix["commands"] + fix["powershell_commands"]:
        assert not command.startswith("pip "), command


def test_the_cuda_binaries_beside_it_are_judged(archfit_bin, portable):
    _, doc, _ = check(archfit_bin, "--comfyui", str(portable / "ComfyUI"), "--gpu", "RTX 5090",
                      "--driver", "576.02", "--no-index")
    verdicts = {c["name"]: c["verdict"] for c in doc["components"]}
    # xformers 0.0.35's _C.pyd: SASS sm_75 sm_80 sm_90a, PTX compute_80.
    assert verdicts.get("xformers") == "ptx-jit", verdicts
    assert verdicts.get("onnxruntime-gpu", verdicts.get("onnxruntime_gpu")) == "native", verdicts


def test_a_bare_check_inside_the_tree_finds_the_portable_build(archfit_bin, portable):
    rc, doc, _ = check(archfit_bin, "--gpu", "RTX 5090", "--driver", "576.02", "--no-index",
                       cwd=portable / "ComfyUI" / "custom_nodes")
    assert doc["environment"]["source"] == "ComfyUI portable", doc["environment"]
    assert rc == 1 and torch_stack(doc)["verdict"] == "no-cuda-build"


def test_without_a_gpu_the_tree_is_unknown(archfit_bin, portable, tmp_path):
    rc, doc, _ = check(archfit_bin, "--comfyui", str(portable / "ComfyUI"), "--no-index")
    if doc["devices"]:
        pytest.skip("this machine has a GPU")
    assert rc == 2 and doc["verdict"] == "unknown"


def test_triton_windows_is_a_member_of_the_pytorch_stack(archfit_bin, portable):
    _, doc, _ = check(archfit_bin, "--comfyui", str(portable / "ComfyUI"), "--gpu", "RTX 5090",
                      "--driver", "576.02", "--no-index")
    assert "triton-windows" in torch_stack(doc)["members"], torch_stack(doc)["members"]


@pytest.mark.parametrize("driver,fits", [("570.26", False), ("572.16", True)])
def test_the_driver_is_judged_in_windows_numbers(archfit_bin, portable, driver, fits):
    """CUDA 12.8's first Windows driver is 570.65 (570.26 on Linux): xformers
    runs on an RTX 5090 only by JIT-compiling its compute_80 PTX, ISA 8.7."""
    _, doc, _ = check(archfit_bin, "--comfyui", str(portable / "ComfyUI"), "--gpu", "RTX 5090",
                      "--driver", driver, "--no-index")
    assert doc["driver"]["os"] == "windows"
    device = doc["devices"][0]
    assert device["first_driver"] == "570.65"
    assert device["driver_knows_it"] is fits
    fixes = json.dumps(torch_stack(doc)["fix"])
    assert "570.26 or newer" not in fixes


def test_cpu_onnxruntime_installed_over_onnxruntime_gpu_fails(archfit_bin, portable, tmp_path):
    """pip installing onnxruntime after onnxruntime-gpu, as a custom node's
    requirements do: the CPU module replaces the CUDA one in the shared
    onnxruntime package."""
    tree = tmp_path / "ComfyUI_windows_portable"
    shutil.copytree(portable, tree, symlinks=True)
    wheels = fetch_wheels.fetch(log=lambda line: None, wheels=fetch_wheels.WINDOWS_WHEELS)
    with zipfile.ZipFile(wheels["win-onnxruntime-cpu"]) as whl:
        whl.extractall(tree / "python_embeded" / "Lib" / "site-packages")
    rc, doc, _ = check(archfit_bin, "--comfyui", str(tree / "ComfyUI"), "--gpu", "RTX 4090",
                       "--driver", "572.16", "--no-index")
    assert rc == 1
    onnx = next(s for s in doc["stacks"] if s["name"] == "ONNX Runtime")
    assert onnx["verdict"] == "no-cuda-build" and onnx["blocks"]
    assert "onnxruntime 1.31.1 (CPU-only) was installed over onnxruntime-gpu" in onnx["evidence"]
    python = "\\".join(["", *tree.parts[1:], "python_embeded", "python.exe"])
    assert onnx["fix"]["commands"] == [
        f'"{python}" -m pip uninstall -y onnxruntime onnxruntime-gpu',
        f'"{python}" -m pip install onnxruntime-gpu==1.31.1']
