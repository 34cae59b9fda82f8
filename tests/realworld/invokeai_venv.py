#!/usr/bin/env python3
"""A venv with the real InvokeAI from PyPI, made once in the real-world cache.

The venv is $ARCHFIT_REALWORLD_CACHE/invokeai-venv (default
~/.cache/archfit-realworld/invokeai-venv), made from the Python that runs
this (a venv of it is based on the same interpreter). InvokeAI is pinned;
PyPI's torch is the CUDA build and pulls the nvidia-* wheels (several GB),
so PyTorch's CPU index is used instead when it can be reached. A venv counts
as made only once its record (invokeai-venv.json: what was installed, from
where, how long it took, how big it is) exists; a half-made one is removed
and made again. The pip output goes to invokeai-venv.log beside it.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import fetch_wheels

# The newest InvokeAI on PyPI when this was written; it needs Python >=3.11,<3.13.
REQUIREMENT = os.environ.get("ARCHFIT_INVOKEAI_REQUIREMENT", "invokeai==6.14.2")
CPU_INDEX = "https://download.pytorch.org/whl/cpu"
PYTHONS = ((3, 11), (3, 12))  # invokeai 6.14.2: Requires-Python >=3.11,<3.13


class Unsupported(Exception):
    """This Python cannot have the pinned InvokeAI."""


def venv_dir() -> Path:
    return fetch_wheels.cache_dir() / "invokeai-venv"


def record_path() -> Path:
    return venv_dir().with_suffix(".json")


def python_of(venv: Path) -> Path:
    return venv / "bin" / "python"


def reachable(host: str, port: int = 443, seconds: float = 5.0) -> bool:
    try:
        with socket.create_connection((host, port), timeout=seconds):
            return True
    except OSError:
        return False


def size_of(root: Path) -> int:
    total = 0
    for dirpath, _, filenames in os.walk(root):
        for name in filenames:
            path = os.path.join(dirpath, name)
            if not os.path.islink(path):
                total += os.path.getsize(path)
    return total


def load_record() -> dict | None:
    venv, record = venv_dir(), record_path()
    if not record.is_file() or not os.access(python_of(venv), os.X_OK):
        return None
    data = json.loads(record.read_text())
    return data if data.get("requirement") == REQUIREMENT else None


def ensure(log=print) -> dict:
    """The record of the cached InvokeAI venv, making the venv first if needed."""
    data = load_record()
    if data is not None:
        log(f"cached      {venv_dir()} (invokeai {data['invokeai']}, torch {data['torch']}, "
            f"{data['bytes'] / 1e9:.1f} GB, installed in {data['seconds']:.0f} s)")
        return data
    if sys.version_info[:2] not in PYTHONS:
        raise Unsupported(f"{REQUIREMENT} needs Python 3.11 or 3.12, not {sys.version.split()[0]}")
    venv, record = venv_dir(), record_path()
    record.unlink(missing_ok=True)
    shutil.rmtree(venv, ignore_errors=True)
    venv.parent.mkdir(parents=True, exist_ok=True)
    python = python_of(venv)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    command = [str(python), "-m", "pip", "install", "--disable-pip-version-check",
               "--no-input", "--progress-bar", "off"]
    index = "pypi"
    if reachable("download.pytorch.org"):
        command += ["--extra-index-url", CPU_INDEX]
        index = f"pypi + {CPU_INDEX}"
    command.append(REQUIREMENT)
    log_file = venv.with_suffix(".log")
    log(f"installing  {REQUIREMENT} ({index}) into {venv}; pip's output: {log_file}")
    start = time.monotonic()
    with log_file.open("w") as out:
        proc = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT)
    seconds = time.monotonic() - start
    if proc.returncode != 0:
        tail = "".join(log_file.read_text().splitlines(keepends=True)[-40:])
        raise SystemExit(f"pip install {REQUIREMENT} failed (exit {proc.returncode}) "
                         f"after {seconds:.0f} s; the end of {log_file}:\n{tail}")
    versions = subprocess.run(
        [str(python), "-c", "import importlib.metadata as m, json; print(json.dumps("
         "{d: m.version(d) for d in ('invokeai', 'torch', 'pydantic')}))"],
        check=True, capture_output=True, text=True)
    found = json.loads(versions.stdout)
    data = {"requirement": REQUIREMENT, "index": index, "seconds": round(seconds, 1),
            "bytes": size_of(venv), "invokeai": found["invokeai"], "torch": found["torch"],
            "pydantic": found["pydantic"], "python": sys.version.split()[0]}
    record.write_text(json.dumps(data, indent=2) + "\n")
    log(f"installed   invokeai {data['invokeai']}, torch {data['torch']}: "
        f"{data['bytes'] / 1e9:.1f} GB in {seconds:.0f} s")
    return data


if __name__ == "__main__":
    try:
        ensure()
    except Unsupported as why:
        print(f"skipped     the InvokeAI venv: {why}")
