"""The ComfyUI front-end extension (host_adapters/comfyui/web/archfit.js),
checked by node and run for real in headless Chromium driven by Playwright.

The page stands in for ComfyUI's: a temporary folder laid out as ComfyUI
serves it (scripts/app.js and scripts/api.js from web_standin/, the
extension at extensions/archfit/archfit.js, index.html at the root), served
by Python's http.server on 127.0.0.1. What the extension is fed is real: the
diagnosis and the check report come from the build's `archfit` command on
the demo site-packages, judged against an RTX 5090.

Needs Playwright for Python (PyPI `playwright`; its own browser download is
not used) and Debian's chromium (apt `chromium`): without them the browser
tests skip and say why (ARCHFIT_WEB_TESTS_REQUIRED=1 turns that into a
failure). ARCHFIT_CHROMIUM names another Chromium binary.
ARCHFIT_SCREENSHOT_DIR is where the screenshots go (default: the test's
tmp_path): standin-toast.png and standin-checklist.png. The docs show
screenshots of a real ComfyUI instead (tests/python/comfyui_real).
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import shutil
import subprocess
import threading
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
EXTENSION = REPO / "host_adapters" / "comfyui" / "web" / "archfit.js"
STANDIN = HERE / "web_standin"
NODE = os.environ.get("ARCHFIT_NODE") or "/usr/bin/node"

GPU = "RTX 5090"
ERROR_TEXT = ("torch.AcceleratorError: CUDA error: no kernel image is available for execution "
              "on the device")
# archfit.js waits this long after execution_error for the back end's push
# before it asks POST /archfit/explain (PUSH_GRACE_MS).
GRACE_S = 1.5
# What a page must be ready within; generous for a loaded 2-core machine.
TIMEOUT_MS = 15000
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
SKIP_MARK = "archfit-python-skip:"  # ctest's SKIP_REGULAR_EXPRESSION


def _unavailable(reason):
    """Skips (the browser is optional on a developer's machine) unless
    ARCHFIT_WEB_TESTS_REQUIRED says it must be there (CI)."""
    if os.environ.get("ARCHFIT_WEB_TESTS_REQUIRED") == "1":
        pytest.fail(reason + " (ARCHFIT_WEB_TESTS_REQUIRED=1)")
    pytest.skip(f"{SKIP_MARK} {reason}")


def _chromium():
    named = os.environ.get("ARCHFIT_CHROMIUM")
    candidates = [named] if named else [
        # The real binary first: /usr/bin/chromium is Debian's wrapper script.
        "/usr/lib/chromium/chromium", "/usr/bin/chromium",
        shutil.which("chromium"), shutil.which("chromium-browser")]
    for candidate in candidates:
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def _execution_error(message="CUDA error: no kernel image is available for execution on the "
                             "device\nCompile with `TORCH_USE_CUDA_DSA` to enable device-side "
                             "assertions.\n\n"):
    """An execution_error detail as ComfyUI's PromptExecutor sends it
    (ComfyUI's execution.py): traceback is traceback.format_tb()'s list."""
    return {
        "prompt_id": PROMPT_ID,
        "node_id": "3",
        "node_type": "KSampler",
        "executed": ["4", "5", "6", "7"],
        "exception_message": message,
        "exception_type": "torch.AcceleratorError",
        "traceback": [
            '  File "/ComfyUI/execution.py", line 496, in execute\n'
            "    output_data, output_ui, has_subgraph, has_pending_tasks = await get_output_data("
            "prompt_id, unique_id, obj, input_data_all, execution_block_cb=execution_block_cb, "
            "pre_execute_cb=pre_execute_cb, hidden_inputs=hidden_inputs)\n",
            '  File "/ComfyUI/nodes.py", line 1525, in sample\n'
            "    return common_ksampler(model, seed, steps, cfg, sampler_name, scheduler, positive, "
            "negative, latent_image, denoise=denoise)\n",
            '  File "/ComfyUI/comfy/sample.py", line 45, in sample\n'
            "    samples = sampler.sample(noise, positive, negative, cfg=cfg, latent_image=latent_image, "
            "start_step=start_step, last_step=last_step, force_full_denoise=force_full_denoise, "
            "denoise_mask=noise_mask, sigmas=sigmas, callback=callback, disable_pbar=disable_pbar, "
            "seed=seed)\n",
        ],
        "current_inputs": {"seed": [156680208700286], "steps": [20]},
        "current_outputs": ["4", "5", "6", "7"],
        "timestamp": 1767225600000,
    }


# ---------------------------------------------------------------- real data


def _archfit(cli, *arguments):
    return subprocess.run([str(cli), *arguments], capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def check_report(archfit_cli, demo_site):
    """`archfit check --json` of the demo site-packages on an RTX 5090: it
    fails (exit 1) because torch has no sm_120 image."""
    run = _archfit(archfit_cli, "check", "--json", "--gpu", GPU, "--site-packages", str(demo_site))
    assert run.returncode == 1, run.stderr
    report = json.loads(run.stdout)
    assert report["schema"] == "archfit.check/1"
    return report


PROMPT_ID = "5d6f0c0e-7a47-4d2b-9a53-0e4c1f3b2a11"


@pytest.fixture(scope="module")
def diagnosis_payload(archfit_cli, demo_site):
    """The "archfit.diagnosis" push payload the back end sends, made as the
    error handler makes it: {"kind", "diagnosis": archfit.diagnosis/1, "text":
    its plain text, "toast": the core's headline, "prompt_id"}. `--` ends
    --site-packages, which takes several directories."""
    from archfit import host

    common = ["--gpu", GPU, "--site-packages", str(demo_site), "--", ERROR_TEXT]
    as_json = _archfit(archfit_cli, "explain", "--json", *common)
    assert as_json.returncode == 0, as_json.stderr
    as_text = _archfit(archfit_cli, "explain", *common)
    assert as_text.returncode == 0, as_text.stderr
    diagnosis = json.loads(as_json.stdout)
    assert diagnosis["schema"] == "archfit.diagnosis/1" and diagnosis["recognised"]
    return {"kind": "diagnosis", "diagnosis": diagnosis, "text": as_text.stdout,
            "toast": host.diagnosis_toast(diagnosis), "prompt_id": PROMPT_ID}


# ------------------------------------------------------------- the browser


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The page, laid out as ComfyUI serves it, on http://127.0.0.1:<port>."""
    root = tmp_path_factory.mktemp("comfyui-web")
    shutil.copytree(STANDIN / "scripts", root / "scripts")
    (root / "extensions" / "archfit").mkdir(parents=True)
    shutil.copy(EXTENSION, root / "extensions" / "archfit" / "archfit.js")
    shutil.copy(STANDIN / "index.html", root / "index.html")

    class Handler(http.server.SimpleHTTPRequestHandler):
        # Module scripts load only with a JavaScript MIME type, whatever
        # /etc/mime.types says.
        extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map,
                          ".js": "text/javascript", ".html": "text/html"}

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Handler, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()
    thread.join(timeout=10)


@pytest.fixture(scope="module")
def browser():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("Playwright for Python is not installed (pip install playwright); "
                     "the front-end extension was not run in a browser")
    executable = _chromium()
    if executable is None:
        _unavailable("no Chromium (apt-get install chromium, or set ARCHFIT_CHROMIUM); "
                     "the front-end extension was not run in a browser")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, headless=True)
        yield launched
        launched.close()


@pytest.fixture
def page(browser, site):
    """A fresh stand-in ComfyUI page with the extension loaded and set up.
    Every test ends by checking that the page threw nothing and logged no
    error (an exception in an event handler lands there)."""
    context = browser.new_context(viewport={"width": 1100, "height": 700})
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    problems = []
    page.on("pageerror", lambda error: problems.append(f"uncaught: {error}"))
    page.on("console", lambda message: problems.append(f"console.{message.type}: {message.text}")
            if message.type in ("error", "warning") else None)
    page.goto(site + "/index.html")
    page.wait_for_function("window.standinReady || window.standinError")
    error = page.evaluate("window.standinError")
    assert error is None, f"the extension did not load: {error}"
    # setup() subscribed to both events; without it ComfyUI would not even
    # dispatch archfit.diagnosis ("Unknown message type").
    listened = page.evaluate("[...api.listened]")
    assert {"archfit.diagnosis", "execution_error"} <= set(listened), listened
    yield page
    context.close()
    assert problems == [], problems


@pytest.fixture
def screenshot_dir(tmp_path):
    directory = Path(os.environ.get("ARCHFIT_SCREENSHOT_DIR") or tmp_path)
    directory.mkdir(parents=True, exist_ok=True)
    return directory


def _assert_png(path):
    assert path.is_file(), f"no screenshot at {path}"
    data = path.read_bytes()
    # A PNG, and not an empty one (a 0x0 element screenshots to a few bytes).
    assert data.startswith(PNG_SIGNATURE), f"{path} is not a PNG"
    assert len(data) > 1000, f"{path} is only {len(data)} bytes"


def _receive(page, event, data):
    """Dispatches a server message the way ComfyUI's api does."""
    assert page.evaluate("([event, data]) => api.receive(event, data)", [event, data])


def _receive_in_turn(page, first, delay_ms, second):
    """Two server messages, the second delay_ms after the first."""
    page.evaluate("""async ([first, delay, second]) => {
      if (!api.receive(...first)) throw new Error(`nobody listens for ${first[0]}`);
      await new Promise((resolve) => setTimeout(resolve, delay));
      if (!api.receive(...second)) throw new Error(`nobody listens for ${second[0]}`);
    }""", [first, delay_ms, second])


# archfit's toasts on a page (ComfyUI's or the stand-in): what each shows,
# and the z-index of their area.
TOASTS_ON_PAGE = """[...document.querySelectorAll('.archfit-toast')].map((e) => ({
  title: e.querySelector('.archfit-title')?.textContent,
  cause: e.querySelector('.archfit-cause')?.textContent,
  command: e.querySelector('code')?.textContent ?? null,
  zIndex: Number(getComputedStyle(e.closest('.archfit-toasts')).zIndex),
}))"""


def _toasts(page):
    """archfit's toasts on the page; ComfyUI's own toast API is never used
    for them (it has no actions), so its list must stay empty."""
    assert page.evaluate("standin.toasts") == []
    return page.evaluate(TOASTS_ON_PAGE)


# ------------------------------------------------------------------- tests


def test_node_accepts_the_syntax(tmp_path):
    """The file parses as the ES module the browser loads. Node 20 with a
    .js name and no package.json would parse it as CommonJS, fail on
    `import`, and still exit 0, so it is checked under a .mjs name; a
    broken copy must be refused, or the check proves nothing."""
    if not (os.path.isfile(NODE) and os.access(NODE, os.X_OK)):
        _unavailable(f"no node at {NODE} (apt-get install nodejs, or set ARCHFIT_NODE)")
    module = tmp_path / "archfit.mjs"
    shutil.copy(EXTENSION, module)
    checked = subprocess.run([NODE, "--check", str(module)], capture_output=True, text=True,
                             timeout=60)
    assert checked.returncode == 0, checked.stderr
    broken = tmp_path / "broken.mjs"
    broken.write_text(EXTENSION.read_text() + "\nexport const = 1;\n")
    refused = subprocess.run([NODE, "--check", str(broken)], capture_output=True, text=True,
                             timeout=60)
    assert refused.returncode != 0 and "SyntaxError" in refused.stderr, refused


def test_a_pushed_diagnosis_shows_one_toast_with_the_title_and_the_command(page, diagnosis_payload,
                                                                          screenshot_dir):
    toast = diagnosis_payload["toast"]
    _receive(page, "archfit.diagnosis", diagnosis_payload)
    shown = _toasts(page)
    assert len(shown) == 1, shown
    # The core's headline: the GPU, the component with its local tag, the
    # check's one sentence of cause, and the one command.
    assert shown[0]["title"] == "RTX 5090 cannot run PyTorch 2.5.1+cu124", shown
    assert shown[0]["title"] == toast["title"]
    assert shown[0]["cause"] == toast["cause"] and "sm_120" in shown[0]["cause"], shown
    assert shown[0]["command"].startswith("pip install torch==2.15.0"), shown
    # Under ComfyUI's dialogs (PrimeVue's overlays start at 1100).
    assert shown[0]["zIndex"] < 1100, shown
    # No dialog until asked for.
    assert page.locator(".archfit-dialog").count() == 0
    path = screenshot_dir / "standin-toast.png"
    page.screenshot(path=str(path))
    _assert_png(path)

    # The same diagnosis again (the push and the explain answer of one
    # error, or the same failure re-run) adds no second toast.
    _receive(page, "archfit.diagnosis", diagnosis_payload)
    assert len(_toasts(page)) == 1, _toasts(page)
    # A different one does.
    other = dict(diagnosis_payload, toast=dict(toast, title="Another diagnosis"))
    _receive(page, "archfit.diagnosis", other)
    assert [t["title"] for t in _toasts(page)] == [toast["title"], "Another diagnosis"]


def test_details_open_one_dialog_collapsed_and_escape_closes_it(page, diagnosis_payload):
    _receive(page, "archfit.diagnosis", diagnosis_payload)
    page.locator(".archfit-toast button", has_text="Details").click()
    dialog = page.locator(".archfit-dialog")
    assert dialog.count() == 1 and dialog.is_visible()
    assert dialog.get_attribute("role") == "dialog"
    assert diagnosis_payload["toast"]["title"] in dialog.inner_text()
    # The full text is there, collapsed.
    assert page.evaluate("document.querySelector('.archfit-dialog details').open") is False
    assert diagnosis_payload["text"].strip().splitlines()[0] in page.evaluate(
        "document.querySelector('.archfit-dialog pre').textContent")
    # Asking again replaces it: one dialog at a time.
    page.locator(".archfit-toast button", has_text="Details").click()
    assert page.locator(".archfit-dialog").count() == 1
    page.keyboard.press("Escape")
    assert page.locator(".archfit-dialog").count() == 0
    # Escape with no dialog of archfit's open is left alone (ComfyUI's own).
    page.keyboard.press("Escape")
    assert len(_toasts(page)) == 1


def test_the_dialog_never_opens_over_comfyuis_own_dialog(page, diagnosis_payload):
    # A PrimeVue dialog as ComfyUI shows its execution error.
    page.evaluate("""() => {
      const d = document.createElement('div');
      d.className = 'p-dialog';
      d.textContent = 'KSampler: CUDA error';
      d.style.cssText = 'position:fixed;top:10px;left:10px;width:200px;height:80px';
      document.body.append(d);
    }""")
    show = "(payload) => archfitModule.showDetails(payload) === null"
    assert page.evaluate(show, diagnosis_payload) is True
    assert page.locator(".archfit-dialog").count() == 0
    page.evaluate("document.querySelector('.p-dialog').remove()")
    assert page.evaluate(show, diagnosis_payload) is False
    assert page.locator(".archfit-dialog").count() == 1


def test_an_error_archfit_does_not_recognise_shows_nothing(page, diagnosis_payload):
    """A FileNotFoundError is ComfyUI's to show: no toast, no dialog, whether
    pushed or asked for."""
    unrecognised = {
        "kind": "diagnosis", "text": "not-recognised", "toast": None,
        "diagnosis": dict(diagnosis_payload["diagnosis"], recognised=False,
                          category="not-recognised", component=None, fix=[], headline=None),
    }
    _route_kept(page, [])
    posted = _route_explain(page, unrecognised)
    _receive(page, "execution_error", _execution_error())
    page.wait_for_function("api.fetched.length > 1")
    page.wait_for_timeout(300)  # the answer has arrived and been weighed
    assert len(posted) == 1
    _receive(page, "archfit.diagnosis", unrecognised)
    assert _toasts(page) == []
    assert page.locator(".archfit-dialog").count() == 0


def _route_kept(page, payloads):
    """Answers GET /api/archfit/diagnoses (what the back end kept for a
    prompt) with `payloads`; returns the list the requests are recorded in."""
    asked = []

    def answer(route, request):
        asked.append(request.url)
        route.fulfill(status=200, json=payloads)

    page.route("**/archfit/diagnoses?*", answer)
    return asked


def _route_explain(page, payload):
    """Intercepts POST /api/archfit/explain (ComfyUI serves every route at
    /api/x too) and answers it with the real payload; returns the list the
    requests are recorded in."""
    posted = []

    def answer(route, request):
        posted.append({"method": request.method, "url": request.url,
                       "content_type": request.headers.get("content-type"),
                       "body": request.post_data_json})
        route.fulfill(status=200, json=payload)

    page.route("**/archfit/explain", answer)
    return posted


def test_execution_error_without_push_is_explained_by_post(page, diagnosis_payload):
    asked = _route_kept(page, [])
    answer = {k: v for k, v in diagnosis_payload.items() if k != "prompt_id"}
    posted = _route_explain(page, answer)
    detail = _execution_error()
    _receive(page, "execution_error", detail)
    page.wait_for_function("document.querySelectorAll('.archfit-toast').length > 0")

    # What the back end kept for the prompt first, asked with this page's client id.
    assert len(asked) == 1 and f"prompt_id={PROMPT_ID}" in asked[0], asked
    assert "client_id=" in asked[0], asked
    assert len(posted) == 1, posted
    request = posted[0]
    assert request["method"] == "POST"
    assert request["url"].endswith("/api/archfit/explain"), request
    assert request["content_type"].startswith("application/json"), request
    # What the route needs to rebuild the Python traceback text.
    for key in ("exception_type", "exception_message", "traceback"):
        assert request["body"][key] == detail[key], (key, request["body"])
    # It waited for the back end's push first (timers never fire early).
    fetched = page.evaluate("api.fetched")
    assert [f["route"].split("?")[0] for f in fetched] == ["/archfit/diagnoses",
                                                           "/archfit/explain"], fetched
    waited_ms = fetched[0]["at"] - page.evaluate("api.lastReceivedAt")
    assert waited_ms >= GRACE_S * 1000 - 50, f"asked after {waited_ms:.0f} ms"
    assert [t["title"] for t in _toasts(page)] == [diagnosis_payload["toast"]["title"]]


def test_a_diagnosis_kept_for_the_prompt_is_shown_without_a_post(page, diagnosis_payload):
    """A page that missed the push (reconnected, reloaded) gets what the
    back end kept for the prompt."""
    _route_kept(page, [diagnosis_payload])
    posted = _route_explain(page, diagnosis_payload)
    _receive(page, "execution_error", _execution_error())
    page.wait_for_function("document.querySelectorAll('.archfit-toast').length > 0")
    page.wait_for_timeout(300)
    assert posted == []
    assert len(_toasts(page)) == 1


def test_archfits_own_block_is_not_sent_to_explain(page):
    """Pre-flight's "Execution Blocked" was told when the node ran; with
    nothing kept (another client's prompt, a restart) it is not explained
    as an unknown error."""
    _route_kept(page, [])
    posted = _route_explain(page, {"toast": None})
    detail = dict(_execution_error(), exception_type="ExecutionBlocked",
                  exception_message="Execution Blocked: archfit: fails: PyTorch 2.5.1+cu124 …",
                  traceback=[])
    _receive(page, "execution_error", detail)
    page.wait_for_function("api.fetched.length > 0")
    page.wait_for_timeout(500)
    assert posted == []
    assert _toasts(page) == []


def test_push_within_grace_period_means_no_post(page, diagnosis_payload):
    posted = _route_explain(page, diagnosis_payload)
    # The push 200 ms after the error, timed in the page (a slow test process
    # between two calls must not stretch it past the grace period).
    _receive_in_turn(page, ("execution_error", _execution_error()), 200,
                     ("archfit.diagnosis", diagnosis_payload))
    # Past the grace period, with a margin: a request would have been made by now.
    page.wait_for_timeout(GRACE_S * 1000 + 1000)
    assert posted == [], posted
    assert page.evaluate("api.fetched") == []
    assert len(_toasts(page)) == 1, _toasts(page)


def test_push_just_before_execution_error_means_no_post(page, diagnosis_payload):
    """The back end diagnoses on a worker thread while ComfyUI's executor goes
    on to send execution_error, so the push can arrive first (both are
    queued with call_soon_threadsafe); that push answers the error too."""
    posted = _route_explain(page, diagnosis_payload)
    _receive_in_turn(page, ("archfit.diagnosis", diagnosis_payload), 20,
                     ("execution_error", _execution_error()))
    page.wait_for_timeout(GRACE_S * 1000 + 1000)
    assert posted == [], posted
    assert page.evaluate("api.fetched") == []
    assert len(_toasts(page)) == 1, _toasts(page)


DRAW_NODE = """async (report) => {
  // A LiteGraph node type as ComfyUI hands it to beforeRegisterNodeDef, with
  // an onExecuted and onDrawForeground of its own that must still run.
  class PreflightNode {
    constructor() { this.size = [300, 100]; this.flags = {}; this.calls = []; }
  }
  PreflightNode.prototype.setSize = function (size) { this.size = [...size]; this.calls.push("setSize"); };
  PreflightNode.prototype.setDirtyCanvas = function (fg, bg) { this.calls.push(`dirty ${fg} ${bg}`); };
  PreflightNode.prototype.onExecuted = function () { this.calls.push("own onExecuted"); };
  PreflightNode.prototype.onDrawForeground = function () { this.calls.push("own onDrawForeground"); };
  PreflightNode.prototype.addWidget = function (type, name) { (this.widgets ??= []).push(name); return {type, name}; };
  class OtherNode {}
  await standin.registerNodeDef(PreflightNode, {name: "ArchfitPreflight", display_name: "Pre-flight"});
  await standin.registerNodeDef(OtherNode, {name: "KSampler"});

  const node = new PreflightNode();
  node.onExecuted({archfit_report: [report], text: ["archfit check: fails"]});

  // Drawn as LiteGraph draws a node: the body, then the title above it,
  // then onDrawForeground in node coordinates.
  const canvas = document.getElementById("graph");
  const ctx = canvas.getContext("2d");
  ctx.fillStyle = "#202020";
  ctx.fillRect(0, 0, canvas.width, canvas.height);
  const [x, y, title] = [20, 50, 30];
  ctx.fillStyle = "#353535";
  ctx.fillRect(x, y, node.size[0], node.size[1]);
  ctx.fillStyle = "#222";
  ctx.fillRect(x, y - title, node.size[0], title);
  ctx.fillStyle = "#999";
  ctx.font = "14px sans-serif";
  ctx.fillText("Pre-flight (archfit)", x + 10, y - 10);
  const drawn = [];
  const fillText = ctx.fillText.bind(ctx);
  ctx.fillText = (text, tx, ty, ...rest) => {
    drawn.push({text, x: tx, y: ty, fillStyle: ctx.fillStyle, font: ctx.font});
    return fillText(text, tx, ty, ...rest);
  };
  ctx.save();
  ctx.translate(x, y);
  node.onDrawForeground(ctx);
  ctx.restore();

  const collapsed = new PreflightNode();
  collapsed.onExecuted({archfit_report: [report]});
  collapsed.flags.collapsed = true;
  const before = drawn.length;
  collapsed.onDrawForeground(ctx);
  ctx.fillText = fillText;
  return {
    drawn, size: node.size, calls: node.calls, widgets: node.widgets ?? [],
    drawnWhenCollapsed: drawn.length - before,
    otherPatched: "onExecuted" in OtherNode.prototype || "onDrawForeground" in OtherNode.prototype,
  };
}"""


def _rgb(style):
    """A canvas fillStyle as it reads back ("#rrggbb") -> (r, g, b)."""
    assert style.startswith("#") and len(style) == 7, style
    return tuple(int(style[i:i + 2], 16) for i in (1, 3, 5))


def _is_red(style):
    r, g, b = _rgb(style)
    return r > 1.5 * g and r > 1.5 * b


def _is_green(style):
    r, g, b = _rgb(style)
    return g > 1.5 * r and g > 1.5 * b


def test_preflight_node_draws_the_failing_stack_and_its_fix_first(page, check_report,
                                                                   screenshot_dir):
    result = page.evaluate(DRAW_NODE, check_report)
    texts = [d["text"] for d in result["drawn"]]
    failing = [s for s in check_report["stacks"] if s["blocks"]]
    running = [s for s in check_report["stacks"] if not s["blocks"]]
    assert failing and running, check_report["stacks"]

    # First the failing stack by the core's title, in red, its command under it.
    first = result["drawn"][0]
    assert first["text"] == "✗ RTX 5090 cannot run PyTorch 2.5.1+cu124", texts
    assert first["text"] == "✗ " + failing[0]["title"]
    assert _is_red(first["fillStyle"]), first
    assert texts[1].startswith("  pip install torch==2.15.0"), texts
    # Then one line for what runs, in green; not a row per library.
    last = result["drawn"][-1]
    assert last["text"] == (f"✓ {len(running)} other {'stack runs' if len(running) == 1 else 'stacks run'}"
                            " on GeForce RTX 5090 (sm_120)"), texts
    assert _is_green(last["fillStyle"]), last
    assert not any("nvidia-" in text for text in texts), texts

    # The node grew to hold the lines, and every line is inside it.
    width, height = result["size"]
    assert width >= 300 and height > 100, result["size"]
    for line in result["drawn"]:
        assert 0 < line["x"] < width and 0 < line["y"] <= height, (line, result["size"])
    # The full list is a details view: a button on the node.
    assert result["widgets"] == ["details"], result["widgets"]
    # The node type's own handlers still run; the canvas is asked to redraw.
    assert "own onExecuted" in result["calls"] and "own onDrawForeground" in result["calls"]
    assert "dirty true true" in result["calls"], result["calls"]
    assert result["drawnWhenCollapsed"] == 0
    # Other node types are left alone.
    assert result["otherPatched"] is False

    path = screenshot_dir / "standin-checklist.png"
    page.locator("#graph").screenshot(path=str(path))
    _assert_png(path)


def test_on_a_gpu_everything_runs_on_the_node_says_so_in_one_line(page, archfit_cli, demo_site):
    run = _archfit(archfit_cli, "check", "--json", "--gpu", "H100", "--site-packages",
                   str(demo_site))
    report = json.loads(run.stdout)
    assert run.returncode == 0, run.stdout
    result = page.evaluate(DRAW_NODE, report)
    texts = [d["text"] for d in result["drawn"]]
    assert texts == [f"✓ All {len(report['stacks'])} stacks run on {report['devices'][0]['name']} "
                     f"(sm_{report['devices'][0]['sm']})"], texts


def test_without_a_gpu_the_checklist_marks_nothing_as_passing_or_failing(page, archfit_cli,
                                                                        demo_site):
    run = _archfit(archfit_cli, "check", "--json", "--site-packages", str(demo_site))
    report = json.loads(run.stdout)
    if report["devices"]:
        pytest.skip("this machine has a GPU: the no-GPU path needs one without")
    assert run.returncode == 2, run.stderr
    result = page.evaluate(DRAW_NODE, report)
    texts = [d["text"] for d in result["drawn"]]
    assert texts[0] == "? No GPU to judge against: nothing was judged", texts
    assert any("ARCHFIT_GPU" in text for text in texts), texts
    for line in result["drawn"]:
        assert not _is_red(line["fillStyle"]) and not _is_green(line["fillStyle"]), line
    assert not any(text.startswith(("✗", "✓")) for text in texts), texts
