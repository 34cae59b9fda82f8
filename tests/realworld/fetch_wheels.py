#!/usr/bin/env python3
"""Download the real-world tier's wheels from PyPI into a cache, once.

The set is pinned: each wheel by name, version, file name and sha256, fetched
with a fixed platform list and Python 3.11 so that every interpreter gets the
same files. WHEELS are single wheels judged alone; STACK_WHEELS are whole
environments as pip installs them (torch 2.5.1, 2.8.0, 2.11.0 and 2.15.0 with
their nvidia-* wheels, xformers, bitsandbytes, onnxruntime-gpu, cupy), about 13 GB. A wheel already in the cache (right size) is not fetched again.
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

# Every manylinux tag a glibc 2.39 x86_64 machine accepts: NVIDIA's CUDA 13
# wheels use manylinux_2_25 and _2_18, torch's _2_28.
PLATFORMS = (
    *(f"manylinux_2_{minor}_x86_64" for minor in range(39, 4, -1)),
    "manylinux2014_x86_64",
    "manylinux2010_x86_64",
    "manylinux1_x86_64",
)
PYTHON_VERSION = "3.11"


@dataclasses.dataclass(frozen=True)
class Wheel:
    requirement: str
    file: str
    size: int
    sha256: str
    # Where the wheel is not for this machine: the one platform and Python
    # pip is asked for (WINDOWS_WHEELS).
    platform: str = ""
    python_version: str = ""


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


# Every wheel of the stack environments (STACKS), pinned: what pip installs for
# each set of requirements from PyPI (pip install --dry-run --report, cp311, manylinux
# x86_64), by requirement, file, size and sha256.
STACK_WHEELS = {
    "bitsandbytes==0.45.0": Wheel("bitsandbytes==0.45.0", "bitsandbytes-0.45.0-py3-none-manylinux_2_24_x86_64.whl", 69084267, "0f0323de1ff1fdf8383e79bdad1283516a4c05a6fd2b44a363bf4e059422305b"),
    "bitsandbytes==0.50.2": Wheel("bitsandbytes==0.50.2", "bitsandbytes-0.50.2-py3-none-manylinux_2_24_x86_64.whl", 43139553, "55348a9a4a21bfd99cf8c7b32fe67b4030ae5c2a05738e03c1747f65fa6ec283"),
    "cuda-bindings==13.5.0": Wheel("cuda-bindings==13.5.0", "cuda_bindings-13.5.0-cp311-cp311-manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl", 8390178, "08b7e8d674c3266facb00453a7e34ea7d3ea965c2f594bb728f269f45f39fbe2"),
    "cuda-pathfinder==1.9.1": Wheel("cuda-pathfinder==1.9.1", "cuda_pathfinder-1.9.1-py3-none-any.whl", 63462, "b743c132f90ad2d1e71d43fd28f31ebcde518f943e50fd44aca62b2a80d5230d"),
    "cuda-toolkit==13.0.2": Wheel("cuda-toolkit==13.0.2", "cuda_toolkit-13.0.2-py2.py3-none-any.whl", 2364, "b198824cf2f54003f50d64ada3a0f184b42ca0846c1c94192fa269ecd97a66eb"),
    "cuda-toolkit==13.2.2": Wheel("cuda-toolkit==13.2.2", "cuda_toolkit-13.2.2-py2.py3-none-any.whl", 2607, "d12edc1aad1356236a2ee10c0d794b1aff5d3e79bfeca54867c3bb8e5afd87b0"),
    "cupy-cuda12x==14.2.0": Wheel("cupy-cuda12x==14.2.0", "cupy_cuda12x-14.2.0-cp311-cp311-manylinux2014_x86_64.whl", 136632369, "5fe2366cc5c61a7ee4a527ce1e8951cb89092d0fb0b5830623cf114d1942c585"),
    "filelock==4.3.2": Wheel("filelock==4.3.2", "filelock-4.3.2-py3-none-any.whl", 244905, "02a8801bc6b2a80921bf3d7895c63084d53bae2a3c86783adce5ae2b89a1825b"),
    "flatbuffers==25.12.19": Wheel("flatbuffers==25.12.19", "flatbuffers-25.12.19-py2.py3-none-any.whl", 26661, "7634f50c427838bb021c2d66a3d1168e9d199b0607e6329399f04846d42e20b4"),
    "fsspec==2026.9.0": Wheel("fsspec==2026.9.0", "fsspec-2026.9.0-py3-none-any.whl", 221738, "8dd6e646e99ea382bd85f97a45e6b526a442d79423a7dc673f1e2756d05fcb5f"),
    "Jinja2==3.1.6": Wheel("Jinja2==3.1.6", "jinja2-3.1.6-py3-none-any.whl", 134899, "85ece4451f492d0c13c5dd7c13a64681a86afae63a5f347908daf103ce6d2f67"),
    "MarkupSafe==3.0.4": Wheel("MarkupSafe==3.0.4", "markupsafe-3.0.4-cp311-cp311-manylinux2014_x86_64.manylinux_2_17_x86_64.manylinux_2_28_x86_64.whl", 22961, "6da83a088f8ef93b2d483a8232a4dbf4d69d3d8496b568a03c56becac43e1808"),
    "mpmath==1.3.0": Wheel("mpmath==1.3.0", "mpmath-1.3.0-py3-none-any.whl", 536198, "a0b2b9fe80bbcd81a6647ff13108738cfb482d481d826cc0e02f5b35e5c88d2c"),
    "networkx==3.6.1": Wheel("networkx==3.6.1", "networkx-3.6.1-py3-none-any.whl", 2068504, "d47fbf302e7d9cbbb9e2555a0d267983d2aa476bac30e90dfbe5669bd57f3762"),
    "numpy==2.4.6": Wheel("numpy==2.4.6", "numpy-2.4.6-cp311-cp311-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl", 16918164, "89cd468399cfd2504718f0ba50e410dca55a170b61a02ad92bb18c8a65186e93"),
    "nvidia-cublas-cu12==12.4.5.8": Wheel("nvidia-cublas-cu12==12.4.5.8", "nvidia_cublas_cu12-12.4.5.8-py3-none-manylinux2014_x86_64.whl", 363438805, "2fc8da60df463fdefa81e323eef2e36489e1c94335b5358bcb38360adf75ac9b"),
    "nvidia-cublas-cu12==12.8.4.1": Wheel("nvidia-cublas-cu12==12.8.4.1", "nvidia_cublas_cu12-12.8.4.1-py3-none-manylinux_2_27_x86_64.whl", 594346921, "8ac4e771d5a348c551b2a426eda6193c19aa630236b418086020df5ba9667142"),
    "nvidia-cublas==13.1.0.3": Wheel("nvidia-cublas==13.1.0.3", "nvidia_cublas-13.1.0.3-py3-none-manylinux_2_27_x86_64.whl", 423133236, "ee8722c1f0145ab246bccb9e452153b5e0515fd094c3678df50b2a0888b8b171"),
    "nvidia-cublas==13.4.1.3": Wheel("nvidia-cublas==13.4.1.3", "nvidia_cublas-13.4.1.3-py3-none-manylinux_2_27_x86_64.whl", 404870805, "a5917cb642cfb07f4a0231ee16aec7e2e0357d8cb8b1b78a0c9c68dba3e6afc7"),
    "nvidia-cuda-cccl==13.3.5.0.6": Wheel("nvidia-cuda-cccl==13.3.5.0.6", "nvidia_cuda_cccl-13.3.5.0.6-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl", 4113651, "d5230098fa2df5021e1a00c0c4eee41797671a91119d31e892463e5ccf3ee326"),
    "nvidia-cuda-cupti-cu12==12.4.127": Wheel("nvidia-cuda-cupti-cu12==12.4.127", "nvidia_cuda_cupti_cu12-12.4.127-py3-none-manylinux2014_x86_64.whl", 13813957, "9dec60f5ac126f7bb551c055072b69d85392b13311fcc1bcda2202d172df30fb"),
    "nvidia-cuda-cupti-cu12==12.8.90": Wheel("nvidia-cuda-cupti-cu12==12.8.90", "nvidia_cuda_cupti_cu12-12.8.90-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl", 10248621, "ea0cb07ebda26bb9b29ba82cda34849e73c166c18162d3913575b0c9db9a6182"),
    "nvidia-cuda-cupti==13.0.85": Wheel("nvidia-cuda-cupti==13.0.85", "nvidia_cuda_cupti-13.0.85-py3-none-manylinux_2_25_x86_64.whl", 10715597, "4eb01c08e859bf924d222250d2e8f8b8ff6d3db4721288cf35d14252a4d933c8"),
    "nvidia-cuda-cupti==13.2.86": Wheel("nvidia-cuda-cupti==13.2.86", "nvidia_cuda_cupti-13.2.86-py3-none-manylinux_2_25_x86_64.whl", 11988600, "8fa29f15dd8336181f961764d9d95236fc6b931dd0c8fcf8cd70aab0c310b586"),
    "nvidia-cuda-nvrtc-cu12==12.4.127": Wheel("nvidia-cuda-nvrtc-cu12==12.4.127", "nvidia_cuda_nvrtc_cu12-12.4.127-py3-none-manylinux2014_x86_64.whl", 24640306, "a178759ebb095827bd30ef56598ec182b85547f1508941a3d560eb7ea1fbf338"),
    "nvidia-cuda-nvrtc-cu12==12.8.93": Wheel("nvidia-cuda-nvrtc-cu12==12.8.93", "nvidia_cuda_nvrtc_cu12-12.8.93-py3-none-manylinux2010_x86_64.manylinux_2_12_x86_64.whl", 88040029, "a7756528852ef889772a84c6cd89d41dfa74667e24cca16bb31f8f061e3e9994"),
    "nvidia-cuda-nvrtc==13.0.88": Wheel("nvidia-cuda-nvrtc==13.0.88", "nvidia_cuda_nvrtc-13.0.88-py3-none-manylinux2010_x86_64.manylinux_2_12_x86_64.whl", 90215200, "ad9b6d2ead2435f11cbb6868809d2adeeee302e9bb94bcf0539c7a40d80e8575"),
    "nvidia-cuda-nvrtc==13.2.86": Wheel("nvidia-cuda-nvrtc==13.2.86", "nvidia_cuda_nvrtc-13.2.86-py3-none-manylinux2010_x86_64.manylinux_2_12_x86_64.whl", 47018468, "8111c5130e967b78222ea2124145f8efe9ce201b752b2579a2513100a53be1c5"),
    "nvidia-cuda-runtime-cu12==12.4.127": Wheel("nvidia-cuda-runtime-cu12==12.4.127", "nvidia_cuda_runtime_cu12-12.4.127-py3-none-manylinux2014_x86_64.whl", 883737, "64403288fa2136ee8e467cdc9c9427e0434110899d07c779f25b5c068934faa5"),
    "nvidia-cuda-runtime-cu12==12.8.90": Wheel("nvidia-cuda-runtime-cu12==12.8.90", "nvidia_cuda_runtime_cu12-12.8.90-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl", 954765, "adade8dcbd0edf427b7204d480d6066d33902cab2a4707dcfc48a2d0fd44ab90"),
    "nvidia-cuda-runtime==13.0.96": Wheel("nvidia-cuda-runtime==13.0.96", "nvidia_cuda_runtime-13.0.96-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl", 2243632, "7f82250d7782aa23b6cfe765ecc7db554bd3c2870c43f3d1821f1d18aebf0548"),
    "nvidia-cuda-runtime==13.2.86": Wheel("nvidia-cuda-runtime==13.2.86", "nvidia_cuda_runtime-13.2.86-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl", 2323576, "3498247680dfddce31bad102af7e3e26fc795342a3cac64722bb0fa95e7f60f0"),
    "nvidia-cudnn-cu12==9.1.0.70": Wheel("nvidia-cudnn-cu12==9.1.0.70", "nvidia_cudnn_cu12-9.1.0.70-py3-none-manylinux2014_x86_64.whl", 664752741, "165764f44ef8c61fcdfdfdbe769d687e06374059fbb388b6c89ecb0e28793a6f"),
    "nvidia-cudnn-cu12==9.10.2.21": Wheel("nvidia-cudnn-cu12==9.10.2.21", "nvidia_cudnn_cu12-9.10.2.21-py3-none-manylinux_2_27_x86_64.whl", 706758467, "949452be657fa16687d0930933f032835951ef0892b37d2d53824d1a84dc97a8"),
    "nvidia-cudnn-cu13==9.19.0.56": Wheel("nvidia-cudnn-cu13==9.19.0.56", "nvidia_cudnn_cu13-9.19.0.56-py3-none-manylinux_2_27_x86_64.whl", 366066321, "d20e1734305e9d68889a96e3f35094d733ff1f83932ebe462753973e53a572bf"),
    "nvidia-cudnn-cu13==9.26.0.51": Wheel("nvidia-cudnn-cu13==9.26.0.51", "nvidia_cudnn_cu13-9.26.0.51-py3-none-manylinux_2_27_x86_64.whl", 519150073, "9c976d539786698c71d6bcdbe2053b7485fae062ff7e1215d2f2ff67b1a2149a"),
    "nvidia-cufft-cu12==11.2.1.3": Wheel("nvidia-cufft-cu12==11.2.1.3", "nvidia_cufft_cu12-11.2.1.3-py3-none-manylinux2014_x86_64.whl", 211459117, "f083fc24912aa410be21fa16d157fed2055dab1cc4b6934a0e03cba69eb242b9"),
    "nvidia-cufft-cu12==11.3.3.83": Wheel("nvidia-cufft-cu12==11.3.3.83", "nvidia_cufft_cu12-11.3.3.83-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl", 193118695, "4d2dd21ec0b88cf61b62e6b43564355e5222e4a3fb394cac0db101f2dd0d4f74"),
    "nvidia-cufft==12.0.0.61": Wheel("nvidia-cufft==12.0.0.61", "nvidia_cufft-12.0.0.61-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl", 214085489, "6c44f692dce8fd5ffd3e3df134b6cdb9c2f72d99cf40b62c32dde45eea9ddad3"),
    "nvidia-cufft==12.2.0.57": Wheel("nvidia-cufft==12.2.0.57", "nvidia_cufft-12.2.0.57-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl", 218258101, "34da27fadf3979b0b042c43823f0530be8408b86df31ee0108e1ca0b621d4ef6"),
    "nvidia-cufile-cu12==1.13.1.3": Wheel("nvidia-cufile-cu12==1.13.1.3", "nvidia_cufile_cu12-1.13.1.3-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl", 1197834, "1d069003be650e131b21c932ec3d8969c1715379251f8d23a1860554b1cb24fc"),
    "nvidia-cufile==1.15.1.6": Wheel("nvidia-cufile==1.15.1.6", "nvidia_cufile-1.15.1.6-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl", 1223672, "08a3ecefae5a01c7f5117351c64f17c7c62efa5fffdbe24fc7d298da19cd0b44"),
    "nvidia-cufile==1.17.1.22": Wheel("nvidia-cufile==1.17.1.22", "nvidia_cufile-1.17.1.22-py3-none-manylinux_2_27_x86_64.whl", 1387670, "87feaf8c3ad20d3d03a01933181801ff6892bace5c8f0b1e4b48f319d3e62d36"),
    "nvidia-curand-cu12==10.3.5.147": Wheel("nvidia-curand-cu12==10.3.5.147", "nvidia_curand_cu12-10.3.5.147-py3-none-manylinux2014_x86_64.whl", 56305206, "a88f583d4e0bb643c49743469964103aa59f7f708d862c3ddb0fc07f851e3b8b"),
    "nvidia-curand-cu12==10.3.9.90": Wheel("nvidia-curand-cu12==10.3.9.90", "nvidia_curand_cu12-10.3.9.90-py3-none-manylinux_2_27_x86_64.whl", 63619976, "b32331d4f4df5d6eefa0554c565b626c7216f87a06a4f56fab27c3b68a830ec9"),
    "nvidia-curand==10.4.0.35": Wheel("nvidia-curand==10.4.0.35", "nvidia_curand-10.4.0.35-py3-none-manylinux_2_27_x86_64.whl", 59544258, "1aee33a5da6e1db083fe2b90082def8915f30f3248d5896bcec36a579d941bfc"),
    "nvidia-cusolver-cu12==11.6.1.9": Wheel("nvidia-cusolver-cu12==11.6.1.9", "nvidia_cusolver_cu12-11.6.1.9-py3-none-manylinux2014_x86_64.whl", 127936057, "19e33fa442bcfd085b3086c4ebf7e8debc07cfe01e11513cc6d332fd918ac260"),
    "nvidia-cusolver-cu12==11.7.3.90": Wheel("nvidia-cusolver-cu12==11.7.3.90", "nvidia_cusolver_cu12-11.7.3.90-py3-none-manylinux_2_27_x86_64.whl", 267506905, "4376c11ad263152bd50ea295c05370360776f8c3427b30991df774f9fb26c450"),
    "nvidia-cusolver==12.0.4.66": Wheel("nvidia-cusolver==12.0.4.66", "nvidia_cusolver-12.0.4.66-py3-none-manylinux_2_27_x86_64.whl", 200941980, "0a759da5dea5c0ea10fd307de75cdeb59e7ea4fcb8add0924859b944babf1112"),
    "nvidia-cusolver==12.2.0.11": Wheel("nvidia-cusolver==12.2.0.11", "nvidia_cusolver-12.2.0.11-py3-none-manylinux_2_27_x86_64.whl", 227913465, "fab5778f6769947389a1a6abc07e635576825a08c0ffc68c3ae7f1392c794b42"),
    "nvidia-cusparse-cu12==12.3.1.170": Wheel("nvidia-cusparse-cu12==12.3.1.170", "nvidia_cusparse_cu12-12.3.1.170-py3-none-manylinux2014_x86_64.whl", 207454763, "ea4f11a2904e2a8dc4b1833cc1b5181cde564edd0d5cd33e3c168eff2d1863f1"),
    "nvidia-cusparse-cu12==12.5.8.93": Wheel("nvidia-cusparse-cu12==12.5.8.93", "nvidia_cusparse_cu12-12.5.8.93-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl", 288216466, "1ec05d76bbbd8b61b06a80e1eaf8cf4959c3d4ce8e711b65ebd0443bb0ebb13b"),
    "nvidia-cusparse==12.6.3.3": Wheel("nvidia-cusparse==12.6.3.3", "nvidia_cusparse-12.6.3.3-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl", 145942937, "2b3c89c88d01ee0e477cb7f82ef60a11a4bcd57b6b87c33f789350b59759360b"),
    "nvidia-cusparse==12.7.10.12": Wheel("nvidia-cusparse==12.7.10.12", "nvidia_cusparse-12.7.10.12-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl", 150999307, "25907c75e4db1581685f06f61cc6cdecc04611765516a52373e0a18ebd69fa00"),
    "nvidia-cusparselt-cu12==0.7.1": Wheel("nvidia-cusparselt-cu12==0.7.1", "nvidia_cusparselt_cu12-0.7.1-py3-none-manylinux2014_x86_64.whl", 287193691, "f1bb701d6b930d5a7cea44c19ceb973311500847f81b634d802b7b539dc55623"),
    "nvidia-cusparselt-cu13==0.8.0": Wheel("nvidia-cusparselt-cu13==0.8.0", "nvidia_cusparselt_cu13-0.8.0-py3-none-manylinux2014_x86_64.whl", 169884119, "25e30a8a7323935d4ad0340b95a0b69926eee755767e8e0b1cf8dd85b197d3fd"),
    "nvidia-cusparselt-cu13==0.8.1": Wheel("nvidia-cusparselt-cu13==0.8.1", "nvidia_cusparselt_cu13-0.8.1-py3-none-manylinux2014_x86_64.whl", 170148586, "786ce87568c303fadb5afcc7102d454cd3040d75f6f8626f5db460d1871f4dd0"),
    "nvidia-nccl-cu12==2.21.5": Wheel("nvidia-nccl-cu12==2.21.5", "nvidia_nccl_cu12-2.21.5-py3-none-manylinux2014_x86_64.whl", 188654414, "8579076d30a8c24988834445f8d633c697d42397e92ffc3f63fa26766d25e0a0"),
    "nvidia-nccl-cu12==2.27.3": Wheel("nvidia-nccl-cu12==2.27.3", "nvidia_nccl_cu12-2.27.3-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl", 322364134, "adf27ccf4238253e0b826bce3ff5fa532d65fc42322c8bfdfaf28024c0fbe039"),
    "nvidia-nccl-cu13==2.28.9": Wheel("nvidia-nccl-cu13==2.28.9", "nvidia_nccl_cu13-2.28.9-py3-none-manylinux_2_18_x86_64.whl", 196493177, "e4553a30f34195f3fa1da02a6da3d6337d28f2003943aa0a3d247bbc25fefc42"),
    "nvidia-nccl-cu13==2.30.7": Wheel("nvidia-nccl-cu13==2.30.7", "nvidia_nccl_cu13-2.30.7-py3-none-manylinux_2_18_x86_64.whl", 215965170, "cefa7fdb9710efd0f39c5f1be1d61ff6fc9a996c451265bd7fbdcf9455ed4b50"),
    "nvidia-nvjitlink-cu12==12.4.127": Wheel("nvidia-nvjitlink-cu12==12.4.127", "nvidia_nvjitlink_cu12-12.4.127-py3-none-manylinux2014_x86_64.whl", 21066810, "06b3b9b25bf3f8af351d664978ca26a16d2c5127dbd53c0497e28d1fb9611d57"),
    "nvidia-nvjitlink-cu12==12.8.93": Wheel("nvidia-nvjitlink-cu12==12.8.93", "nvidia_nvjitlink_cu12-12.8.93-py3-none-manylinux2010_x86_64.manylinux_2_12_x86_64.whl", 39254836, "81ff63371a7ebd6e6451970684f916be2eab07321b73c9d244dc2b4da7f73b88"),
    "nvidia-nvjitlink==13.0.88": Wheel("nvidia-nvjitlink==13.0.88", "nvidia_nvjitlink-13.0.88-py3-none-manylinux2010_x86_64.manylinux_2_12_x86_64.whl", 40713933, "13a74f429e23b921c1109976abefacc69835f2f433ebd323d3946e11d804e47b"),
    "nvidia-nvjitlink==13.5.37": Wheel("nvidia-nvjitlink==13.5.37", "nvidia_nvjitlink-13.5.37-py3-none-manylinux2010_x86_64.manylinux_2_12_x86_64.whl", 46642491, "280d7cb9649704145f074b8dbde500de04ce02d0872e066e20a83c17bcaa93eb"),
    "nvidia-nvshmem-cu13==3.4.5": Wheel("nvidia-nvshmem-cu13==3.4.5", "nvidia_nvshmem_cu13-3.4.5-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl", 60412546, "290f0a2ee94c9f3687a02502f3b9299a9f9fe826e6d0287ee18482e78d495b80"),
    "nvidia-nvshmem-cu13==3.7.2": Wheel("nvidia-nvshmem-cu13==3.7.2", "nvidia_nvshmem_cu13-3.7.2-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl", 135397797, "b9a4f843c62b5dded8ad33fd6d220e007dcd39f06cee549292f5ba14ce4c235c"),
    "nvidia-nvtx-cu12==12.4.127": Wheel("nvidia-nvtx-cu12==12.4.127", "nvidia_nvtx_cu12-12.4.127-py3-none-manylinux2014_x86_64.whl", 99144, "781e950d9b9f60d8241ccea575b32f5105a5baf4c2351cab5256a24869f12a1a"),
    "nvidia-nvtx-cu12==12.8.90": Wheel("nvidia-nvtx-cu12==12.8.90", "nvidia_nvtx_cu12-12.8.90-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl", 89954, "5b17e2001cc0d751a5bc2c6ec6d26ad95913324a4adb86788c944f8ce9ba441f"),
    "nvidia-nvtx==13.0.85": Wheel("nvidia-nvtx==13.0.85", "nvidia_nvtx-13.0.85-py3-none-manylinux1_x86_64.manylinux_2_5_x86_64.whl", 148047, "4936d1d6780fbe68db454f5e72a42ff64d1fd6397df9f363ae786930fd5c1cd4"),
    "nvidia-nvtx==13.2.86": Wheel("nvidia-nvtx==13.2.86", "nvidia_nvtx-13.2.86-py3-none-manylinux1_x86_64.manylinux_2_5_x86_64.whl", 153463, "968ce72baee2a01791c7d3254000eac81f24677b0b91c62d21b449a1f309c245"),
    "onnxruntime-gpu==1.31.1": Wheel("onnxruntime-gpu==1.31.1", "onnxruntime_gpu-1.31.1-cp311-cp311-manylinux_2_28_x86_64.whl", 255560985, "e26c475fe361b2015f45b4b824bd13f0bb20204e59b62814e6f0acd5f3d491a6"),
    "packaging==26.4": Wheel("packaging==26.4", "packaging-26.4-py3-none-any.whl", 140049, "81383611a09c1bc0b08b76e0fd5829d7c6824c65b27a6aee339da133f4233ea2"),
    "pillow==13.0.0": Wheel("pillow==13.0.0", "pillow-13.0.0-cp311-cp311-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl", 7140667, "a625df9a2a5597fa5e5266e01aefc82604bb85d291e3547981e863560d75da6c"),
    "protobuf==7.36.2": Wheel("protobuf==7.36.2", "protobuf-7.36.2-cp310-abi3-manylinux2014_x86_64.whl", 343223, "89f23aa53c24553a2416fd4fd1ec06f74fa42b14b546d8883128813f775bbfd2"),
    "setuptools==81.0.0": Wheel("setuptools==81.0.0", "setuptools-81.0.0-py3-none-any.whl", 1062021, "fdd925d5c5d9f62e4b74b30d6dd7828ce236fd6ed998a08d81de62ce5a6310d6"),
    "setuptools==84.2.1": Wheel("setuptools==84.2.1", "setuptools-84.2.1-py3-none-any.whl", 876263, "ca140b45d5325a9478f880e351484f62fef15f336462e449ca0c03c873d589c2"),
    "sympy==1.13.1": Wheel("sympy==1.13.1", "sympy-1.13.1-py3-none-any.whl", 6189177, "db36cdc64bf61b9b24578b6f7bab1ecdd2452cf008f34faa33776680c26d66f8"),
    "sympy==1.14.0": Wheel("sympy==1.14.0", "sympy-1.14.0-py3-none-any.whl", 6299353, "e091cc3e99d2141a0ba2847328f5479b05d94a6635cb96148ccb3f34671bd8f5"),
    "torch==2.11.0": Wheel("torch==2.11.0", "torch-2.11.0-cp311-cp311-manylinux_2_28_x86_64.whl", 530604548, "7aa2f9bbc6d4595ba72138026b2074be1233186150e9292865e04b7a63b8c67a"),
    "torch==2.15.0": Wheel("torch==2.15.0", "torch-2.15.0-cp311-cp311-manylinux_2_28_x86_64.whl", 539136850, "48c2d861134c0b5697c7602cb5ffa68f62a2989fdcd1717e593356f67996ca1e"),
    "torch==2.5.1": Wheel("torch==2.5.1", "torch-2.5.1-cp311-cp311-manylinux1_x86_64.whl", 906474467, "de5b7d6740c4b636ef4db92be922f0edc425b65ed78c5076c43c42d362a45457"),
    "torch==2.8.0": Wheel("torch==2.8.0", "torch-2.8.0-cp311-cp311-manylinux_2_28_x86_64.whl", 888063640, "c12fa219f51a933d5f80eeb3a7a5d0cbe9168c0a14bbb4055f1979431660879b"),
    "torchaudio==2.11.0": Wheel("torchaudio==2.11.0", "torchaudio-2.11.0-cp311-cp311-manylinux_2_28_x86_64.whl", 1771930, "1a07ec72fd6f26a588c39b5f029e0130d16bb40bc4221635580bf8fb18fcbc80"),
    "torchaudio==2.11.1": Wheel("torchaudio==2.11.1", "torchaudio-2.11.1-py3-none-manylinux_2_28_x86_64.whl", 1816417, "0173b5b51e1368aa88de3cbe4e98508b5e9df4d8d59356c4e1fbc830c96191ef"),
    "torchaudio==2.5.1": Wheel("torchaudio==2.5.1", "torchaudio-2.5.1-cp311-cp311-manylinux1_x86_64.whl", 3374576, "7af3f7f92fd33bc9f036a60cdeda4cbeb6bccebd18eae89776dd1e8ed042672e"),
    "torchaudio==2.8.0": Wheel("torchaudio==2.8.0", "torchaudio-2.8.0-cp311-cp311-manylinux_2_28_x86_64.whl", 4011716, "776c0b4ba84b9e3ddf6304b9c47cd63549d7896a6f3d5184ece074cc3d76ed6b"),
    "torchvision==0.20.1": Wheel("torchvision==0.20.1", "torchvision-0.20.1-cp311-cp311-manylinux1_x86_64.whl", 7241222, "86f6523dee420000fe14c3527f6c8e0175139fda7d995b187f54a0b0ebec7eb6"),
    "torchvision==0.23.0": Wheel("torchvision==0.23.0", "torchvision-0.23.0-cp311-cp311-manylinux_2_28_x86_64.whl", 8628388, "35c27941831b653f5101edfe62c03d196c13f32139310519e8228f35eae0e96a"),
    "torchvision==0.26.0": Wheel("torchvision==0.26.0", "torchvision-0.26.0-cp311-cp311-manylinux_2_28_x86_64.whl", 7519925, "fd10b5f994c210f4f6d6761cf686f82d748554adf486cb0979770c3252868c8f"),
    "torchvision==0.29.2": Wheel("torchvision==0.29.2", "torchvision-0.29.2-py3-none-manylinux_2_28_x86_64.whl", 7585493, "0875f7a23bd298813240f716c56df44ce72ddb45146589442a38edd0e1f59637"),
    "triton==3.1.0": Wheel("triton==3.1.0", "triton-3.1.0-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl", 209506424, "0f34f6e7885d1bf0eaaf7ba875a5f0ce6f3c13ba98f9503651c1e6dc6757ed5c"),
    "triton==3.4.0": Wheel("triton==3.4.0", "triton-3.4.0-cp311-cp311-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl", 155531138, "7b70f5e6a41e52e48cfc087436c8a28c17ff98db369447bcaff3b887a3ab4467"),
    "triton==3.6.0": Wheel("triton==3.6.0", "triton-3.6.0-cp311-cp311-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl", 188214640, "e8e323d608e3a9bfcc2d9efcc90ceefb764a82b99dea12a86d643c72539ad5d3"),
    "triton==3.9.0": Wheel("triton==3.9.0", "triton-3.9.0-cp311-cp311-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl", 285777556, "1622118a038b0c6e16fa4a0305da62c8b3c15904ee1cc4d4e65846a25969e41e"),
    "typing_extensions==4.16.0": Wheel("typing_extensions==4.16.0", "typing_extensions-4.16.0-py3-none-any.whl", 45571, "481caa481374e813c1b176ada14e97f1f67a4539ce9cfeb3f350d78d6370c2e8"),
    "xformers==0.0.28.post3": Wheel("xformers==0.0.28.post3", "xformers-0.0.28.post3-cp311-cp311-manylinux_2_28_x86_64.whl", 16715691, "825563e129f6b22885c2a91e464ff617382f4d78876cc92d96ff618e875aaee3"),
    "xformers==0.0.32.post2": Wheel("xformers==0.0.32.post2", "xformers-0.0.32.post2-cp39-abi3-manylinux_2_28_x86_64.whl", 117196673, "3d1fefe0006eb00a730b3b197ff41aab085f1209b50419baab6152445f09e508"),
    "xformers==0.0.35": Wheel("xformers==0.0.35", "xformers-0.0.35-py39-none-manylinux_2_28_x86_64.whl", 3264751, "ccc73c7db9890224ab05f5fb60e2034f9e6c8672a10be0cf00e95cbbae3eda7c"),
}

# The stack environments (tests/realworld/stacks.py): each what pip installs
# for its requirements, as a user's venv would hold it.
STACKS = {
    "torch-2.5.1": (
        "Jinja2==3.1.6",
        "MarkupSafe==3.0.4",
        "bitsandbytes==0.45.0",
        "filelock==4.3.2",
        "fsspec==2026.9.0",
        "mpmath==1.3.0",
        "networkx==3.6.1",
        "numpy==2.4.6",
        "nvidia-cublas-cu12==12.4.5.8",
        "nvidia-cuda-cupti-cu12==12.4.127",
        "nvidia-cuda-nvrtc-cu12==12.4.127",
        "nvidia-cuda-runtime-cu12==12.4.127",
        "nvidia-cudnn-cu12==9.1.0.70",
        "nvidia-cufft-cu12==11.2.1.3",
        "nvidia-curand-cu12==10.3.5.147",
        "nvidia-cusolver-cu12==11.6.1.9",
        "nvidia-cusparse-cu12==12.3.1.170",
        "nvidia-nccl-cu12==2.21.5",
        "nvidia-nvjitlink-cu12==12.4.127",
        "nvidia-nvtx-cu12==12.4.127",
        "pillow==13.0.0",
        "sympy==1.13.1",
        "torch==2.5.1",
        "torchaudio==2.5.1",
        "torchvision==0.20.1",
        "triton==3.1.0",
        "typing_extensions==4.16.0",
        "xformers==0.0.28.post3",
    ),
    "torch-2.8.0": (
        "Jinja2==3.1.6",
        "MarkupSafe==3.0.4",
        "bitsandbytes==0.50.2",
        "filelock==4.3.2",
        "fsspec==2026.9.0",
        "mpmath==1.3.0",
        "networkx==3.6.1",
        "numpy==2.4.6",
        "nvidia-cublas-cu12==12.8.4.1",
        "nvidia-cuda-cupti-cu12==12.8.90",
        "nvidia-cuda-nvrtc-cu12==12.8.93",
        "nvidia-cuda-runtime-cu12==12.8.90",
        "nvidia-cudnn-cu12==9.10.2.21",
        "nvidia-cufft-cu12==11.3.3.83",
        "nvidia-cufile-cu12==1.13.1.3",
        "nvidia-curand-cu12==10.3.9.90",
        "nvidia-cusolver-cu12==11.7.3.90",
        "nvidia-cusparse-cu12==12.5.8.93",
        "nvidia-cusparselt-cu12==0.7.1",
        "nvidia-nccl-cu12==2.27.3",
        "nvidia-nvjitlink-cu12==12.8.93",
        "nvidia-nvtx-cu12==12.8.90",
        "packaging==26.4",
        "pillow==13.0.0",
        "setuptools==84.2.1",
        "sympy==1.14.0",
        "torch==2.8.0",
        "torchaudio==2.8.0",
        "torchvision==0.23.0",
        "triton==3.4.0",
        "typing_extensions==4.16.0",
        "xformers==0.0.32.post2",
    ),
    "torch-2.11.0": (
        "Jinja2==3.1.6",
        "MarkupSafe==3.0.4",
        "cuda-bindings==13.5.0",
        "cuda-pathfinder==1.9.1",
        "cuda-toolkit==13.0.2",
        "filelock==4.3.2",
        "flatbuffers==25.12.19",
        "fsspec==2026.9.0",
        "mpmath==1.3.0",
        "networkx==3.6.1",
        "numpy==2.4.6",
        "nvidia-cublas==13.1.0.3",
        "nvidia-cuda-cupti==13.0.85",
        "nvidia-cuda-nvrtc==13.0.88",
        "nvidia-cuda-runtime==13.0.96",
        "nvidia-cudnn-cu13==9.19.0.56",
        "nvidia-cufft==12.0.0.61",
        "nvidia-cufile==1.15.1.6",
        "nvidia-curand==10.4.0.35",
        "nvidia-cusolver==12.0.4.66",
        "nvidia-cusparse==12.6.3.3",
        "nvidia-cusparselt-cu13==0.8.0",
        "nvidia-nccl-cu13==2.28.9",
        "nvidia-nvjitlink==13.0.88",
        "nvidia-nvshmem-cu13==3.4.5",
        "nvidia-nvtx==13.0.85",
        "onnxruntime-gpu==1.31.1",
        "packaging==26.4",
        "pillow==13.0.0",
        "protobuf==7.36.2",
        "setuptools==81.0.0",
        "sympy==1.14.0",
        "torch==2.11.0",
        "torchaudio==2.11.0",
        "torchvision==0.26.0",
        "triton==3.6.0",
        "typing_extensions==4.16.0",
    ),
    "torch-2.15.0": (
        "Jinja2==3.1.6",
        "MarkupSafe==3.0.4",
        "cuda-bindings==13.5.0",
        "cuda-pathfinder==1.9.1",
        "cuda-toolkit==13.2.2",
        "filelock==4.3.2",
        "fsspec==2026.9.0",
        "mpmath==1.3.0",
        "networkx==3.6.1",
        "numpy==2.4.6",
        "nvidia-cublas==13.4.1.3",
        "nvidia-cuda-cccl==13.3.5.0.6",
        "nvidia-cuda-cupti==13.2.86",
        "nvidia-cuda-nvrtc==13.2.86",
        "nvidia-cuda-runtime==13.2.86",
        "nvidia-cudnn-cu13==9.26.0.51",
        "nvidia-cufft==12.2.0.57",
        "nvidia-cufile==1.17.1.22",
        "nvidia-cusolver==12.2.0.11",
        "nvidia-cusparse==12.7.10.12",
        "nvidia-cusparselt-cu13==0.8.1",
        "nvidia-nccl-cu13==2.30.7",
        "nvidia-nvjitlink==13.5.37",
        "nvidia-nvshmem-cu13==3.7.2",
        "nvidia-nvtx==13.2.86",
        "pillow==13.0.0",
        "setuptools==84.2.1",
        "sympy==1.14.0",
        "torch==2.15.0",
        "torchaudio==2.11.1",
        "torchvision==0.29.2",
        "triton==3.9.0",
        "typing_extensions==4.16.0",
        "xformers==0.0.35",
    ),
    "cupy": (
        "cuda-pathfinder==1.9.1",
        "cupy-cuda12x==14.2.0",
        "numpy==2.4.6",
    ),
}


# PyPI's win_amd64 wheels (issue 33): what a Windows ComfyUI portable's
# python_embeded (Python 3.12) installs. PyPI's torch for Windows is the
# CPU-only build (torch/version.py: 2.8.0+cpu, cuda = None).
WINDOWS_WHEELS = {
    "win-torch-2.8.0-cpu": Wheel(
        "torch==2.8.0",
        "torch-2.8.0-cp312-cp312-win_amd64.whl",
        241326087,
        "2f4ac52f0130275d7517b03a33d2493bab3693c83dcfadf4f81688ea82147d2e",
        "win_amd64", "3.12",
    ),
    "win-xformers": Wheel(
        "xformers==0.0.35",
        "xformers-0.0.35-py39-none-win_amd64.whl",
        2638618,
        "57381ce3cbb79b593e6b62cb20a937885345fad2796de2aa6fbb66c033601179",
        "win_amd64", "3.12",
    ),
    "win-onnxruntime-gpu": Wheel(
        "onnxruntime-gpu==1.31.1",
        "onnxruntime_gpu-1.31.1-cp312-cp312-win_amd64.whl",
        168098228,
        "2bb1e9373baba88f6415257f5b6a589d23e23c16004f7d89adf4344eada5749e",
        "win_amd64", "3.12",
    ),
    "win-bitsandbytes": Wheel(
        "bitsandbytes==0.50.2",
        "bitsandbytes-0.50.2-py3-none-win_amd64.whl",
        39096375,
        "c697963c8fda3dcd0d7ebd9b5211ae4067feef7cd06e0350d4e816a434fe683d",
        "win_amd64", "3.12",
    ),
    # The CPU-only twin of onnxruntime-gpu: installed over it, it replaces
    # onnxruntime/capi/onnxruntime_pybind11_state.pyd (packages.yaml cpu_twins).
    "win-onnxruntime-cpu": Wheel(
        "onnxruntime==1.31.1",
        "onnxruntime-1.31.1-cp312-cp312-win_amd64.whl",
        14888466,
        "ae8a9a351efda685cc59a66226cdefaa37a126c1d66872ca23a2de9425326130",
        "win_amd64", "3.12",
    ),
    # Triton's Windows distribution: the triton package under another name,
    # with no device code of its own (it compiles kernels at run time).
    "win-triton-windows": Wheel(
        "triton-windows==3.8.0.post29",
        "triton_windows-3.8.0.post29-cp312-cp312-win_amd64.whl",
        52810080,
        "937ba2ee53b6e664709898537de3eb9eab427a498c04da58f2bd42e1af93e298",
        "win_amd64", "3.12",
    ),
    "win-nvrtc": Wheel(
        "nvidia-cuda-nvrtc-cu12==12.8.93",
        "nvidia_cuda_nvrtc_cu12-12.8.93-py3-none-win_amd64.whl",
        73586838,
        "7a4b6b2904850fe78e0bd179c4b655c404d4bb799ef03ddc60804247099ae909",
        "win_amd64", "3.12",
    ),
    # The CUDA 12 runtime's headers (nvidia/cuda_runtime/include) that a
    # kernel including cuda_fp16.h needs beside the NVRTC wheel above.
    "win-cuda-runtime": Wheel(
        "nvidia-cuda-runtime-cu12==12.8.90",
        "nvidia_cuda_runtime_cu12-12.8.90-py3-none-win_amd64.whl",
        944318,
        "c0c6027f01505bfed6c3b21ec546f69c687689aad5f1a377554bc6ca4aa993a8",
        "win_amd64", "3.12",
    ),
    # CUDA 13's NVRTC for Windows: nvidia/cu13/bin/x86_64/nvrtc64_130_0.dll.
    "win-nvrtc-13": Wheel(
        "nvidia-cuda-nvrtc==13.0.88",
        "nvidia_cuda_nvrtc-13.0.88-py3-none-win_amd64.whl",
        76807835,
        "6bcd4e7f8e205cbe644f5a98f2f799bef9556fefc89dd786e79a16312ce49872",
        "win_amd64", "3.12",
    ),
    # CUDA 13's compiler driver for Windows, for its fatbinary.exe
    # (nvidia/cu13/bin): what `jit bundle` packs its images with.
    "win-nvcc-13": Wheel(
        "nvidia-cuda-nvcc==13.0.88",
        "nvidia_cuda_nvcc-13.0.88-py3-none-win_amd64.whl",
        29792773,
        "7c3a32c8ca9866addfd784da363ddee2f6874d560027a296f583e86a61f2d543",
        "win_amd64", "3.12",
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
    for platform in (wheel.platform,) if wheel.platform else PLATFORMS:
        command += ["--platform", platform]
    command += ["--python-version", wheel.python_version or PYTHON_VERSION,
                "--dest", str(dest), wheel.requirement]
    subprocess.run(command, check=True)
    path = dest / wheel.file
    if not path.is_file():
        raise SystemExit(f"pip download {wheel.requirement} did not produce {path}")
    actual = sha256_of(path)
    if actual != wheel.sha256:
        path.unlink()
        raise SystemExit(f"{wheel.file}: sha256 {actual}, expected {wheel.sha256}; removed")


def fetch(log=print, wheels: dict[str, Wheel] = WHEELS) -> dict[str, Path]:
    """Every pinned wheel's path in the cache, downloading those missing."""
    dest = cache_dir() / "wheels"
    dest.mkdir(parents=True, exist_ok=True)
    paths = {}
    for key, wheel in wheels.items():
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
    fetch(wheels=STACK_WHEELS)
    fetch(wheels=WINDOWS_WHEELS)
