"""archfit for Python: which CUDA code here cannot run on a GPU, and why a
CUDA error happened. A ctypes binding over libarchfit's C ABI
(sdk/include/archfit/archfit.h); standard library only.

    import archfit
    report = archfit.check(gpu="RTX 5090", site_packages=[site])
    print(report.text)            # what `archfit check` prints
    diagnosis = archfit.diagnose(error_text, report=report)
    print(diagnosis.text)         # what `archfit explain` prints

Nothing is loaded at import: the library is found on first use, and a
missing or incompatible one raises LibraryError then, so a host can import
this package safely and decide what to do.

Every result is copied out of the C handles at once and the handles are
destroyed before the call returns: no C object outlives a call, and results
may be kept and passed between threads freely.
"""

from __future__ import annotations

import ctypes
import json
import os
import threading
from typing import Any, Iterable, Mapping, Optional, Sequence, Union

from . import _capi, _library
from ._errors import ArchfitError, LibraryError
from .verdicts import table as verdict_table

__all__ = [
    "ArchfitError",
    "LibraryError",
    "library_path",
    "version",
    "check",
    "Report",
    "diagnose",
    "Diagnosis",
    "verdict_table",
]

PathArg = Union[str, "os.PathLike[str]", bytes]

_context_lock = threading.Lock()
_context: Optional[ctypes.POINTER(_capi.Context)] = None  # type: ignore[valid-type]


def _text(value: Optional[bytes]) -> str:
    # Strings from C are UTF-8 where archfit wrote them, but paths and
    # messages may carry a log's raw bytes.
    return value.decode("utf-8", errors="replace") if value is not None else ""


def _optional_text(value: Optional[bytes]) -> Optional[str]:
    return None if value is None else _text(value)


def _raise_for(status: int, call: str) -> None:
    """Raises ArchfitError for a failing status, with archfit_last_error()
    read at once: it is per thread and overwritten by the next call."""
    if status == 0:
        return
    cdll = _library.load().cdll
    message = _text(cdll.archfit_last_error())
    if not message:
        message = f"{call}: {_text(cdll.archfit_status_string(status))}"
    raise ArchfitError(message, _capi.STATUS_NAMES.get(status, f"ARCHFIT_STATUS_{status}"))


def _get_context():
    """The process's one archfit_context, made on first use. It lives as long
    as the process: another thread may be inside a call when this one exits."""
    global _context
    with _context_lock:
        if _context is None:
            cdll = _library.load().cdll
            options = _capi.ContextOptions.new(threads=0, libcuda=None)
            context = _capi.ContextP()
            _raise_for(
                cdll.archfit_context_create(ctypes.byref(options), ctypes.byref(context)),
                "archfit_context_create",
            )
            _context = context
        return _context


def library_path() -> str:
    """The libarchfit file that was loaded (loading it if need be)."""
    return _library.load().path


def version() -> str:
    """The loaded library's version, "0.1.0"."""
    return _text(_library.load().cdll.archfit_version_string())


# ---- check -------------------------------------------------------------------


class Report:
    """The result of a check: ``verdict`` ("fits", "fails" or "unknown"),
    ``json`` (the archfit.check/1 document, docs/check-json.md),
    ``document`` (the same, parsed), ``text`` (the checklist as `archfit
    check` prints it, without colours: the core's renderer, through
    archfit_report_text) and ``details_text`` (the same with every
    component and library, as `archfit check --details` prints it)."""

    __slots__ = ("verdict", "json", "document", "text", "details_text")

    def __init__(self, verdict: str, json_text: str, text: str = "",
                 details_text: str = "") -> None:
        self.verdict = verdict
        self.json = json_text
        self.document: dict = json.loads(json_text)
        self.text = text
        self.details_text = details_text

    def __repr__(self) -> str:
        names = [c.get("name") for c in self.document.get("components", [])]
        return f"<archfit.Report {self.verdict}: {', '.join(map(str, names)) or 'no components'}>"


def _path_bytes(value: PathArg) -> bytes:
    return os.fsencode(value)


def _path_list(value: Union[PathArg, Iterable[PathArg], None]) -> list:
    # One path given where a sequence is expected would otherwise be read
    # as a sequence of one-letter paths.
    if value is None:
        return []
    if isinstance(value, (str, bytes, os.PathLike)):
        return [_path_bytes(value)]
    return [_path_bytes(item) for item in value]


def _c_array(items: list):
    array = (ctypes.c_char_p * max(len(items), 1))(*items)
    return array, len(items)


def _check_options(
    gpu: Optional[str] = None,
    driver: Optional[str] = None,
    site_packages: Union[PathArg, Sequence[PathArg]] = (),
    custom_nodes: Optional[PathArg] = None,
    paths: Union[PathArg, Sequence[PathArg]] = (),
    wheels: Union[PathArg, Sequence[PathArg]] = (),
    kb_dir: Optional[PathArg] = None,
    confirm: bool = False,
    scan_index: bool = False,
):
    """archfit_check_options for these arguments, and the objects whose
    memory it points into (kept alive by the caller until the call returns)."""
    keep: list = []

    def array(value):
        items = _path_list(value)
        made, count = _c_array(items)
        keep.extend([items, made])
        return made, count

    sites, sites_count = array(site_packages)
    path_array, paths_count = array(paths)
    wheel_array, wheels_count = array(wheels)
    options = _capi.CheckOptions.new(
        gpu=gpu.encode("utf-8") if gpu is not None else None,
        driver=driver.encode("utf-8") if driver is not None else None,
        site_packages=ctypes.cast(sites, ctypes.POINTER(ctypes.c_char_p)),
        site_packages_count=sites_count,
        custom_nodes=_path_bytes(custom_nodes) if custom_nodes is not None else None,
        paths=ctypes.cast(path_array, ctypes.POINTER(ctypes.c_char_p)),
        paths_count=paths_count,
        kb_dir=_path_bytes(kb_dir) if kb_dir is not None else None,
        wheels=ctypes.cast(wheel_array, ctypes.POINTER(ctypes.c_char_p)),
        wheels_count=wheels_count,
        confirm=1 if confirm else 0,
        scan_index=1 if scan_index else 0,
    )
    return options, keep


def _report_text(cdll, report, flags: int) -> str:
    text = ctypes.c_char_p()
    _raise_for(cdll.archfit_report_text(report, flags, ctypes.byref(text)), "archfit_report_text")
    return _text(text.value)


def check(
    gpu: Optional[str] = None,
    driver: Optional[str] = None,
    site_packages: Union[PathArg, Sequence[PathArg]] = (),
    custom_nodes: Optional[PathArg] = None,
    paths: Union[PathArg, Sequence[PathArg]] = (),
    wheels: Union[PathArg, Sequence[PathArg]] = (),
    kb_dir: Optional[PathArg] = None,
    confirm: bool = False,
    scan_index: bool = False,
) -> Report:
    """Checks every CUDA binary under the given places against a GPU: the
    real ones (gpu=None) or a named one ("RTX 5090", "sm_120", "12.0").
    scan_index=True keeps what was read in the user cache and reuses it, so
    a check of an unchanged environment reads no library again (a host that
    checks before every run wants it).
    A failing environment is a Report whose verdict is "fails"; ArchfitError
    is raised only when the check cannot run (an unknown GPU name, nothing
    to check, an unreadable knowledge base)."""
    cdll = _library.load().cdll
    context = _get_context()
    options, keep = _check_options(
        gpu, driver, site_packages, custom_nodes, paths, wheels, kb_dir, confirm, scan_index
    )
    report = _capi.ReportP()
    _raise_for(
        cdll.archfit_check_run(context, ctypes.byref(options), ctypes.byref(report)),
        "archfit_check_run",
    )
    del keep
    try:
        verdict = _capi.VERDICTS.get(cdll.archfit_report_verdict(report), "unknown")
        json_text = ctypes.c_char_p()
        _raise_for(cdll.archfit_report_json(report, ctypes.byref(json_text)), "archfit_report_json")
        return Report(verdict, _text(json_text.value),
                      text=_report_text(cdll, report, _capi.TEXT_DEFAULT),
                      details_text=_report_text(cdll, report, _capi.TEXT_DETAILS))
    finally:
        cdll.archfit_report_destroy(report)


# ---- diagnose ------------------------------------------------------------------


class Diagnosis:
    """What a CUDA error means: ``category`` ("no-kernel-image", …,
    "not-recognised"), ``recognised``, ``confidence``, ``explanation``,
    ``sm``, ``component`` (None or a dict of name, kind, version, path),
    ``environment`` (None, or "confirms", "refutes", "inconclusive" when an
    environment was weighed), ``evidence`` and ``fix`` (lists of sentences),
    ``json`` (the archfit.diagnosis/1 document, docs/diagnosis-json.md),
    ``document`` (the same, parsed) and ``text`` (the diagnosis as `archfit
    explain` prints it: the core's renderer, through archfit_diagnosis_text)."""

    __slots__ = (
        "category",
        "recognised",
        "confidence",
        "explanation",
        "sm",
        "component",
        "environment",
        "evidence",
        "fix",
        "json",
        "document",
        "text",
    )

    def __init__(self, **fields: Any) -> None:
        for name in self.__slots__:
            setattr(self, name, fields[name])

    def __repr__(self) -> str:
        name = self.component["name"] if self.component else None
        return f"<archfit.Diagnosis {self.category} component={name!r} environment={self.environment!r}>"


def _text_bytes(value: Union[str, bytes, bytearray, memoryview], name: str) -> bytes:
    if isinstance(value, str):
        # surrogateescape: text read from a log with errors="surrogateescape"
        # goes back to the bytes it came from.
        return value.encode("utf-8", errors="surrogateescape")
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    raise TypeError(f"{name} must be str or bytes, not {type(value).__name__}")


def _buffer(data: bytes):
    """A C buffer holding `data` (NULs included) and a char* to it."""
    buffer = ctypes.create_string_buffer(data, len(data) or 1)
    return buffer, ctypes.cast(buffer, ctypes.POINTER(ctypes.c_char))


def diagnose(
    text: Union[str, bytes],
    traceback: Union[str, bytes, None] = None,
    cuda_error: Optional[int] = None,
    report: Optional[Report] = None,
    report_json: Union[str, bytes, Mapping, None] = None,
    check: Optional[Mapping[str, Any]] = None,
    kb_dir: Optional[PathArg] = None,
) -> Diagnosis:
    """Diagnoses a CUDA error's text (a message, a traceback or a whole log;
    str or bytes in any encoding). Optionally weighed against at most one
    environment: a Report, an archfit.check/1 document (report_json), or
    check(), whose keyword arguments `check` holds, run first."""
    given = [name for name, value in (("report", report), ("report_json", report_json),
                                      ("check", check)) if value is not None]
    if len(given) > 1:
        # The C ABI refuses it too, but a Report reaches it as report_json,
        # so it could not name the arguments the caller gave.
        raise ArchfitError(
            f"diagnose: give at most one of report, report_json and check (got {', '.join(given)})",
            "ARCHFIT_ERROR_INVALID_ARGUMENT",
        )
    if report is not None:
        if not isinstance(report, Report):
            raise TypeError(f"report must be an archfit.Report, not {type(report).__name__}")
        report_json = report.json
    if isinstance(report_json, Mapping):
        report_json = json.dumps(report_json)
    if isinstance(report_json, str):
        report_json = report_json.encode("utf-8")

    cdll = _library.load().cdll
    context = _get_context()
    text_bytes = _text_bytes(text, "text")
    text_buffer, text_pointer = _buffer(text_bytes)
    options = _capi.DiagnoseOptions.new(
        text=text_pointer,
        text_size=len(text_bytes),
        cuda_error=int(cuda_error or 0),
        report_json=report_json,
        kb_dir=_path_bytes(kb_dir) if kb_dir is not None else None,
    )
    # What options points into must outlive the call.
    keep: list = [text_buffer]
    if traceback is not None:
        traceback_bytes = _text_bytes(traceback, "traceback")
        traceback_buffer, options.traceback = _buffer(traceback_bytes)
        options.traceback_size = len(traceback_bytes)
        keep.append(traceback_buffer)
    if check is not None:
        check_options, check_keep = _check_options(**check)
        options.check = ctypes.pointer(check_options)
        keep.extend([check_options, check_keep])

    diagnosis = _capi.DiagnosisP()
    _raise_for(
        cdll.archfit_diagnose_run(context, ctypes.byref(options), ctypes.byref(diagnosis)),
        "archfit_diagnose_run",
    )
    del keep
    try:
        info = _capi.DiagnosisInfo.new()
        _raise_for(
            cdll.archfit_diagnosis_get_info(diagnosis, ctypes.byref(info)),
            "archfit_diagnosis_get_info",
        )
        json_text = ctypes.c_char_p()
        _raise_for(
            cdll.archfit_diagnosis_json(diagnosis, ctypes.byref(json_text)),
            "archfit_diagnosis_json",
        )
        component = None
        if info.component_name is not None:
            component = {
                "name": _text(info.component_name),
                "kind": _text(info.component_kind),
                "version": _text(info.component_version),
                "path": _text(info.component_path),
            }
        document_text = _text(json_text.value)
        text = ctypes.c_char_p()
        _raise_for(
            cdll.archfit_diagnosis_text(diagnosis, _capi.TEXT_DEFAULT, ctypes.byref(text)),
            "archfit_diagnosis_text",
        )
        return Diagnosis(
            category=_text(info.category),
            recognised=bool(info.recognised),
            confidence=_text(info.confidence),
            explanation=_text(info.explanation),
            sm=_text(info.sm),
            component=component,
            environment=_optional_text(info.environment),
            evidence=[_text(cdll.archfit_diagnosis_evidence(diagnosis, i))
                      for i in range(info.evidence_count)],
            fix=[_text(cdll.archfit_diagnosis_fix(diagnosis, i)) for i in range(info.fix_count)],
            json=document_text,
            document=json.loads(document_text),
            text=_text(text.value),
        )
    finally:
        cdll.archfit_diagnosis_destroy(diagnosis)
