"""ctypes mirrors of the archfit.h types the binding uses.

Each Structure lists archfit.h's fields in the header's order with the same
C types: the layout must match byte for byte, and the library reads only the
first ``struct_size`` bytes, so a field left out at the end is harmless but
one left out in the middle is not. ``new()`` sets struct_size to the size of
this mirror, as a C caller sets it to sizeof the struct it was compiled with.
"""

from __future__ import annotations

import ctypes
from ctypes import POINTER, c_char, c_char_p, c_int, c_int32, c_size_t, c_uint32


# Opaque handles: never built here, only pointed to.
class Context(ctypes.Structure):
    pass


class Report(ctypes.Structure):
    pass


class Diagnosis(ctypes.Structure):
    pass


ContextP = POINTER(Context)
ReportP = POINTER(Report)
DiagnosisP = POINTER(Diagnosis)


class _Sized(ctypes.Structure):
    @classmethod
    def new(cls, **fields):
        value = cls(**fields)
        value.struct_size = ctypes.sizeof(cls)
        return value


class ContextOptions(_Sized):
    _fields_ = [
        ("struct_size", c_uint32),
        ("threads", c_uint32),
        ("libcuda", c_char_p),
    ]


class CheckOptions(_Sized):
    _fields_ = [
        ("struct_size", c_uint32),
        ("gpu", c_char_p),
        ("driver", c_char_p),
        ("site_packages", POINTER(c_char_p)),
        ("site_packages_count", c_size_t),
        ("custom_nodes", c_char_p),
        ("paths", POINTER(c_char_p)),
        ("paths_count", c_size_t),
        ("kb_dir", c_char_p),
        ("wheels", POINTER(c_char_p)),
        ("wheels_count", c_size_t),
        ("confirm", c_int),
        ("plugins", c_int),
        ("scan_index", c_int),
    ]


class DiagnoseOptions(_Sized):
    # text and traceback are `const char*` with a size in C. They are
    # POINTER(c_char) here, not c_char_p: the bytes may hold NULs, and a
    # pointer to a buffer the caller keeps says so plainly.
    _fields_ = [
        ("struct_size", c_uint32),
        ("text", POINTER(c_char)),
        ("text_size", c_size_t),
        ("traceback", POINTER(c_char)),
        ("traceback_size", c_size_t),
        ("cuda_error", c_int32),
        ("report", ReportP),
        ("report_json", c_char_p),
        ("check", POINTER(CheckOptions)),
        ("kb_dir", c_char_p),
    ]


class DiagnosisInfo(_Sized):
    _fields_ = [
        ("struct_size", c_uint32),
        ("recognised", c_int),
        ("category", c_char_p),
        ("confidence", c_char_p),
        ("explanation", c_char_p),
        ("sm", c_char_p),
        ("component_name", c_char_p),
        ("component_kind", c_char_p),
        ("component_version", c_char_p),
        ("component_path", c_char_p),
        ("environment", c_char_p),
        ("fix_count", c_size_t),
        ("evidence_count", c_size_t),
    ]


# archfit_status, by number (archfit.h); codes are only ever added.
STATUS_NAMES = {
    0: "ARCHFIT_OK",
    1: "ARCHFIT_ERROR_INVALID_ARGUMENT",
    2: "ARCHFIT_ERROR_IO",
    3: "ARCHFIT_ERROR_OUT_OF_MEMORY",
    4: "ARCHFIT_ERROR_UNSUPPORTED",
    5: "ARCHFIT_ERROR_INTERNAL",
}

# archfit_text_flags (archfit_report_text, archfit_diagnosis_text), or-ed.
TEXT_DEFAULT = 0
TEXT_COLOR = 1
TEXT_DETAILS = 2

# archfit_overall_verdict, by number.
VERDICTS = {0: "fits", 1: "fails", 2: "unknown"}
