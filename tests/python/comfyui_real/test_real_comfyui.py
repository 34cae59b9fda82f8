"""archfit in a real ComfyUI: the test starts ComfyUI's own main.py (on the
CPU, no GPU needed) with the node pack `archfit install comfyui` makes, and
drives ComfyUI's real front end (the comfyui-frontend-package wheel its
requirements pin) in Debian's chromium with Playwright. archfit judges the
environment against ARCHFIT_GPU (default "GTX 1080", which current PyTorch
wheels no longer run on), so the check fails as it would on that GPU.

What must hold:
- a CUDA failure in a node shows one archfit toast with the check's title
  and command, under ComfyUI's own error dialog, to the client that queued
  the prompt only;
- a FileNotFoundError shows ComfyUI's dialog and no archfit toast;
- archfit's own Pre-flight block is explained as the check's finding, and
  kept with the prompt for its client only;
- details open one dialog, collapsed, closed by Escape.

Needs ARCHFIT_COMFYUI (a ComfyUI checkout: main.py, requirements.txt) and
ARCHFIT_COMFYUI_PYTHON (a Python with those requirements installed); `make
test-comfyui` prepares both. Without them every test skips saying why.
ARCHFIT_SCREENSHOT_DIR receives comfyui-toast-under-dialog.png,
comfyui-toast.png, comfyui-details.png and comfyui-preflight.png
(docs/images holds the ones the docs show).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
sys.path.insert(0, str(HERE.parent / "comfyui"))
# E402: the web tests' module is found only through the sys.path line above.
from test_comfyui_web import (  # noqa: E402
    GRACE_S,
    TOASTS_ON_PAGE,
    _assert_png,
    _chromium,
    _unavailable,
)

COMFYUI = os.environ.get("ARCHFIT_COMFYUI")
PYTHON = os.environ.get("ARCHFIT_COMFYUI_PYTHON")
CLI = os.environ.get("ARCHFIT_CLI") or str(REPO / "build" / "sdk" / "archfit")
GPU = os.environ.get("ARCHFIT_TEST_GPU", "GTX 1080")
START_TIMEOUT_S = 300  # ComfyUI imports torch and its nodes: ~30 s on 2 cores
TIMEOUT_MS = 30000


def _workflow(nodes, links=()):
    return {"last_node_id": max(n["id"] for n in nodes), "last_link_id": len(links),
            "nodes": nodes, "links": list(links), "groups": [], "config": {}, "extra": {},
            "version": 0.4}


def _node(node_id, kind, pos, inputs=(), outputs=(), widgets=()):
    return {"id": node_id, "type": kind, "pos": pos, "size": [320, 120], "flags": {},
            "order": node_id - 1, "mode": 0, "inputs": list(inputs), "outputs": list(outputs),
            "properties": {}, "widgets_values": list(widgets)}


def failing_workflow(failure):
    return _workflow([_node(1, "ArchfitTestFail", [80, 80], widgets=[failure])])


PREFLIGHT_WORKFLOW = _workflow(
    [_node(1, "ArchfitPreflight", [40, 60],
           inputs=[{"name": "passthrough", "type": "*", "link": None}],
           outputs=[{"name": "report", "type": "STRING", "links": []},
                    {"name": "fits", "type": "BOOLEAN", "links": []},
                    {"name": "passthrough", "type": "*", "links": [1]}],
           widgets=[True]),
     _node(2, "ArchfitTestSink", [700, 60], inputs=[{"name": "value", "type": "*", "link": 1}])],
    links=[[1, 1, 2, 2, 0, "*"]])


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url, timeout=5):
    with urllib.request.urlopen(url, timeout=timeout) as response:
        return response.status, json.loads(response.read() or b"null")


@pytest.fixture(scope="module")
def comfyui(tmp_path_factory):
    """A running ComfyUI with the archfit pack and the test nodes; yields
    {"url", "log", "report"} and stops it afterwards."""
    if not COMFYUI or not os.path.isfile(os.path.join(COMFYUI, "main.py")):
        _unavailable("ARCHFIT_COMFYUI does not name a ComfyUI checkout (make test-comfyui "
                     "prepares one); the real-ComfyUI tests did not run")
    if not PYTHON or not os.access(PYTHON, os.X_OK):
        _unavailable("ARCHFIT_COMFYUI_PYTHON does not name a Python with ComfyUI's requirements "
                     "(make test-comfyui prepares one); the real-ComfyUI tests did not run")
    root = tmp_path_factory.mktemp("real-comfyui") / "ComfyUI"
    shutil.copytree(COMFYUI, root, ignore=shutil.ignore_patterns(".git", "__pycache__",
                                                                  "custom_nodes", "user",
                                                                  "output", "temp"))
    (root / "custom_nodes").mkdir()
    installed = subprocess.run([CLI, "install", "comfyui", str(root)], capture_output=True,
                               text=True, timeout=120)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    shutil.copytree(HERE / "archfit_test_nodes", root / "custom_nodes" / "archfit_test_nodes")
    port = _free_port()
    log = root / "comfyui.log"
    environment = dict(os.environ, ARCHFIT_GPU=GPU,
                       ARCHFIT_CACHE_DIR=str(root.parent / "archfit-cache"),
                       ARCHFIT_LIBRARY="", ARCHFIT_KB_DIR="")
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [PYTHON, "main.py", "--cpu", "--listen", "127.0.0.1", "--port", str(port),
             "--disable-auto-launch"], cwd=root, env=environment, stdout=out,
            stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            assert process.poll() is None, "ComfyUI exited:\n" + log.read_text()[-4000:]
            try:
                status, info = _get(url + "/object_info/ArchfitPreflight")
                if status == 200 and info:
                    break
            except OSError:
                pass
            assert time.monotonic() < deadline, "ComfyUI did not start:\n" + log.read_text()[-4000:]
            time.sleep(1)
        # The templates browser a first start opens would cover the canvas.
        request = urllib.request.Request(url + "/settings/Comfy.TutorialCompleted", data=b"true",
                                         method="POST",
                                         headers={"Content-Type": "application/json"})
        urllib.request.urlopen(request, timeout=10).close()
        status, report = _get(url + "/archfit/report", timeout=120)
        assert status == 200 and report["verdict"] == "fails", report
        yield {"url": url, "log": log, "report": report}
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()


@pytest.fixture(scope="module")
def browser(comfyui):
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("Playwright for Python is not installed; the real-ComfyUI tests did not run")
    executable = _chromium()
    if executable is None:
        _unavailable("no Chromium (apt-get install chromium, or set ARCHFIT_CHROMIUM)")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, headless=True)
        yield launched
        launched.close()


def _open(browser, comfyui):
    """A ComfyUI tab, connected (it has a client id), recording the
    archfit.diagnosis events and execution errors it receives."""
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(comfyui["url"])
    page.wait_for_function("window.app?.api?.clientId && window.app.extensions?.some("
                           "(e) => e.name === 'archfit.diagnosis')", timeout=90000)
    page.evaluate("""() => {
      window.archfitEvents = [];
      window.executionErrors = [];
      app.api.addEventListener("archfit.diagnosis", ({detail}) => archfitEvents.push(detail));
      app.api.addEventListener("execution_error", ({detail}) => executionErrors.push(detail));
    }""")
    return page


def _queue(page, workflow):
    page.evaluate("async (wf) => { await app.loadGraphData(wf); await app.queuePrompt(0, 1); }",
                  workflow)
    page.wait_for_function("executionErrors.length > 0", timeout=120000)
    return page.evaluate("executionErrors[executionErrors.length - 1]")


def _toasts(page):
    return page.evaluate(TOASTS_ON_PAGE)


def _comfyui_dialog(page):
    """ComfyUI's own dialog on screen: its text and its mask's z-index."""
    return page.evaluate("""(() => {
      const dialog = [...document.querySelectorAll('.p-dialog')]
        .find((d) => !d.closest('.archfit-dialog') && d.getClientRects().length > 0);
      if (!dialog) return null;
      const mask = dialog.closest('.p-dialog-mask');
      return {text: dialog.innerText, zIndex: Number(getComputedStyle(mask ?? dialog).zIndex)};
    })()""")


def _failing_stack(report):
    return next(s for s in report["stacks"] if s["blocks"])


def _screenshot_dir(tmp_path):
    directory = Path(os.environ.get("ARCHFIT_SCREENSHOT_DIR") or tmp_path)
    directory.mkdir(parents=True, exist_ok=True)
    return directory


def test_a_cuda_failure_shows_one_toast_to_the_client_that_queued_it(browser, comfyui,
                                                                     tmp_path):
    queued_by = _open(browser, comfyui)
    onlooker = _open(browser, comfyui)  # another tab, or another user of the server
    error = _queue(queued_by, failing_workflow("cuda-no-kernel-image"))
    assert "no kernel image" in error["exception_message"]
    queued_by.wait_for_selector(".archfit-toast")
    queued_by.wait_for_timeout(GRACE_S * 1000 + 1500)  # a second toast would be up by now

    toasts = _toasts(queued_by)
    assert len(toasts) == 1, toasts
    stack = _failing_stack(comfyui["report"])
    # The check's finding: the node pack that raised has no CUDA code; the
    # stack that fails on this GPU, and its command, are the answer.
    assert toasts[0]["title"] == stack["title"], (toasts, stack["title"])
    assert toasts[0]["command"] == stack["fix"]["commands"][0], toasts
    # ComfyUI's own error dialog is up, and archfit's toast is under it.
    dialog = _comfyui_dialog(queued_by)
    assert dialog is not None and "no kernel image" in dialog["text"], dialog
    assert toasts[0]["zIndex"] < dialog["zIndex"], (toasts, dialog)
    directory = _screenshot_dir(tmp_path)
    queued_by.screenshot(path=str(directory / "comfyui-toast-under-dialog.png"))
    _assert_png(directory / "comfyui-toast-under-dialog.png")

    # The other client saw ComfyUI's nothing and archfit's nothing.
    assert onlooker.evaluate("archfitEvents.length") == 0
    assert _toasts(onlooker) == []

    # Details, once ComfyUI's dialog is closed: one dialog, collapsed, Escape closes it.
    queued_by.keyboard.press("Escape")
    queued_by.wait_for_function("![...document.querySelectorAll('.p-dialog')].some((d) => "
                                "d.getClientRects().length > 0)")
    queued_by.screenshot(path=str(directory / "comfyui-toast.png"))
    _assert_png(directory / "comfyui-toast.png")
    queued_by.locator(".archfit-toast button", has_text="Details").click()
    assert queued_by.locator(".archfit-dialog").count() == 1
    assert queued_by.evaluate("document.querySelector('.archfit-dialog details').open") is False
    queued_by.screenshot(path=str(directory / "comfyui-details.png"))
    queued_by.keyboard.press("Escape")
    assert queued_by.locator(".archfit-dialog").count() == 0
    assert len(_toasts(queued_by)) == 1


def test_a_missing_file_is_left_to_comfyui(browser, comfyui):
    page = _open(browser, comfyui)
    error = _queue(page, failing_workflow("file-not-found"))
    assert error["exception_type"].endswith("FileNotFoundError"), error
    page.wait_for_timeout(GRACE_S * 1000 + 2000)  # the fallback has asked and been answered
    assert _comfyui_dialog(page) is not None
    assert _toasts(page) == []
    assert page.evaluate("archfitEvents.length") == 0


def test_preflight_stops_the_workflow_and_says_why_to_its_client(browser, comfyui, tmp_path):
    page = _open(browser, comfyui)
    other = _open(browser, comfyui)
    error = _queue(page, PREFLIGHT_WORKFLOW)
    assert error["exception_type"] == "ExecutionBlocked", error
    page.wait_for_selector(".archfit-toast")
    toasts = _toasts(page)
    stack = _failing_stack(comfyui["report"])
    assert [t["title"] for t in toasts] == [stack["title"]], toasts
    assert toasts[0]["cause"].startswith("archfit Pre-flight stopped the workflow"), toasts
    assert toasts[0]["command"] == stack["fix"]["commands"][0]
    assert _toasts(other) == [] and other.evaluate("archfitEvents.length") == 0

    # Kept with the prompt, for its client only.
    client = page.evaluate("app.api.clientId")
    stranger = other.evaluate("app.api.clientId")
    base = comfyui["url"] + "/archfit/diagnoses?prompt_id=" + error["prompt_id"]
    status, kept = _get(base + "&client_id=" + client)
    assert status == 200 and [p["kind"] for p in kept] == ["check"], kept
    assert _get(base + "&client_id=" + stranger) == (200, [])

    # The node shows the failing stack and its command first.
    page.keyboard.press("Escape")
    page.wait_for_timeout(500)
    drawn = page.evaluate("app.graph.getNodeById(1).archfitChecklist.map((l) => l.text)")
    assert drawn[0] == "✗ " + stack["title"], drawn
    assert drawn[1].strip() == stack["fix"]["commands"][0][:len(drawn[1].strip())], drawn
    directory = _screenshot_dir(tmp_path)
    page.screenshot(path=str(directory / "comfyui-preflight.png"))
    _assert_png(directory / "comfyui-preflight.png")
