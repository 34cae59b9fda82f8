"""Finding and loading libarchfit, and declaring the C functions the binding calls.

Where it looks, in order:
  1. beside this package, archfit/lib/libarchfit.so.<major> (archfit.dll on
     Windows): where the wheel and the ComfyUI pack put it, built from the
     same sources as this binding (the pack carries both, and each platform
     loads its own);
  2. ARCHFIT_LIBRARY, a path to the library (a source build, a test);
  3. the system: ctypes.util.find_library("archfit"), then the loader's own
     search for the library's name (LD_LIBRARY_PATH, ld.so.cache; on Windows
     the DLL search path).
A library that cannot be loaded, or whose archfit_version() has another ABI
major, raises LibraryError naming every place tried and what to do, never a
bare OSError.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import threading
from ctypes import POINTER, c_char_p, c_int, c_size_t, c_uint32
from pathlib import Path

from . import _capi
from ._errors import LibraryError

# The ABI major this binding was written for (archfit.h ARCHFIT_VERSION_MAJOR).
ABI_MAJOR = 0
SONAME = f"libarchfit.so.{ABI_MAJOR}"
# `make windows` builds archfit.dll; its ABI major is checked after loading.
WINDOWS_NAME = "archfit.dll"
ENVIRONMENT_VARIABLE = "ARCHFIT_LIBRARY"


def library_name(os_name: str | None = None) -> str:
    """The library's file name on the platform `os_name` (os.name: "nt" on
    Windows, where ComfyUI portable's embedded Python runs; "posix" elsewhere)."""
    return WINDOWS_NAME if (os_name or os.name) == "nt" else SONAME


def _hint(os_name: str | None = None) -> str:
    built = "build-windows\\archfit.dll" if (os_name or os.name) == "nt" else f"build/sdk/{SONAME}"
    return (
        "Install the archfit wheel (`make wheel` in archfit's source, or the one from its "
        "release) or the archfit ComfyUI pack, or set ARCHFIT_LIBRARY to the path of a "
        f"{library_name(os_name)} built from source ({built})."
    )

# (argtypes, restype) of every function the binding calls. archfit_status is
# an enum: c_int.
_PROTOTYPES = {
    "archfit_status_string": ([c_int], c_char_p),
    "archfit_last_error": ([], c_char_p),
    "archfit_version": ([], c_uint32),
    "archfit_version_string": ([], c_char_p),
    "archfit_context_create": (
        [POINTER(_capi.ContextOptions), POINTER(_capi.ContextP)],
        c_int,
    ),
    "archfit_context_destroy": ([_capi.ContextP], None),
    "archfit_check_run": (
        [_capi.ContextP, POINTER(_capi.CheckOptions), POINTER(_capi.ReportP)],
        c_int,
    ),
    "archfit_report_destroy": ([_capi.ReportP], None),
    "archfit_report_verdict": ([_capi.ReportP], c_int),
    "archfit_report_json": ([_capi.ReportP, POINTER(c_char_p)], c_int),
    "archfit_report_text": ([_capi.ReportP, c_uint32, POINTER(c_char_p)], c_int),
    "archfit_verdict_count": ([], c_size_t),
    "archfit_verdict_name": ([c_size_t], c_char_p),
    "archfit_verdict_blocks": ([c_char_p], c_int),
    "archfit_verdict_warns": ([c_char_p], c_int),
    "archfit_diagnose_run": (
        [_capi.ContextP, POINTER(_capi.DiagnoseOptions), POINTER(_capi.DiagnosisP)],
        c_int,
    ),
    "archfit_diagnosis_destroy": ([_capi.DiagnosisP], None),
    "archfit_diagnosis_get_info": (
        [_capi.DiagnosisP, POINTER(_capi.DiagnosisInfo)],
        c_int,
    ),
    "archfit_diagnosis_fix": ([_capi.DiagnosisP, c_size_t], c_char_p),
    "archfit_diagnosis_evidence": ([_capi.DiagnosisP, c_size_t], c_char_p),
    "archfit_diagnosis_json": ([_capi.DiagnosisP, POINTER(c_char_p)], c_int),
    "archfit_diagnosis_text": ([_capi.DiagnosisP, c_uint32, POINTER(c_char_p)], c_int),
}


class Library:
    """The loaded libarchfit: ``cdll`` with every prototype declared, and ``path``."""

    def __init__(self, cdll: ctypes.CDLL, path: str) -> None:
        self.cdll = cdll
        self.path = path


_lock = threading.Lock()
_loaded: Library | None = None


def _version_text(number: int) -> str:
    return f"{number // 10000}.{number // 100 % 100}.{number % 100}"


def _open(name: str) -> tuple[Library | None, str]:
    """(the library, "") or (None, why it cannot be used)."""
    try:
        cdll = ctypes.CDLL(name)
    except OSError as error:
        return None, f"cannot be loaded: {error}"
    # The version first: a library of another major may lack (or have
    # changed) the other functions, and that is the clearer message.
    try:
        archfit_version = cdll.archfit_version
    except AttributeError:
        return None, "is not libarchfit: it has no archfit_version()"
    archfit_version.argtypes, archfit_version.restype = _PROTOTYPES["archfit_version"]
    number = int(archfit_version())
    if number // 10000 != ABI_MAJOR:
        return None, (
            f"is libarchfit {_version_text(number)}, ABI major {number // 10000}; this binding "
            f"speaks ABI major {ABI_MAJOR}: install the archfit wheel matching this binding, "
            "or point ARCHFIT_LIBRARY at a matching library"
        )
    for function, (argtypes, restype) in _PROTOTYPES.items():
        try:
            symbol = getattr(cdll, function)
        except AttributeError:
            return None, f"is libarchfit {_version_text(number)} but has no {function}()"
        symbol.argtypes = argtypes
        symbol.restype = restype
    return Library(cdll, _loaded_path(cdll, name)), ""


def _loaded_path(cdll: ctypes.CDLL, name: str) -> str:
    """The file the loader opened for `name`: a bare SONAME found on the
    loader path is resolved through /proc/self/maps (Linux) so that
    library_path() names a file."""
    if os.sep in name:
        return os.path.abspath(name)
    try:
        address = ctypes.cast(cdll.archfit_version, ctypes.c_void_p).value or 0
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            for line in maps:
                fields = line.split(maxsplit=5)
                low, high = (int(part, 16) for part in fields[0].split("-"))
                if low <= address < high and len(fields) == 6:
                    return fields[5].strip()
    except (OSError, ValueError):
        pass
    return name


def _candidates(os_name: str | None = None) -> list[tuple[str, str | None, bool]]:
    """(where, what to open, explicit) in search order; what is None when
    that place has nothing to offer. An explicit place that fails stops the
    search: a user who named a library wants that one, not another."""
    name = library_name(os_name)
    beside = Path(__file__).resolve().parent / "lib" / name
    places: list[tuple[str, str | None, bool]] = [
        (f"beside the package: {beside}", str(beside) if beside.exists() else None, False)
    ]
    variable = os.environ.get(ENVIRONMENT_VARIABLE, "")
    if variable:
        places.append((f"{ENVIRONMENT_VARIABLE}={variable}", variable, True))
    else:
        places.append((f"{ENVIRONMENT_VARIABLE}: not set", None, False))
    found = ctypes.util.find_library("archfit")
    if found and found != name:
        places.append((f"the system: {found} (ctypes.util.find_library)", found, False))
    places.append((f"the system: {name} on the loader's search path", name, False))
    return places


def load() -> Library:
    """The loaded library; finds and loads it the first time (thread-safe)."""
    global _loaded
    with _lock:
        if _loaded is not None:
            return _loaded
        tried: list[str] = []
        for where, name, explicit in _candidates():
            if name is None:
                tried.append(f"{where}: not there")
                continue
            library, why = _open(name)
            if library is not None:
                _loaded = library
                return library
            tried.append(f"{where}: {why}")
            if explicit:
                break
        raise LibraryError(
            "libarchfit could not be loaded. Looked in:\n"
            + "\n".join(f"  - {line}" for line in tried)
            + "\n"
            + _hint()
        )
