"""PyPI, read without downloading whole wheels: a project's files and
versions from the simple API (PEP 691 JSON), and single members of a remote
wheel through HTTP range requests (a wheel is a zip: its central directory
sits at the end), so that a fact of a 900 MB wheel costs a few hundred KB."""

from __future__ import annotations

import io
import json
import urllib.request
import zipfile

SIMPLE = "https://pypi.org/simple/{}/"


def project_files(project: str) -> list[dict]:
    request = urllib.request.Request(SIMPLE.format(project),
                                     headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.load(response)["files"]


def versions(project: str) -> list[str]:
    request = urllib.request.Request(SIMPLE.format(project),
                                     headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.load(response)["versions"]


def linux_wheel(project: str, version: str) -> dict | None:
    """The CPython 3.11 (or any-Python) manylinux x86_64 wheel of a version;
    the one with the highest build tag when there are several."""
    prefix = project.replace("-", "_") + "-" + version + "-"
    found = [f for f in project_files(project)
             if f["filename"].startswith(prefix) and f["filename"].endswith(".whl")
             and "x86_64" in f["filename"] and "linux" in f["filename"]
             and ("cp311" in f["filename"] or "py3" in f["filename"] or "abi3" in f["filename"])]
    return sorted(found, key=lambda f: f["filename"])[-1] if found else None


class _RangeFile(io.RawIOBase):
    """A read-only file over HTTP range requests."""

    def __init__(self, url: str):
        self.url, self.pos = url, 0
        with urllib.request.urlopen(urllib.request.Request(url, method="HEAD"), timeout=60) as r:
            self.size = int(r.headers["Content-Length"])

    def seekable(self):
        return True

    def readable(self):
        return True

    def tell(self):
        return self.pos

    def seek(self, offset, whence=0):
        self.pos = {0: offset, 1: self.pos + offset, 2: self.size + offset}[whence]
        return self.pos

    def readinto(self, buffer):
        if self.pos >= self.size or not len(buffer):
            return 0
        end = min(self.size, self.pos + len(buffer)) - 1
        request = urllib.request.Request(self.url, headers={"Range": f"bytes={self.pos}-{end}"})
        with urllib.request.urlopen(request, timeout=120) as response:
            data = response.read()
        buffer[:len(data)] = data
        self.pos += len(data)
        return len(data)


def read_member(url: str, suffix: str) -> str:
    """The text of the first member of the remote wheel whose name ends with
    `suffix` ("torch/version.py", ".dist-info/METADATA")."""
    with zipfile.ZipFile(io.BufferedReader(_RangeFile(url), buffer_size=1 << 16)) as wheel:
        name = next(n for n in wheel.namelist() if n.endswith(suffix))
        return wheel.read(name).decode()


def requires_dist(metadata: str) -> list[str]:
    lines = []
    for line in metadata.splitlines():
        if not line.strip():
            break
        if line.startswith("Requires-Dist:"):
            lines.append(line.split(":", 1)[1].strip())
    return lines
