"""One verdict table for every front end (issue 25): the core says which
verdicts block (libarchfit's archfit_verdict_blocks, the check JSON's
`verdicts`), and the Python binding, the InvokeAI and ComfyUI packs' Python
and the ComfyUI front end's JavaScript all answer as it does, for every
verdict, whether the item carries its own `blocks` or only its verdict.

A front end that kept a list of its own (the JavaScript once counted
relocatable-only and no-device-code as failures; the binding once knew only
no-image and ptx-too-new-for-driver) fails here on the verdict it gets wrong.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

import archfit
from archfit import host, verdicts

REPO = Path(__file__).resolve().parents[2]
EXTENSION = REPO / "host_adapters" / "comfyui" / "web" / "archfit.js"
NODE = os.environ.get("ARCHFIT_NODE") or "/usr/bin/node"
DEVICE = {"name": "GeForce RTX 5090", "sm": "120", "simulated": True}


@pytest.fixture(scope="module")
def core_table(archfit_library):
    """The core's table, from the loaded libarchfit."""
    table = verdicts.table()
    assert table, "archfit_verdict_count() is 0"
    return table


def _stack(verdict, **fields):
    return {"name": f"pkg-{verdict}", "version": "1.0", "verdict": verdict,
            "title": f"pkg-{verdict} fails", "fix": {"summary": "", "commands": [f"fix {verdict}"]},
            **fields}


def _document(stacks, table=None):
    document = {"schema": "archfit.check/1", "verdict": "fails", "devices": [DEVICE],
                "stacks": stacks, "components": []}
    if table is not None:
        document["verdicts"] = table
    return document


def _python_answers(stack, table):
    """Each Python front end's answer on a document of this one stack (so no
    front end's cap on how many it lists hides it): does it fail?"""
    document = _document([stack], table)
    name = stack["name"]
    toast = host.check_toast(document)  # ComfyUI's Pre-flight toast
    return {
        "host.failing": [s["name"] for s in host.failing(document)] == [name],
        # The InvokeAI node's report, and ComfyUI's start-up log.
        "fix_first_lines": f"✗ {name} fails" in host.fix_first_lines(document),
        "check_toast": bool(toast) and toast["title"] == f"{name} fails",
    }


def _javascript_answers(tmp_path, documents):
    """The ComfyUI front end's checklist() (archfit.js, run by node with
    ComfyUI's app and api stood in) for each document: the failing names."""
    if not (os.path.isfile(NODE) and os.access(NODE, os.X_OK)):
        pytest.fail(f"no node at {NODE} (the Makefile installs Debian's nodejs; or set ARCHFIT_NODE)")
    (tmp_path / "package.json").write_text('{"type": "module"}')
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "app.js").write_text("export const app = { registerExtension() {} };\n")
    (tmp_path / "scripts" / "api.js").write_text("export const api = {};\n")
    extension = tmp_path / "extensions" / "archfit" / "archfit.js"
    extension.parent.mkdir(parents=True)
    shutil.copy(EXTENSION, extension)
    (tmp_path / "documents.json").write_text(json.dumps(documents))
    script = """
      import { readFileSync } from "node:fs";
      const { checklist } = await import("./extensions/archfit/archfit.js");
      const documents = JSON.parse(readFileSync("documents.json", "utf8"));
      const failing = documents.map((report) =>
        checklist(report, { width: 200, shown: 100 })
          .filter((line) => line.ok === false && line.text.startsWith("✗ pkg-"))
          .map((line) => line.text.slice(2).split(" ")[0]));
      console.log(JSON.stringify(failing));
    """
    run = subprocess.run([NODE, "--input-type=module", "-e", script], cwd=tmp_path,
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def test_the_check_json_carries_the_libraries_table(core_table, archfit_cli, demo_site):
    """`archfit check --json` writes the same table the C ABI answers from,
    every verdict with blocks, warns and a meaning."""
    run = subprocess.run([str(archfit_cli), "check", "--json", "--gpu", "RTX 5090",
                          "--site-packages", str(demo_site)], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 1, run.stderr
    document = json.loads(run.stdout)
    table = document["verdicts"]
    assert {name: {"blocks": facts["blocks"], "warns": facts["warns"]}
            for name, facts in table.items()} == core_table
    assert all(facts["meaning"] for facts in table.values())
    # The items agree with the table: a loaded stack blocks as its verdict does.
    for stack in document["stacks"]:
        if stack["blocks"]:
            assert table[stack["verdict"]]["blocks"], stack["name"]


def test_the_library_answers_for_every_verdict_and_refuses_unknown_names(core_table,
                                                                         archfit_library):
    cdll = archfit._library.load().cdll
    assert set(core_table) == {"native", "ptx-jit", "no-image", "ptx-too-new-for-driver",
                               "relocatable-only", "no-device-code", "driver-too-old",
                               "wrong-platform", "no-cuda-build", "missing-library", "unknown"}
    blocking = {name for name, facts in core_table.items() if facts["blocks"]}
    assert blocking == {"no-image", "ptx-too-new-for-driver", "driver-too-old", "wrong-platform",
                        "no-cuda-build", "missing-library"}
    assert cdll.archfit_verdict_blocks(b"fits-somehow") == -1
    assert cdll.archfit_verdict_blocks(None) == -1
    assert cdll.archfit_verdict_name(len(core_table)) is None


@pytest.mark.parametrize("with_table", [True, False], ids=["document-table", "library-table"])
def test_every_python_front_end_answers_as_the_core(core_table, with_table):
    """Items carrying only their verdict: the document's table answers, or,
    for a document without one, the loaded library's."""
    table = {v: dict(f) for v, f in core_table.items()} if with_table else None
    for verdict in (v for v in core_table if v != "unknown"):  # unknown: no GPU, drawn as "?"
        expected = core_table[verdict]["blocks"]
        for front_end, says in _python_answers(_stack(verdict), table).items():
            assert says == expected, f"{front_end} on {verdict}: {says}, the core: {expected}"


def test_an_items_own_blocks_outweighs_its_verdict(core_table):
    """A failing verdict on a copy nothing loads blocks nothing (reach): the
    item's `blocks` is what counts, in every front end."""
    table = {v: dict(f) for v, f in core_table.items()}
    quiet = _python_answers(_stack("no-image", blocks=False), table)
    assert not any(quiet.values()), quiet
    loud = _python_answers(_stack("native", blocks=True), table)
    assert all(loud.values()), loud


def test_the_comfyui_front_end_answers_as_the_core(core_table, tmp_path):
    judged = [v for v in core_table if v != "unknown"]
    table = {v: dict(f) for v, f in core_table.items()}
    from_table = _document([_stack(v) for v in judged], table)
    own_fields = _document([_stack(v, blocks=not core_table[v]["blocks"]) for v in judged], table)
    failing_from_table, failing_from_fields = _javascript_answers(tmp_path, [from_table, own_fields])
    assert sorted(failing_from_table) == sorted(
        f"pkg-{v}" for v in judged if core_table[v]["blocks"])
    assert sorted(failing_from_fields) == sorted(
        f"pkg-{v}" for v in judged if not core_table[v]["blocks"])


def test_the_core_table_is_the_one_the_documents_rules_describe(core_table):
    """docs/check-json.md names the blocking verdicts; it says what the core does."""
    text = (REPO / "docs" / "check-json.md").read_text()
    for verdict, facts in core_table.items():
        if facts["blocks"]:
            assert f"`{verdict}`" in text, verdict
