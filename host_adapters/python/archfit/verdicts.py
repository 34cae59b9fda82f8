"""Whether a verdict fails: the core's answer, never a list of the binding's own.

Every stack, component and binary of an archfit.check/1 document carries the
core's ``blocks`` and ``warns``, and the document carries the core's whole
verdict table as ``verdicts`` (docs/check-json.md). An item without those
fields — a document saved by an archfit from before them — is answered by
the table of the loaded libarchfit (archfit_verdict_blocks), and a verdict
no table knows blocks nothing.
"""

from __future__ import annotations

import threading
from typing import Any, Dict, Mapping, Optional

from . import _library
from ._errors import LibraryError

_table_lock = threading.Lock()
_library_table: Optional[Dict[str, Dict[str, bool]]] = None


def table() -> Dict[str, Dict[str, bool]]:
    """The loaded libarchfit's verdict table: each verdict's name with its
    ``blocks`` and ``warns``, best first. Raises LibraryError when no library
    loads."""
    global _library_table
    with _table_lock:
        if _library_table is None:
            cdll = _library.load().cdll
            loaded = {}
            for index in range(cdll.archfit_verdict_count()):
                name = cdll.archfit_verdict_name(index)
                loaded[name.decode()] = {
                    "blocks": cdll.archfit_verdict_blocks(name) == 1,
                    "warns": cdll.archfit_verdict_warns(name) == 1,
                }
            _library_table = loaded
        return _library_table


def facts(verdict: Any, document: Optional[Mapping[str, Any]] = None) -> Optional[Mapping[str, Any]]:
    """What the core says of ``verdict``: the document's own table first,
    else the loaded library's; None when neither knows it."""
    if document is not None:
        own = document.get("verdicts")
        if isinstance(own, Mapping) and isinstance(own.get(verdict), Mapping):
            return own[verdict]
    try:
        return table().get(verdict)
    except LibraryError:
        return None


def _answer(item: Mapping[str, Any], field: str, document: Optional[Mapping[str, Any]]) -> bool:
    if field in item:
        return bool(item.get(field))
    known = facts(item.get("verdict"), document)
    return bool(known and known.get(field))


def blocks(item: Mapping[str, Any], document: Optional[Mapping[str, Any]] = None) -> bool:
    """Whether the core says this stack, component or binary fails."""
    return _answer(item, "blocks", document)


def warns(item: Mapping[str, Any], document: Optional[Mapping[str, Any]] = None) -> bool:
    """Whether the core says it runs but should be said (PTX JIT-compiled on first use)."""
    return _answer(item, "warns", document)
