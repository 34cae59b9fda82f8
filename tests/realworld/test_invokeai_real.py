"""The archfit InvokeAI node pack (host_adapters/invokeai/archfit_preflight)
loaded by the real InvokeAI from PyPI: its node loader imports the pack, the
invocation is in its registry with its output, a workflow graph with the node
parses, and the node runs the way InvokeAI's session processor runs it.

InvokeAI lives in its own cached venv (invokeai_venv.py; several GB, made
once); invokeai_probe.py runs in that venv's Python and reports as JSON, so
this tier's pytest venv does not need InvokeAI.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

import invokeai_venv

REPO = Path(__file__).resolve().parents[2]
PACK = REPO / "host_adapters" / "invokeai" / "archfit_preflight"
BINDING = REPO / "host_adapters" / "python"
PROBE = Path(__file__).with_name("invokeai_probe.py")


@pytest.fixture(scope="module")
def invokeai() -> dict:
    """The cached InvokeAI venv's record (made here when missing)."""
    try:
        return invokeai_venv.ensure(log=lambda line: None)
    except invokeai_venv.Unsupported as why:
        pytest.skip(str(why))


class _Summary:
    """Adds the InvokeAI run's figures to the session's closing summary."""

    def __init__(self, line: str):
        self.line = line

    def pytest_terminal_summary(self, terminalreporter):
        terminalreporter.section("the real InvokeAI")
        terminalreporter.write_line(self.line)


@pytest.fixture(scope="module")
def demo_site() -> Path:
    path = Path(os.environ.get("ARCHFIT_DEMO_SITE")
                or REPO / "build" / "tests" / "fixtures" / "demo" / "site-packages")
    if not (path / "torch" / "version.py").is_file():
        pytest.skip(f"no demo site-packages at {path}: it is built by nvcc (make build with a CUDA toolkit)")
    return path


@pytest.fixture(scope="module")
def probe(invokeai, archfit_bin, demo_site, tmp_path_factory, request) -> dict:
    root = tmp_path_factory.mktemp("invokeai")
    nodes = root / "nodes"
    shutil.copytree(PACK, nodes / "archfit_preflight", ignore=shutil.ignore_patterns("__pycache__"))
    library = Path(os.environ.get("ARCHFIT_LIBRARY") or archfit_bin.parent / "libarchfit.so.0")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env.update(ARCHFIT_LIBRARY=str(library), ARCHFIT_GPU="RTX 5090", INVOKEAI_ROOT=str(root / "root"),
               PYTHONNOUSERSITE="1", PYTHONDONTWRITEBYTECODE="1", HF_HUB_OFFLINE="1")
    result = root / "result.json"
    proc = subprocess.run(
        [str(invokeai_venv.python_of(invokeai_venv.venv_dir())), str(PROBE), str(nodes), str(BINDING),
         str(demo_site), str(result)],
        env=env, capture_output=True, text=True, timeout=900)
    if not result.is_file():
        pytest.fail(f"the probe wrote nothing (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    data = json.loads(result.read_text())
    request.config.pluginmanager.register(_Summary(
        f"invokeai {data['versions']['invokeai']} (torch {data['versions']['torch']}, "
        f"pydantic {data['versions']['pydantic']}); venv {invokeai['bytes'] / 1e9:.1f} GB, "
        f"installed in {invokeai['seconds']:.0f} s from {invokeai['index']}; "
        f"import {data.get('import_seconds')} s, load_custom_nodes {data.get('load_seconds')} s, "
        f"invoke {data.get('invoke_seconds')} s"))
    assert "exception" not in data, data["exception"] + proc.stderr[-4000:]
    assert proc.returncode == 0, proc.stderr[-4000:]
    return data


def test_the_venv_has_the_pinned_invokeai(invokeai, probe):
    assert invokeai_venv.REQUIREMENT == f"invokeai=={probe['versions']['invokeai']}"
    assert Path(probe["archfit_module"]).is_relative_to(BINDING)  # the source tree's binding


def test_the_node_loader_imports_the_pack(probe):
    assert probe["pack_problem"] is None  # archfit loaded inside InvokeAI's Python
    assert "INFO Loading node pack archfit_preflight" in probe["loader_log"]
    assert not [line for line in probe["loader_log"] if line.startswith(("ERROR", "WARNING"))], \
        probe["loader_log"]
    assert any(line.startswith("INFO Loaded 1 node pack") and "archfit_preflight" in line
               for line in probe["loader_log"]), probe["loader_log"]
    assert probe["pack_logger"] == "logging.Logger"  # InvokeAILogger's, not the fallback's
    assert probe["load_seconds"] < 5, probe["load_seconds"]  # the check runs in a thread


def test_the_invocation_is_registered_with_its_output(probe):
    assert probe["registered"] and probe["output_registered"]
    assert probe["class"] == "archfit_preflight.ArchfitPreflightInvocation"
    assert probe["output_annotation"] == "archfit_preflight_output"
    assert probe["output_annotation_is_registered_class"]
    assert probe["unregistered_outputs"] == []  # run_app's start-up warning would be empty
    ui = probe["ui_config"]
    assert (ui["title"], ui["category"], ui["node_pack"], ui["version"]) == \
        ("archfit Pre-flight", "archfit", "archfit_preflight", "1.1.0")
    assert probe["use_cache_default"] is False
    assert probe["schema"]["node_pack"] == "archfit_preflight"
    assert probe["schema"]["class"] == "invocation"
    assert probe["schema_gpu"]["default"] == "" and probe["schema_gpu"]["field_kind"] == "input"
    assert {"report", "fits", "type"} <= set(probe["output_schema_fields"])


def test_the_invocation_runs_and_reports_what_fails_on_an_rtx_5090(probe):
    assert probe["node"] == {"class": "ArchfitPreflightInvocation", "gpu": "RTX 5090", "use_cache": False}
    assert probe["context"].endswith(".InvocationContext")
    assert probe["output_class"] == "ArchfitPreflightOutput" and probe["output_is_registered_class"]
    output = probe["output"]
    assert output["type"] == "archfit_preflight_output"
    assert output["fits"] is False
    # Fix first: what cannot run, then the command. The demo site-packages has
    # no interpreter beside it, so the command is pip's own words.
    report = output["report"]
    assert "RTX 5090 cannot run PyTorch 2.5.1+cu124" in report, report
    assert "pip install torch==" in report, report
    assert probe["output_round_trip"]  # InvokeAI's output type adapter reads it back
    assert probe["h100_fits"] is True


def test_the_startup_block_goes_to_invokeais_log(probe):
    assert probe["startup_thread_done"]
    lines = probe["pack_log"]
    assert any("GeForce RTX 5090 (sm_120, simulated)" in line for line in lines), lines
    assert any("fails: PyTorch 2.5.1+cu124 has no image for GeForce RTX 5090 (sm_120)" in line
               for line in lines), lines
