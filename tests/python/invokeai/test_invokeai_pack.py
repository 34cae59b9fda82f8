"""The archfit InvokeAI node pack loaded as InvokeAI's node loader loads it,
through a stand-in of its decorator contract (invokeai_standin.py)."""

import logging
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import invokeai_standin

REPO = Path(__file__).resolve().parents[3]
PACK = REPO / "host_adapters" / "invokeai" / "archfit_preflight"
BINDING_DIR = str(REPO / "host_adapters" / "python")


@pytest.fixture
def pack(tmp_path, monkeypatch):
    nodes = tmp_path / "invokeai" / "nodes"
    shutil.copytree(PACK, nodes / "archfit_preflight",
                    ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.syspath_prepend(BINDING_DIR)
    monkeypatch.delenv("ARCHFIT_GPU", raising=False)
    invokeai_standin.install()
    yield lambda: invokeai_standin.load_node_pack(nodes / "archfit_preflight")
    for name in ("archfit_preflight", "archfit_preflight.error_hook", "invokeai",
                 "invokeai.invocation_api"):
        sys.modules.pop(name, None)
    invokeai_logger = logging.getLogger("InvokeAI")
    for handler in list(invokeai_logger.handlers):
        if type(handler).__name__ == "InvocationErrorHandler":
            invokeai_logger.removeHandler(handler)


def test_the_invocation_registers_with_its_output(pack):
    pack()
    entry = invokeai_standin.INVOCATIONS["archfit_preflight"]
    assert entry["title"] == "archfit Pre-flight"
    assert entry["category"] == "archfit"
    assert entry["use_cache"] is False  # the environment can change between runs
    assert "archfit_preflight_output" in invokeai_standin.OUTPUTS


def test_the_invocation_reports_what_fails_on_a_named_gpu(pack, demo_site, monkeypatch):
    module = pack()
    monkeypatch.setattr(module.host, "site_packages", lambda: [str(demo_site)])
    invocation = invokeai_standin.INVOCATIONS["archfit_preflight"]["cls"](gpu="RTX 5090")
    output = invocation.invoke(invokeai_standin.InvocationContext())
    assert output.fits is False
    # The failing stack and its command first; the whole list is the details.
    lines = output.report.splitlines()
    assert lines[0] == "✗ RTX 5090 cannot run PyTorch 2.5.1+cu124", lines
    assert lines[1].strip().startswith("pip install torch==2.15.0"), lines
    assert lines[-1].startswith("✓ ") and "GeForce RTX 5090 (sm_120)" in lines[-1], lines
    assert not any("nvidia-" in line for line in lines), lines
    assert "PyTorch 2.5.1+cu124" in output.details and "no-image" in output.details
    on_h100 = invokeai_standin.INVOCATIONS["archfit_preflight"]["cls"](gpu="H100")
    assert on_h100.invoke(invokeai_standin.InvocationContext()).fits is True


def test_the_startup_block_is_logged(pack, demo_site, monkeypatch, caplog):
    import logging

    import archfit.host

    monkeypatch.setenv("ARCHFIT_GPU", "RTX 5090")
    monkeypatch.setattr(archfit.host, "site_packages", lambda: [str(demo_site)])
    caplog.set_level(logging.INFO)
    thread = pack().startup_check
    assert thread is not None
    thread.join(timeout=30)
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("[archfit]")]
    assert any("GeForce RTX 5090 (sm_120, simulated)" in line for line in lines), lines
    assert any("fails: PyTorch 2.5.1+cu124 has no image for GeForce RTX 5090 (sm_120)" in line
               for line in lines), lines


def test_a_missing_library_leaves_invokeai_running_and_the_node_says_why(tmp_path):
    shutil.copytree(PACK, tmp_path / "archfit_preflight",
                    ignore=shutil.ignore_patterns("__pycache__"))
    script = textwrap.dedent("""\
        import logging, sys
        from pathlib import Path
        logging.basicConfig(level=logging.INFO, format="%(levelname)s %(message)s")
        sys.path[:0] = [{tests!r}, {binding!r}]
        import invokeai_standin
        invokeai_standin.install()
        invokeai_standin.load_node_pack(Path({pack!r}))
        node = invokeai_standin.INVOCATIONS["archfit_preflight"]["cls"]()
        output = node.invoke(invokeai_standin.InvocationContext())
        print("FITS:", output.fits)
        print("REPORT:", output.report)
        """).format(tests=os.path.dirname(__file__), binding=BINDING_DIR,
                    pack=str(tmp_path / "archfit_preflight"))
    env = dict(os.environ, ARCHFIT_LIBRARY="/nonexistent/libarchfit.so.0")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            env=env, timeout=60)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "WARNING [archfit] LibraryError" in output, output
    assert "FITS: False" in output and "REPORT: archfit cannot check this InvokeAI" in output, output


# What InvokeAI's session runner logs for a failed invocation (its
# _on_node_error): the error line, then traceback.format_exc().
def _invokeai_logs_a_failure(exception_line):
    invokeai = logging.getLogger("InvokeAI")
    invokeai.error("Error while invoking session 3f2a, invocation 7c1d (flux_denoise): boom")
    invokeai.error('Traceback (most recent call last):\n  File "/invokeai/app/services/'
                   'session_processor/session_processor_default.py", line 120, in run_node\n'
                   "    output = invocation.invoke_internal(context=context, services=self._"
                   "services)\n" + exception_line + "\n")


def test_a_cuda_failure_is_explained_in_invokeais_log_and_nothing_else_is(pack, demo_site,
                                                                          monkeypatch, caplog):
    import archfit.host

    monkeypatch.setenv("ARCHFIT_GPU", "RTX 5090")
    monkeypatch.setattr(archfit.host, "site_packages", lambda: [str(demo_site)])
    module = pack()
    module.startup_check.join(timeout=30)
    assert module._latest_report is not None, "the start-up check is what errors are weighed against"
    caplog.set_level(logging.INFO)
    _invokeai_logs_a_failure("RuntimeError: CUDA error: no kernel image is available for "
                             "execution on the device")
    module.error_hook.wait()
    said = [r.getMessage() for r in caplog.records if r.getMessage().startswith("[archfit] ")
            and r.levelno == logging.ERROR]
    assert said[0] == "[archfit] RTX 5090 cannot run PyTorch 2.5.1+cu124", said
    assert any(line.startswith("[archfit] fix: pip install torch==2.15.0") for line in said), said
    assert module.error_hook.latest["session"] == "3f2a"

    caplog.clear()
    _invokeai_logs_a_failure("FileNotFoundError: [Errno 2] No such file or directory: "
                             "'/models/flux.safetensors'")
    module.error_hook.wait()
    assert [r.getMessage() for r in caplog.records if "[archfit]" in r.getMessage()] == []
    # A traceback with no error line before it is not InvokeAI's node error.
    logging.getLogger("InvokeAI").error("Traceback (most recent call last):\nRuntimeError: "
                                        "CUDA error: no kernel image is available")
    module.error_hook.wait()
    assert [r.getMessage() for r in caplog.records if "[archfit]" in r.getMessage()] == []
