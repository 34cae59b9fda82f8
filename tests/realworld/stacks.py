"""The stack environments and what archfit must say of them.

Each environment is what pip installs from PyPI for a set of requirements
(fetch_wheels.STACKS): torch with torchvision, torchaudio, triton and the
nvidia-* wheels its metadata requires, beside xformers, bitsandbytes,
onnxruntime-gpu or cupy. Each is checked on seven GPUs and three drivers.

The expected verdicts follow from facts stated here with their sources, by
NVIDIA's rules restated independently of archfit (expectations.verdict): the
architectures each package's main library was built for, the driver each
CUDA major needs, and the first driver of each GPU architecture.
"""

from __future__ import annotations

import dataclasses

from expectations import ArchList, arch_list, verdict

# name -> (compute capability, machine)
GPUS = {
    "RTX 5090": (12, 0),
    "B200": (10, 0),
    "H100": (9, 0),
    "RTX 4090": (8, 9),
    "RTX 3090": (8, 6),
    "V100": (7, 0),
    "GTX 1080": (6, 1),
}
# A GPU in an aarch64 machine: x86_64 wheels never load there.
JETSON = "Jetson Orin"
DRIVERS = ("550.144.03", "570.86.16", "580.65.06")


def driver_tuple(driver: str) -> tuple[int, ...]:
    return tuple(int(part) for part in driver.split("."))


# NVIDIA's minor-version compatibility: the oldest driver a CUDA major's
# applications run on (docs.nvidia.com/deploy/cuda-compatibility/
# minor-version-compatibility.html).
CUDA_FLOOR = {12: "525.60.13", 13: "580.65.06"}
# The driver of the CUDA toolkit that first targets an architecture (CUDA
# 12.8 for Blackwell: 570.26, the release notes' Table 3); older GPUs here
# were known by drivers far below 550.
FIRST_DRIVER = {(12, 0): "570.26", (10, 0): "570.26"}


@dataclasses.dataclass(frozen=True)
class Stack:
    """What a stack's verdict rests on: its main library's architectures and
    the CUDA major of the runtime it links."""
    archs: ArchList
    cuda_major: int
    # Other binaries it loads that JIT where the main library runs natively
    # (cuFFT 11.3 has no sm_120 SASS: the PyTorch 2.8.0 stack JITs its PTX).
    jit_on: frozenset = frozenset()


PYTORCH = {
    "2.5.1": Stack(arch_list("sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90",
                             source="torch 2.5.1+cu124 libtorch_cuda.so (test_torch_builds.py)"), 12),
    "2.8.0": Stack(arch_list("sm_70 sm_75 sm_80 sm_86 sm_90 sm_100 sm_120",
                             source="torch 2.8.0+cu128 libtorch_cuda.so (test_torch_builds.py)"), 12,
                   jit_on=frozenset({(12, 0)})),
    "2.11.0": Stack(arch_list("sm_75 sm_80 sm_86 sm_90 sm_100 sm_120",
                              source="torch 2.11.0+cu130 libtorch_cuda.so (test_torch_table.py)"), 13),
    "2.15.0": Stack(arch_list("sm_75 sm_80 sm_86 sm_90 sm_100 sm_120",
                              source="torch 2.15.0+cu132 libtorch_cuda.so (test_torch_table.py)"), 13),
}

# The other packages: their main library's images, read from the wheel (an
# archfit scan; cuobjdump agrees), and the CUDA runtime it links.
OTHERS = {
    ("torch-2.5.1", "xformers"): Stack(arch_list(
        "sm_60 sm_70 sm_75 sm_80 sm_90a compute_60 compute_80",
        source="xformers 0.0.28.post3 xformers/_C.so"), 12),
    ("torch-2.5.1", "bitsandbytes"): Stack(arch_list(
        "sm_50 sm_52 sm_60 sm_61 sm_70 sm_75 sm_80 sm_86 sm_89 sm_90",
        source="bitsandbytes 0.45.0 libbitsandbytes_cuda124.so, the copy loaded with torch's CUDA 12.4"), 12),
    ("torch-2.8.0", "xformers"): Stack(arch_list(
        "sm_75 sm_80 sm_90a compute_80", source="xformers 0.0.32.post2 xformers/_C.so"), 12),
    ("torch-2.8.0", "bitsandbytes"): Stack(arch_list(
        "sm_70 sm_75 sm_80 sm_86 sm_89 sm_90 sm_100 sm_120",
        source="bitsandbytes 0.50.2 libbitsandbytes_cuda128.so, the copy loaded with torch's CUDA 12.8"), 12),
    ("torch-2.11.0", "onnxruntime-gpu"): Stack(arch_list(
        "sm_75 sm_80 sm_86 sm_89 sm_90a sm_120a",
        source="onnxruntime-gpu 1.31.1 onnxruntime/capi/libonnxruntime_providers_cuda.so (links libcudart.so.13)"), 13),
    ("torch-2.15.0", "xformers"): Stack(arch_list(
        "sm_75 sm_80 sm_90a compute_80",
        source="xformers 0.0.35 xformers/_C.so (links libcudart.so.12: readelf -d of the PyPI wheel's _C.so)"), 12),
    ("cupy", "cupy-cuda12x"): Stack(arch_list(
        "sm_50 sm_52 sm_60 sm_61 sm_70 sm_75 sm_80 sm_86 sm_89 sm_90 sm_100f sm_120f compute_100",
        source="cupy-cuda12x 14.2.0 cupy/cuda/cub.cpython-311-x86_64-linux-gnu.so; it links no libcudart"), 0),
}

# Per environment, the stacks a check finds (PyTorch first).
ENV_STACKS = {
    "torch-2.5.1": ("PyTorch", "xformers", "bitsandbytes"),
    "torch-2.8.0": ("PyTorch", "xformers", "bitsandbytes"),
    "torch-2.11.0": ("PyTorch", "onnxruntime-gpu"),
    "torch-2.15.0": ("PyTorch", "xformers"),
    "cupy": ("cupy-cuda12x",),
}
TORCH_OF = {"torch-2.5.1": "2.5.1+cu124", "torch-2.8.0": "2.8.0+cu128",
            "torch-2.11.0": "2.11.0+cu130", "torch-2.15.0": "2.15.0+cu132"}


def stack_facts(env: str, name: str) -> Stack:
    if name == "PyTorch":
        return PYTORCH[env.removeprefix("torch-")]
    return OTHERS[(env, name)]


# Stacks that do not load in their environment, whatever the GPU (issue 36):
# the library their binary links that no wheel of the environment installs.
# torch 2.15.0's environment is CUDA 13 throughout (fetch_wheels.py
# STACK_WHEELS: nvidia-cuda-runtime 13.2.86, no -cu12 wheel), and xformers
# 0.0.35's _C.so links libcudart.so.12.
MISSING_LIBRARY = {("torch-2.15.0", "xformers"): "libcudart.so.12"}


def expected_verdict(env: str, name: str, gpu: str, driver: str) -> str:
    """A library missing beats everything (the import fails first); no image
    beats a driver problem (a driver update fixes only that); a driver the
    GPU is unknown to, or below the CUDA major's floor, fails where the
    images would run."""
    if (env, name) in MISSING_LIBRARY:
        return "missing-library"
    cc = GPUS[gpu]
    facts = stack_facts(env, name)
    images = verdict(facts.archs.sass, facts.archs.ptx, cc)
    if images == "no-image":
        return "no-image"
    first = FIRST_DRIVER.get(cc)
    if first and driver_tuple(driver) < driver_tuple(first):
        return "driver-too-old"
    floor = CUDA_FLOOR.get(facts.cuda_major)
    if floor and driver_tuple(driver) < driver_tuple(floor):
        return "driver-too-old"
    if images == "native" and cc in facts.jit_on:
        return "ptx-jit"
    return images


FAILURES = {"no-image", "ptx-too-new-for-driver", "driver-too-old", "wrong-platform",
            "missing-library"}

# The fixes a user reads first, exactly, where the cases are: the old
# GPU gets the newest build that still runs it (torch 2.14.1+cu126: CUDA 12.6
# builds keep sm_50/sm_60, and 2.15 dropped 12.6) and loses an xformers that
# no release for it supports; the RTX 50 gets the newest build within its
# driver; a CUDA 13 build on an R570 driver, a driver update or the same torch
# for CUDA 12.8.
CU126 = "https://download.pytorch.org/whl/cu126"
CU128 = "https://download.pytorch.org/whl/cu128"
FIRST_COMMANDS = {
    ("torch-2.8.0", "GTX 1080", "570.86.16"): [
        f"pip install torch==2.14.1+cu126 torchvision==0.29.1+cu126 --index-url {CU126}",
        "pip install torchaudio==2.11.1",
        "pip uninstall -y xformers"],
    ("torch-2.15.0", "V100", "580.65.06"): [
        f"pip install torch==2.14.1+cu126 torchvision==0.29.1+cu126 --index-url {CU126}",
        "pip install torchaudio==2.11.1",
        "pip uninstall -y xformers"],
    ("torch-2.5.1", "RTX 5090", "580.65.06"): [
        "pip install torch==2.15.0 torchvision==0.29.2 torchaudio==2.11.1 xformers==0.0.35"],
    ("torch-2.5.1", "RTX 5090", "570.86.16"): [
        "pip install torch==2.11.0+cu128 torchvision==0.26.0+cu128 torchaudio==2.11.0+cu128 "
        f"xformers==0.0.35 --index-url {CU128}"],
    ("torch-2.5.1", "B200", "580.65.06"): [
        "pip install torch==2.15.0 torchvision==0.29.2 torchaudio==2.11.1 xformers==0.0.35"],
}
# Alternatives, by their first command: keep xformers on the GTX 1080 with the
# newest torch an xformers release still supports there (2.7.0, PyPI's cu126
# build, with xformers 0.0.30: sm_60); keep the R570 driver with torch 2.11.0
# built for CUDA 12.8.
ALTERNATIVES = {
    ("torch-2.8.0", "GTX 1080", "570.86.16"):
        "pip install torch==2.7.0 torchvision==0.22.0 torchaudio==2.7.0 xformers==0.0.30",
    ("torch-2.11.0", "RTX 4090", "570.86.16"):
        "pip install torch==2.11.0+cu128 torchvision==0.26.0+cu128 torchaudio==2.11.0+cu128 "
        f"--index-url {CU128}",
}
# Driver updates: the driver the first fix asks for.
DRIVER_UPDATES = {
    ("torch-2.11.0", "RTX 4090", "570.86.16"): "580.65.06",
    ("torch-2.11.0", "RTX 5090", "550.144.03"): "580.65.06",  # knows sm_120 and runs CUDA 13
    ("torch-2.8.0", "B200", "550.144.03"): "570.26",
}

# Distributions published as binaries only: no fix may build one from source.
BINARY_ONLY_PREFIXES = ("nvidia-", "onnxruntime-gpu", "bitsandbytes", "cupy-cuda", "torch")
