"""Short plain-text renderings of archfit's JSON documents, for a node in a
host's canvas or a log: no colour, no terminal width, a few lines.

They read only the documents' fixed fields (docs/check-json.md,
docs/diagnosis-json.md) and tolerate missing ones, so a document saved by
another archfit version still renders.
"""

from __future__ import annotations

from typing import Any, Mapping

from . import verdicts

# How many failing stacks' fixes report_text shows; the rest are counted.
_FIXES_SHOWN = 2


def _mark(item: Mapping[str, Any], document: Mapping[str, Any]) -> str:
    """✗ where the core says it blocks, ! where it warns (a first run that
    JIT-compiles), ✓ otherwise: the item's own fields, else the core's
    verdict table (verdicts.py)."""
    if item.get("verdict") == "unknown":
        return "?"  # no GPU to judge it on
    if verdicts.blocks(item, document):
        return "✗"
    return "!" if verdicts.warns(item, document) else "✓"


def _name_version(item: Mapping[str, Any]) -> str:
    name = str(item.get("name") or "?")
    version = item.get("version")
    return f"{name} {version}" if version else name


def _device_line(device: Mapping[str, Any]) -> str:
    facts = []
    if device.get("sm") is not None:
        facts.append(f"sm_{device['sm']}")
    if device.get("simulated"):
        facts.append("simulated")
    detail = f" ({', '.join(facts)})" if facts else ""
    return f"GPU     {device.get('name') or '?'}{detail}"


def report_text(document: Mapping[str, Any]) -> str:
    """An archfit.check/1 document as a checklist: the GPUs, the driver,
    torch, one line per stack (✓ runs, ! runs after a JIT, ✗ fails: name,
    version, verdict, evidence), the failing stacks' fixes, the features
    that will not work, and last the core's one-line answer."""
    lines = []
    devices = document.get("devices") or []
    if devices:
        lines.extend(_device_line(device) for device in devices)
    else:
        lines.append("GPU     none found (nothing to judge against)")
    driver = document.get("driver") or {}
    if driver.get("version"):
        simulated = ", simulated" if driver.get("simulated") else ""
        lines.append(f"driver  {driver['version']}{simulated}")
    else:
        lines.append("driver  unknown")
    if document.get("torch"):
        lines.append(f"torch   {document['torch']}")

    # Stacks (what a user moves as one); a document from before them lists components.
    units = document.get("stacks")
    if units is None:
        units = document.get("components") or []
    judged = bool(devices)
    for unit in units:
        verdict = str(unit.get("verdict") or "?")
        if not judged:
            # With no GPU nothing was judged: no mark, whatever the verdict field says.
            lines.append(f"· {_name_version(unit)}: not judged")
            continue
        line = f"{_mark(unit, document)} {_name_version(unit)}: {verdict}"
        if unit.get("evidence"):
            line += f" ({unit['evidence']})"
        lines.append(line)

    failing = [unit for unit in units if judged and _mark(unit, document) == "✗"]
    shown = 0
    for unit in failing:
        fix = unit.get("fix") or {}
        if not fix.get("summary") and not fix.get("commands"):
            continue
        if shown == _FIXES_SHOWN:
            lines.append(f"  … and {len(failing) - shown} more: see the full report")
            break
        lines.append(f"fix {unit.get('name') or '?'}: {fix.get('summary') or ''}".rstrip())
        lines.extend(f"  {command}" for command in fix.get("commands") or [])
        shown += 1
    for unit in units:
        for note in unit.get("notes") or []:
            lines.append(f"note: {note.get('feature')} will not work on {note.get('device')}")

    summary = document.get("summary")
    if document.get("verdict") == "unknown" or not judged:
        lines.append(summary if summary and summary.startswith("unknown")
                     else "unknown: no GPU to judge against")
        lines.append("name one to ask about it (ARCHFIT_GPU=\"RTX 5090\" for the host adapters, "
                     "--gpu on the command line)")
    elif summary:
        lines.append(summary)
    elif document.get("verdict") == "fits":
        lines.append(f"fits: all {len(units)} components have code this GPU runs")
    else:
        lines.append(f"fails: {len(failing)} will stop with a CUDA error")
    return "\n".join(lines)


def diagnosis_text(document: Mapping[str, Any]) -> str:
    """An archfit.diagnosis/1 document in a few lines: the category, the
    component behind it, why, what the check of the environment said, and
    the fix as numbered steps; a recognised error's title first."""
    category = str(document.get("category") or "not-recognised")
    confidence = document.get("confidence")
    head = category if not confidence or confidence == "none" else f"{category} ({confidence} confidence)"
    title = (document.get("headline") or {}).get("title")
    lines = [title, head] if title else [head]
    error = document.get("error") or {}
    if error.get("message"):
        exception = f"{error['exception_type']}: " if error.get("exception_type") else ""
        lines.append(f"error      {exception}{error['message']}")
    component = document.get("component")
    if component:
        kind = f" ({component['kind']})" if component.get("kind") else ""
        lines.append(f"component  {_name_version(component)}{kind}")
    if document.get("explanation"):
        lines.append(f"why        {document['explanation']}")
    environment = document.get("environment")
    if environment:
        evidence = environment.get("evidence") or []
        first = f": {evidence[0]}" if evidence else ""
        lines.append(f"checked    {environment.get('verdict') or '?'}{first}")
        lines.extend(f"           {sentence}" for sentence in evidence[1:])
    fixes = document.get("fix") or []
    for number, step in enumerate(fixes, start=1):
        lines.append(f"{'fix' if number == 1 else '':<10} {number}. {step}")
    return "\n".join(lines)
