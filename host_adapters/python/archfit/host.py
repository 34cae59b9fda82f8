"""What a host adapter (the ComfyUI and InvokeAI node packs) asks of the
process it runs in, without importing torch: the running Python's
site-packages, a GPU named in the environment, and the short start-up block
for the host's log."""

import os
import site
import sys

# A document from before stacks and "blocks" were written (archfit.check/1
# as first published) says failure only by these two verdicts.
_FAILING_BEFORE_BLOCKS = ("no-image", "ptx-too-new-for-driver")


def site_packages():
    """The running Python's site-packages directories that exist, in
    sys.path order (a venv, the Windows portable build's
    python_embeded\\Lib\\site-packages, the user site), each once."""
    candidates = []
    try:
        candidates.extend(site.getsitepackages())
    except AttributeError:  # some embedded builds lack it
        pass
    try:
        candidates.append(site.getusersitepackages())
    except AttributeError:
        pass
    candidates.extend(p for p in sys.path if p.endswith(("site-packages", "dist-packages")))
    seen = []
    for path in candidates:
        real = os.path.realpath(path)
        if os.path.isdir(real) and real not in seen:
            seen.append(real)
    return seen


def gpu_from_environment():
    """ARCHFIT_GPU: a GPU to judge against instead of the real one (a
    machine without one, or asking about another); None when unset."""
    return os.environ.get("ARCHFIT_GPU") or None


def _blocks(item):
    """Whether the core says this stack or component fails: its "blocks"."""
    if "blocks" in item:
        return bool(item.get("blocks"))
    return item.get("verdict") in _FAILING_BEFORE_BLOCKS


def failing(document):
    """The stacks of an archfit.check/1 document that will fail, PyTorch's
    first as the core orders them; for a document without stacks, its
    failing components."""
    stacks = document.get("stacks")
    if stacks is not None:
        return [s for s in stacks if _blocks(s)]
    return [c for c in document.get("components", []) if _blocks(c)]


def summary_lines(document, where="archfit check"):
    """The host's start-up log block for an archfit.check/1 document: the
    GPU and driver, the core's one-line answer, the first fix's command,
    and `where` the details are."""
    devices = document.get("devices") or []
    driver = (document.get("driver") or {}).get("version")
    if devices:
        gpu = ", ".join("%s (sm_%s%s)" % (d.get("name"), d.get("sm"),
                                          ", simulated" if d.get("simulated") else "")
                        for d in devices)
    else:
        gpu = "none found"
    lines = ["GPU %s; driver %s" % (gpu, driver or "not found")]
    summary = document.get("summary")
    if summary:
        lines.append(summary)
    elif document.get("verdict") == "unknown":
        lines.append("unknown: no GPU to judge against")
    else:
        lines.append("%s (an older archfit wrote this report)" % document.get("verdict"))
    fix = document.get("fix") or {}
    if fix.get("summary"):
        lines.append("fix: %s" % fix["summary"])
    for command in (fix.get("commands") or []):
        lines.append("  %s" % command)
    if document.get("verdict") == "unknown" and not devices:
        lines.append('set ARCHFIT_GPU (e.g. "RTX 5090") to ask about a GPU')
    lines.append("details: %s" % where)
    return lines
