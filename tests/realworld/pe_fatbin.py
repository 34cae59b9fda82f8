"""An independent reader of the device code in a Windows DLL or .pyd, for
cross-checking archfit's scan of PyPI's win_amd64 wheels (issue 33).

Written from Microsoft's PE format specification (headers, section table)
and the fatbin container and entry layout measured in the project's notes
(docs/design.md, "Windows binaries"): it walks the containers in `.nv_fatb`
and `__nv_rel*` header to header, and searches every other initialised,
non-executable section for the container magic. Nothing here shares code
with archfit's C++ reader.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

CONTAINER_MAGIC = 0xBA55ED50
KINDS = {1: "ptx", 2: "sass", 8: "lto"}
ARCH_PREFIX = {"ptx": "compute_", "sass": "sm_", "lto": "lto_"}
FLAG_ARCH_SPECIFIC = 0x100000  # "a"
FLAG_FAMILY = 0x200000  # "f"
SECTION_CODE = 0x20
SECTION_INITIALIZED_DATA = 0x40
SECTION_EXECUTE = 0x20000000


@dataclass(frozen=True)
class Image:
    kind: str  # "sass", "ptx", "lto"
    arch: str  # "sm_90a", "compute_120"
    section: str
    relocatable: bool


@dataclass
class PeImages:
    machine: int
    sections: list[str]
    images: list[Image]


def _sections(data: bytes) -> tuple[int, list[tuple[str, int, int, int]]]:
    """The machine and (name, file offset, size in file, characteristics) of
    each section; long "/N" names are left as written."""
    if data[:2] != b"MZ":
        raise ValueError("no MZ header")
    (pe,) = struct.unpack_from("<I", data, 0x3C)
    if data[pe:pe + 4] != b"PE\0\0":
        raise ValueError("no PE signature")
    machine, count, _, _, _, optional_size, _ = struct.unpack_from("<HHIIIHH", data, pe + 4)
    table = pe + 24 + optional_size
    sections = []
    for i in range(count):
        name, vsize, _, raw_size, raw_offset = struct.unpack_from("<8sIIII", data, table + 40 * i)
        (flags,) = struct.unpack_from("<I", data, table + 40 * i + 36)
        size = min(raw_size, vsize) if vsize else raw_size
        sections.append((name.rstrip(b"\0").decode("ascii", "replace"), raw_offset, size, flags))
    return machine, sections


def _entries(data: bytes, container: int, section: str, relocatable: bool) -> tuple[list[Image], int]:
    """The images of the container at `container`, and where it ends."""
    magic, version, header_size, body = struct.unpack_from("<IHHQ", data, container)
    assert magic == CONTAINER_MAGIC and version == 1, hex(container)
    at, end = container + header_size, container + header_size + body
    images = []
    while at < end:
        kind, _, entry_header, payload = struct.unpack_from("<HHIQ", data, at)
        (sm,) = struct.unpack_from("<I", data, at + 0x1C)
        (flags,) = struct.unpack_from("<Q", data, at + 0x28)
        name = KINDS.get(kind, f"kind{kind}")
        suffix = "a" if flags & FLAG_ARCH_SPECIFIC else "f" if flags & FLAG_FAMILY else ""
        images.append(Image(name, f"{ARCH_PREFIX.get(name, name + '_')}{sm}{suffix}", section,
                            relocatable))
        at += entry_header + payload
    return images, end


def read(data: bytes) -> PeImages:
    machine, sections = _sections(data)
    images: list[Image] = []
    for name, offset, size, flags in sections:
        packed = name == ".nv_fatb" or name.startswith("__nv_rel")
        data_section = (flags & SECTION_INITIALIZED_DATA and
                        not flags & (SECTION_CODE | SECTION_EXECUTE))
        if not size or not (packed or data_section):
            continue
        end = offset + size
        at = offset
        magic = struct.pack("<I", CONTAINER_MAGIC)
        while at + 16 <= end:
            if packed:
                if data[at:at + 4] != magic:
                    at += 8  # zero padding between containers
                    continue
            else:
                at = data.find(magic, at, end)
                if at < 0:
                    break
                version, header_size = struct.unpack_from("<HH", data, at + 4)
                if version != 1 or header_size != 16:
                    at += 4
                    continue
            found, at = _entries(data, at, name, name.startswith("__nv_rel"))
            images += found
    return PeImages(machine, [s[0] for s in sections], images)


def imported_dlls(data: bytes) -> tuple[list[str], list[str]]:
    """The DLL names of the import table (data directory 1) and of the
    delay-load import table (13), each in table order."""
    (pe,) = struct.unpack_from("<I", data, 0x3C)
    _, count, _, _, _, optional_size, _ = struct.unpack_from("<HHIIIHH", data, pe + 4)
    optional = pe + 24
    (magic,) = struct.unpack_from("<H", data, optional)
    pe32_plus = magic == 0x20B
    image_base = struct.unpack_from("<Q" if pe32_plus else "<I", data,
                                    optional + (24 if pe32_plus else 28))[0]
    directories = optional + (112 if pe32_plus else 96)
    table = optional + optional_size
    spans = []  # (virtual address, virtual size, file offset, size in file)
    for i in range(count):
        vsize, vaddr, raw_size, raw_offset = struct.unpack_from("<IIII", data, table + 40 * i + 8)
        spans.append((vaddr, max(vsize, raw_size), raw_offset, raw_size))

    def offset_of(rva: int) -> int:
        for vaddr, vsize, raw_offset, raw_size in spans:
            if vaddr <= rva < vaddr + vsize and rva - vaddr < raw_size:
                return raw_offset + rva - vaddr
        raise ValueError(f"RVA {rva:#x} is in no section's bytes")

    def name_at(rva: int) -> str:
        at = offset_of(rva)
        return data[at:data.index(b"\0", at)].decode("ascii")

    def directory(index: int) -> tuple[int, int]:
        return struct.unpack_from("<II", data, directories + 8 * index)

    imports = []
    rva, size = directory(1)
    if rva and size:
        at = offset_of(rva)
        while True:
            fields = struct.unpack_from("<IIIII", data, at)
            if not any(fields):
                break
            imports.append(name_at(fields[3]))
            at += 20
    delayed = []
    rva, size = directory(13)
    if rva and size:
        at = offset_of(rva)
        while True:
            attributes, name = struct.unpack_from("<II", data, at)
            if not name:
                break
            # Attribute bit 0 clear: an old table that holds addresses, not RVAs.
            delayed.append(name_at(name if attributes & 1 else name - image_base))
            at += 32
    return imports, delayed
