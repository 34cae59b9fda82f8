"""What a host adapter (the ComfyUI and InvokeAI node packs) asks of the
process it runs in, without importing torch: the running Python's
site-packages, a GPU named in the environment, and the short start-up block
for the host's log."""

import os
import site
import sys

from . import verdicts

# How a host is told which GPU to judge against (the command's is --gpu).
_ASK_ABOUT_A_GPU = 'set ARCHFIT_GPU (e.g. "RTX 5090") to ask about a GPU'


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
    """The stacks of an archfit.check/1 document that will fail, PyTorch's
    first as the core orders them; for a document without stacks, its
    failing components."""
    stacks = document.get("stacks")
    if stacks is not None:
        return [s for s in stacks if verdicts.blocks(s, document)]
    return [c for c in document.get("components", []) if verdicts.blocks(c, document)]


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
        lines.append(_ASK_ABOUT_A_GPU)
    lines.append("details: %s" % where)
    return lines


def check_text(report):
    """The whole checklist a host shows for an archfit.Report: the core's
    text (Report.text, what `archfit check` prints) and, when there was no
    GPU to judge against, how a host is asked about one: ARCHFIT_GPU, where
    the command's text names its --gpu option."""
    if report.document.get("devices"):
        return report.text
    return report.text + _ASK_ABOUT_A_GPU + "\n"


def diagnosis_toast(document):
    """What a host shows for an archfit.diagnosis/1 document, or None when
    archfit did not recognise the error (the host's own error display is
    then the only one): {"title", "cause", "command", "step"} from the
    core's headline; `step` is the first fix in words, for when no step is
    a command."""
    headline = document.get("headline")
    if not document.get("recognised") or not headline:
        return None
    return {"title": headline.get("title") or document.get("category", ""),
            "cause": headline.get("cause") or "",
            "command": headline.get("command") or "",
            "step": "" if headline.get("command") else headline.get("step") or ""}


def _stack_toast(stack):
    version = " %s" % stack["version"] if stack.get("version") else ""
    fix = stack.get("fix") or {}
    commands = fix.get("commands") or []
    return {"title": stack.get("title") or "%s%s will fail on this GPU" % (stack.get("name"),
                                                                          version),
            "cause": stack.get("evidence") or stack.get("explanation") or "",
            "command": commands[0] if commands else "",
            "step": "" if commands else fix.get("summary") or ""}


def check_toast(document, stopped=False):
    """What a host shows when a check finds a stack that will fail, or None
    when none does: the first failing stack's title, its evidence, its
    fix's command. `stopped`: the check stopped a workflow, and says so."""
    blocking = failing(document)
    if not blocking:
        return None
    toast = _stack_toast(blocking[0])
    if stopped:
        toast["cause"] = "archfit Pre-flight stopped the workflow before it failed: " + toast["cause"]
    if len(blocking) > 1:
        others = ", ".join(str(s.get("name")) for s in blocking[1:])
        toast["cause"] += " (%d more will fail: %s)" % (len(blocking) - 1, others)
    return toast


def fix_first_lines(document):
    """What a node shows first of an archfit.check/1 document: each failing
    stack's title with its command under it (at most three), then one line
    for what runs; the full list is the report text's. Nothing judged (no
    GPU) says so and how to ask about one."""
    devices = document.get("devices") or []
    units = document.get("stacks")
    if units is None:
        units = document.get("components") or []
    if not devices:
        return ["? no GPU to judge against: nothing was judged; set ARCHFIT_GPU "
                '(e.g. "RTX 5090") to ask about one']
    lines = []
    blocking = failing(document)
    for stack in blocking[:3]:
        toast = _stack_toast(stack)
        lines.append("✗ " + toast["title"])
        lines.append("    " + (toast["command"] or toast["step"]))
    if len(blocking) > 3:
        lines.append("✗ %d more will fail (see the details)" % (len(blocking) - 3))
    gpu = ", ".join("%s (sm_%s)" % (d.get("name"), d.get("sm")) for d in devices)
    running = len(units) - len(blocking)
    if not blocking:
        lines.append("✓ all %d stacks run on %s" % (len(units), gpu))
    elif running:
        lines.append("✓ %d other %s on %s" % (running, "stack runs" if running == 1 else
                                               "stacks run", gpu))
    return lines
