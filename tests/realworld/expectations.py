"""What the real-world tier expects, and where each expectation comes from.

The architecture lists are the ones PyTorch publishes for these builds; the
verdicts follow from them by NVIDIA's rules (`verdict` below), and
test_expectations.py checks that every table entry does.
"""

from __future__ import annotations

import dataclasses
import re

# The GPUs judged, by the name given to --gpu, with their compute capability.
GPUS = {
    "RTX 3090": (8, 6),
    "RTX 4090": (8, 9),
    "RTX 5090": (12, 0),
    "H100": (9, 0),
    "B200": (10, 0),
}
DRIVER = "570.86"  # R570 knows PTX ISA 8.7 (CUDA 12.8); every PTX here is ISA 8.5 or older

FAILURES = {"no-image", "ptx-too-new-for-driver", "relocatable-only"}


def parse_arch(arch: str) -> tuple[int, int, str]:
    """'sm_90a' -> (9, 0, 'a'); 'compute_120' -> (12, 0, '')."""
    m = re.fullmatch(r"(?:sm|compute)_(\d+)([af]?)", arch)
    if not m:
        raise ValueError(f"not an architecture: {arch}")
    sm = int(m.group(1))
    return sm // 10, sm % 10, m.group(2)


def sass_runs(arch: str, cc: tuple[int, int]) -> bool:
    """A cubin runs on its own major with a minor at least its own; an 'a'
    cubin on its exact capability only."""
    major, minor, variant = parse_arch(arch)
    if variant == "a":
        return (major, minor) == cc
    return major == cc[0] and minor <= cc[1]


def ptx_jits(arch: str, cc: tuple[int, int]) -> bool:
    """The driver JIT-compiles PTX for any capability at least its target
    ('a': that capability only; 'f': its major only)."""
    major, minor, variant = parse_arch(arch)
    if variant == "a":
        return (major, minor) == cc
    if variant == "f":
        return major == cc[0] and minor <= cc[1]
    return (major, minor) <= cc


def verdict(sass, ptx, cc: tuple[int, int]) -> str:
    if any(sass_runs(a, cc) for a in sass):
        return "native"
    if any(ptx_jits(a, cc) for a in ptx):
        return "ptx-jit"
    return "no-image" if sass or ptx else "no-device-code"


@dataclasses.dataclass(frozen=True)
class ArchList:
    sass: tuple[str, ...]
    ptx: tuple[str, ...]
    source: str


def arch_list(archs: str, source: str) -> ArchList:
    """From a list as get_arch_list() prints it: 'sm_86 sm_90 compute_90'."""
    words = archs.split()
    return ArchList(tuple(w for w in words if w.startswith("sm_")),
                    tuple(w for w in words if w.startswith("compute_")), source)


# ---- torch: the lists PyTorch publishes (torch.cuda.get_arch_list()) --------

TORCH_BUILDS = {
    "2.5.1+cu124": arch_list(
        "sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90",
        source=(
            "pytorch/builder manywheel/build_cuda.sh, CUDA 12.x before 12.8: "
            "TORCH_CUDA_ARCH_LIST 5.0;6.0;7.0;7.5;8.0;8.6;9.0 (no +PTX); the warning these "
            "wheels print on an RTX 50: 'The current PyTorch install supports CUDA "
            "capabilities sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90' (pytorch/pytorch#150733, "
            "Hellod035/LeggedLab#26)"
        ),
    ),
    "2.8.0+cu128": arch_list(
        "sm_70 sm_75 sm_80 sm_86 sm_90 sm_100 sm_120",
        source=(
            "PyTorch 2.8 support matrix (dev-discuss 'Maxwell and Pascal architecture "
            "support removed in CUDA 12.8 and 12.9 builds', July 2025; pytorch/pytorch#157517): "
            "CUDA 12.8 = Volta(7.0), Turing(7.5), Ampere(8.0, 8.6), Hopper(9.0), "
            "Blackwell(10.0, 12.0), with +PTX (compute_120) only on the 12.9 build; "
            "release/2.8 .ci/manywheel/build_cuda.sh 12.8: 7.0;7.5;8.0;8.6;9.0;10.0;12.0"
        ),
    ),
}

# What a scan of torch/lib/libtorch_cuda.so finds (cuobjdump --list-elf lists
# the same cubins, and --list-ptx no PTX): every kernel file is built for each
# architecture of the published list, plus a few kernels built for one
# architecture only, which get_arch_list() does not mention.
LIBTORCH_CUDA = {
    "2.5.1+cu124": {"per_arch": 340, "extra": {"sm_90a": 1}, "total": 2381},
    "2.8.0+cu128": {
        "per_arch": 393,
        "extra": {"sm_89": 1, "sm_90a": 4, "sm_100a": 1, "sm_120a": 1},
        "total": 2758,
    },
}

# ---- the other distributions: no published list; read from their wheels ----

# xformers 0.0.28.post3 (built against torch 2.5.1+cu124): xformers/_C.so, 19
# fatbins each with these images; the wheel workflow builds TORCH_CUDA_ARCH_LIST
# with +PTX on 6.0 and 8.0 and adds 9.0a for CUDA 12.
XFORMERS = arch_list(
    "sm_60 sm_70 sm_75 sm_80 sm_90a compute_60 compute_80",
    source="the wheel's xformers/_C.so (archfit scan; cuobjdump agrees up to where it stops)",
)

# bitsandbytes 0.45.0 ships one library per CUDA release and loads the one for
# torch.version.cuda (bitsandbytes/cextension.py: libbitsandbytes_cuda{major}{minor}.so),
# so with torch 2.5.1+cu124 it is libbitsandbytes_cuda124.so. Its PTX
# (compute_90) is only in __nv_relfatbin, as device-link inputs: not loadable.
BITSANDBYTES_LOADED = "libbitsandbytes_cuda124.so"
BITSANDBYTES = arch_list(
    "sm_50 sm_52 sm_60 sm_61 sm_70 sm_75 sm_80 sm_86 sm_89 sm_90",
    source="the wheel's bitsandbytes/libbitsandbytes_cuda124.so .nv_fatbin",
)

# ---- the environments and the verdicts expected there ------------------------

# Installed each into its own throwaway site-packages. torch 2.5.1 pins
# nvidia-cuda-nvrtc-cu12==12.4.127 and xformers 0.0.28.post3 pins torch==2.5.1;
# bitsandbytes 0.45.0 has no library for CUDA 12.8, so it goes with cu124 too.
ENVIRONMENTS = {
    "cu124": ("torch-2.5.1", "xformers", "bitsandbytes", "nvrtc"),
    "cu128": ("torch-2.8.0",),
}
TORCH_OF = {"cu124": "2.5.1+cu124", "cu128": "2.8.0+cu128"}

# The distributions' own names and versions (their dist-info), for each wheel.
DISTRIBUTIONS = {
    "torch-2.5.1": ("torch", "2.5.1"),
    "torch-2.8.0": ("torch", "2.8.0"),
    "xformers": ("xformers", "0.0.28.post3"),
    "bitsandbytes": ("bitsandbytes", "0.45.0"),
    "nvrtc": ("nvidia-cuda-nvrtc-cu12", "12.4.127"),
}

# Per environment, component and GPU. nvidia-cuda-nvrtc-cu12 holds no device
# code (libnvrtc.so.12 and libnvrtc-builtins.so.12.4: archfit and cuobjdump
# agree), so it is no component of the report.
N, J, X = "native", "ptx-jit", "no-image"
_COLUMNS = tuple(GPUS)  # RTX 3090, RTX 4090, RTX 5090, H100, B200
EXPECTED = {
    "cu124": {
        "torch": dict(zip(_COLUMNS, (N, N, X, N, X))),
        "xformers": dict(zip(_COLUMNS, (N, N, J, N, J))),
        "bitsandbytes": dict(zip(_COLUMNS, (N, N, X, N, X))),
    },
    "cu128": {
        "torch": dict(zip(_COLUMNS, (N, N, N, N, N))),
    },
}
# Which list each expectation follows from (test_expectations.py).
SOURCES = {
    ("cu124", "torch"): TORCH_BUILDS["2.5.1+cu124"],
    ("cu124", "xformers"): XFORMERS,
    ("cu124", "bitsandbytes"): BITSANDBYTES,
    ("cu128", "torch"): TORCH_BUILDS["2.8.0+cu128"],
}

# Where archfit is known to say something else, and why; these cells are
# strict xfails, so fixing archfit makes them fail until this entry goes.
KNOWN_GAPS: dict = {
    # Fixed: archfit once judged all nine libbitsandbytes_cudaXYZ.so and failed
    # bitsandbytes on H100 for the cuda117/118 copies' missing sm_90; it now
    # judges only the copy bitsandbytes loads for torch's CUDA (cuda124 here).
}


def expected_overall(env: str, gpu: str) -> str:
    fails = any(EXPECTED[env][c][gpu] in FAILURES for c in EXPECTED[env])
    return "fails" if fails else "fits"


def known_gap(env: str, component: str | None, gpu: str) -> str | None:
    """The reason archfit differs here, if it is known to; component None is
    the overall verdict, which a gap in any component changes."""
    if component is not None:
        return KNOWN_GAPS.get((env, component, gpu))
    reasons = [r for (e, _, g), r in KNOWN_GAPS.items() if (e, g) == (env, gpu)]
    return reasons[0] if reasons else None
