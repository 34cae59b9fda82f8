"""What a host adapter (the ComfyUI and InvokeAI node packs) asks of the
process it runs in, without importing torch: the running Python's
site-packages, a GPU named in the environment, and the short start-up block
for the host's log."""

import os
import site
import sys

FAILING_VERDICTS = ("no-image", "ptx-too-new-for-driver", "relocatable-only")


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


def failing(document):
    """The components of an archfit.check/1 document that will fail."""
    return [c for c in document.get("components", []) if c.get("verdict") in FAILING_VERDICTS]


def summary_lines(document, where="archfit check"):
    """The host's start-up log block for an archfit.check/1 document: the
    GPU and driver, torch and whether it fits, how many components will
    fail, the first fix, and `where` the details are."""
    devices = document.get("devices") or []
    driver = (document.get("driver") or {}).get("version")
    if devices:
        gpu = ", ".join("%s (sm_%s%s)" % (d.get("name"), d.get("sm"),
                                          ", simulated" if d.get("simulated") else "")
                        for d in devices)
    else:
        gpu = "none found"
    lines = ["GPU %s; driver %s" % (gpu, driver or "not found")]
    torch = document.get("torch")
    if torch:
        verdict = next((c.get("verdict") for c in document.get("components", [])
                        if c.get("name") == "torch"), None)
        lines.append("torch %s: %s" % (torch, {
            "native": "fits", "ptx-jit": "fits (JIT-compiles on first use)",
            None: "no CUDA code judged"}.get(verdict, "will FAIL (%s)" % verdict)))
    fails = failing(document)
    if document.get("verdict") == "unknown":
        lines.append('no GPU to judge against: set ARCHFIT_GPU (e.g. "RTX 5090") to ask about one')
    elif not document.get("components"):
        lines.append("no CUDA binaries found to judge (is this the host's own Python?)")
    elif not fails:
        lines.append("every component has code this GPU runs (%d judged)"
                     % len(document["components"]))
    else:
        names = ", ".join(("%s %s" % (c.get("name"), c.get("version") or "")).strip()
                          for c in fails[:5])
        lines.append("%d component%s will fail on this GPU: %s" % (
            len(fails), "" if len(fails) == 1 else "s", names))
        fix = fails[0].get("fix") or {}
        if fix.get("summary"):
            lines.append("first fix: %s: %s" % (fails[0].get("name"), fix["summary"]))
        for command in (fix.get("commands") or [])[:1]:
            lines.append("  %s" % command)
    lines.append("details: %s" % where)
    return lines
