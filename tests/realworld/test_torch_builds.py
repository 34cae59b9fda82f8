"""What is inside each torch build: the scan of libtorch_cuda.so against
PyTorch's published list, the list compiled into the build itself, and the
knowledge base's entry for it."""

import collections
import re
from pathlib import Path

import pytest
import yaml

from expectations import LIBTORCH_CUDA, TORCH_BUILDS, TORCH_OF

ENVS = sorted(TORCH_OF)
TORCH_KB = Path(__file__).resolve().parents[2] / "sdk" / "data" / "kb" / "torch.yaml"


def plain_sm(arch):
    return int(re.fullmatch(r"(?:sm|compute)_(\d+)", arch).group(1))


def libtorch_cuda_images(site_scans, env):
    return site_scans[env]["torch/lib/libtorch_cuda.so"]["images"]


@pytest.mark.parametrize("env", ENVS)
def test_installed_torch_is_the_published_build(sites, env):
    version_py = (sites[env] / "torch" / "version.py").read_text()
    assert f"__version__ = '{TORCH_OF[env]}'" in version_py


@pytest.mark.parametrize("env", ENVS)
def test_libtorch_cuda_holds_the_published_list(site_scans, env):
    build = TORCH_OF[env]
    published, found = TORCH_BUILDS[build], LIBTORCH_CUDA[build]
    images = libtorch_cuda_images(site_scans, env)
    counts = collections.Counter((i["kind"], i["arch"]) for i in images)
    every_kernel = {arch for (kind, arch), n in counts.items()
                    if kind == "sass" and n == found["per_arch"]}
    extra = {arch: n for (kind, arch), n in counts.items()
             if kind == "sass" and n != found["per_arch"]}
    assert sorted(every_kernel, key=plain_sm) == list(published.sass), published.source
    assert [arch for (kind, arch) in counts if kind == "ptx"] == list(published.ptx)
    assert extra == found["extra"]
    assert len(images) == found["total"]  # cuobjdump --list-elf's count
    assert {i["section"] for i in images} == {".nv_fatbin"}
    assert not any(i["relocatable"] for i in images)


@pytest.mark.parametrize("env", ENVS)
def test_arch_list_compiled_into_torch_is_the_published_one(sites, env):
    # torch.cuda.get_arch_list() splits torch._C._cuda_getArchFlags(), a string
    # constant of libtorch_python.so; read it without importing torch.
    data = (sites[env] / "torch" / "lib" / "libtorch_python.so").read_bytes()
    found = set(re.findall(rb"(?:sm|compute)_\d+(?: (?:sm|compute)_\d+){3,}", data))
    assert len(found) == 1, found
    published = TORCH_BUILDS[TORCH_OF[env]]
    assert found.pop().decode().split() == [*published.sass, *published.ptx]


def kb_build(version, tag):
    kb = yaml.safe_load(TORCH_KB.read_text())
    for release in kb["releases"]:
        listed = [v["version"] if isinstance(v, dict) else v for v in release["versions"]]
        if version in listed:
            for build in release["builds"]:
                if build["tag"] == tag:
                    return build
    raise AssertionError(f"torch.yaml has no {version} {tag} build")


@pytest.mark.parametrize("env", ENVS)
def test_knowledge_base_agrees_with_the_scan(site_scans, env):
    version, tag = TORCH_OF[env].split("+")
    build = kb_build(version, tag)
    per_arch = LIBTORCH_CUDA[TORCH_OF[env]]["per_arch"]
    counts = collections.Counter((i["kind"], i["arch"]) for i in libtorch_cuda_images(site_scans, env))
    sass = sorted(plain_sm(a) for (k, a), n in counts.items() if k == "sass" and n == per_arch)
    ptx = sorted(plain_sm(a) for (k, a) in counts if k == "ptx")
    assert (build["sass"], build["ptx"]) == (sass, ptx), build.get("source")


# Every file with device code, as cuobjdump finds it too (nvidia/cuda_nvrtc's
# libnvrtc.so.12 and libnvrtc-builtins.so.12.4 hold none).
DEVICE_CODE = {
    "cu124": {
        "torch/lib/libtorch_cuda.so", "torch/lib/libtorch_cuda_linalg.so",
        "torch/lib/libcusparseLt-294d6944.so.0", "xformers/_C.so",
        *(f"bitsandbytes/libbitsandbytes_cuda{v}.so"
          for v in (117, 118, 120, 121, 122, 123, 124, 125, 126)),
    },
    "cu128": {"torch/lib/libtorch_cuda.so", "torch/lib/libtorch_cuda_linalg.so"},
}


@pytest.mark.parametrize("env", ENVS)
def test_device_code_is_where_cuobjdump_finds_it(site_scans, env):
    assert {rel for rel, f in site_scans[env].items() if f["images"]} == DEVICE_CODE[env]
