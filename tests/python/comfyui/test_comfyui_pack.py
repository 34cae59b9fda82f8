"""The archfit node pack loaded the way ComfyUI loads it (comfyui_standin.py): what
it registers, its nodes run with the inputs they declare, its start-up log
block, its error handler fed ComfyUI's real log records, its routes through
an aiohttp app, and a broken or missing library."""

import asyncio
import json
import logging
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from comfyui_standin import BINDING_DIR, REPO, ExecutionBlocker

NO_KERNEL_IMAGE = "CUDA error: no kernel image is available for execution on the device"


def comfyui_traceback(site):
    """What ComfyUI logs after "!!! Exception during processing !!!": the
    formatted traceback of a node whose xformers call failed."""
    return textwrap.dedent("""\
        Traceback (most recent call last):
          File "/home/me/ComfyUI/execution.py", line 349, in execute
            output_data, output_ui, has_subgraph = get_output_data(obj, input_data_all)
          File "{site}/xformers/ops/fmha/__init__.py", line 306, in memory_efficient_attention
            return _memory_efficient_attention(
          File "{site}/torch/_ops.py", line 1116, in __call__
            return self._op(*args, **kwargs)
        torch.AcceleratorError: {error}
        """).format(site=site, error=NO_KERNEL_IMAGE)


def use_site(pack, site):
    """Points the pack's check at `site` instead of the test's own Python."""
    pack.environment.site_packages = lambda: [str(site)]


def wait_for_startup_check(pack):
    thread = pack.timings.get("check_thread")
    assert thread is not None, "the import did not start the check"
    thread.join(timeout=30)
    assert not thread.is_alive()


def test_the_pack_loads_like_comfyui_and_registers_its_nodes(comfyui):
    pack = comfyui.load()
    assert set(pack.NODE_CLASS_MAPPINGS) == {"ArchfitPreflight", "ArchfitExplainLastError"}
    assert pack.NODE_DISPLAY_NAME_MAPPINGS["ArchfitPreflight"] == "archfit Pre-flight"
    assert os.path.isfile(os.path.join(comfyui.pack_dir, pack.WEB_DIRECTORY, "archfit.js"))
    for cls in pack.NODE_CLASS_MAPPINGS.values():
        assert cls.CATEGORY == "archfit"
        assert hasattr(cls, cls.FUNCTION)
        inputs = cls.INPUT_TYPES()
        assert "required" in inputs
        assert len(cls.RETURN_TYPES) == len(getattr(cls, "RETURN_NAMES", cls.RETURN_TYPES))
    preflight = pack.NODE_CLASS_MAPPINGS["ArchfitPreflight"].INPUT_TYPES()
    assert preflight["required"]["stop_on_failure"][0] == "BOOLEAN"
    # The passthrough takes any link: the wildcard type equals every type.
    assert preflight["optional"]["passthrough"][0] == "IMAGE"
    # Routes went on ComfyUI's server.
    paths = {route.path for route in comfyui.server.routes}
    assert {"/archfit/report", "/archfit/explain"} <= paths


def test_the_import_is_fast_never_imports_torch_and_logs_the_block(comfyui, tmp_path,
                                                                    monkeypatch, caplog,
                                                                    demo_site):
    # A torch that records being imported, first on sys.path.
    trap = tmp_path / "trap"
    (trap / "torch").mkdir(parents=True)
    flag = tmp_path / "torch-was-imported"
    (trap / "torch" / "__init__.py").write_text("open(%r, 'w').close()\n" % str(flag))
    monkeypatch.syspath_prepend(str(trap))
    monkeypatch.setattr("site.getsitepackages", lambda: [str(demo_site)])
    caplog.set_level(logging.INFO, logger="archfit")
    pack = comfyui.load()
    assert pack.timings["import_seconds"] < 0.2, pack.timings
    wait_for_startup_check(pack)
    assert not flag.exists(), "the pack imported torch"
    block = [r.getMessage() for r in caplog.records if r.getMessage().startswith("[archfit] ")]
    assert any("GPU GeForce RTX 5090 (sm_120, simulated)" in line for line in block), block
    # The core's one line, then its first fix and command.
    assert any(line.startswith("[archfit] fails: PyTorch 2.5.1+cu124 has no image for "
                               "GeForce RTX 5090 (sm_120); run: pip install torch==2.15.0")
               for line in block), block
    assert any(line.startswith("[archfit] fix: Install torch 2.15.0+cu132") for line in block), block
    assert "[archfit]   pip install torch==2.15.0" in block, block


def test_preflight_fails_on_an_rtx_5090_and_stops_the_workflow_when_asked(comfyui, demo_site,
                                                                          tmp_path, monkeypatch):
    monkeypatch.setenv("ARCHFIT_CACHE_DIR", str(tmp_path / "cache"))
    pack = comfyui.load()
    use_site(pack, demo_site)
    node = pack.NODE_CLASS_MAPPINGS["ArchfitPreflight"]()
    run = getattr(node, node.FUNCTION)
    out = run(stop_on_failure=False, passthrough="latent")
    text, fits, passthrough = out["result"]
    assert fits is False
    assert passthrough == "latent"
    assert "PyTorch 2.5.1+cu124" in text
    assert out["ui"]["text"] == [text]
    assert out["ui"]["archfit_report"][0]["verdict"] == "fails"
    json.dumps(out["ui"])  # the ui dict goes to the browser as JSON

    comfyui.server.client_id = "tab-1"
    comfyui.server.last_prompt_id = "prompt-7"
    blocked = run(stop_on_failure=True, passthrough="latent")
    assert all(isinstance(value, ExecutionBlocker) for value in blocked["result"])
    # ComfyUI will show only "Execution Blocked": the client that queued the
    # prompt is told why, as the check's finding, and it is kept with the prompt.
    told = [data for event, data in comfyui.server.sent if event == "archfit.diagnosis"]
    assert len(told) == 1 and comfyui.server.recipients == ["tab-1"], comfyui.server.sent
    assert told[0]["kind"] == "check" and told[0]["prompt_id"] == "prompt-7"
    assert told[0]["toast"]["title"] == "RTX 5090 cannot run PyTorch 2.5.1+cu124", told[0]
    assert told[0]["toast"]["cause"].startswith("archfit Pre-flight stopped the workflow"), told
    assert told[0]["toast"]["command"].startswith("pip install torch==2.15.0"), told
    assert pack.prompt_store.of_prompt("prompt-7", "tab-1") == told
    message = blocked["result"][0].message
    assert message.startswith("archfit: fails: PyTorch 2.5.1+cu124 has no image for "
                              "GeForce RTX 5090 (sm_120); run: pip install torch==2.15.0"), message
    assert "Fix: Install torch 2.15.0+cu132" in message, message
    # A queue of prompts does not rescan: the second run read no library.
    scan = pack.preflight.latest().document["scan"]
    assert scan["files"] > 0 and scan["reused"] == scan["files"], scan


def test_without_a_gpu_the_block_and_the_node_say_how_to_ask_about_one(comfyui, demo_site,
                                                                        monkeypatch, caplog):
    import ctypes

    try:
        ctypes.CDLL("libcuda.so.1")
        pytest.skip("this machine has an NVIDIA driver: the no-GPU path needs one without")
    except OSError:
        pass
    monkeypatch.delenv("ARCHFIT_GPU")
    monkeypatch.setattr("site.getsitepackages", lambda: [str(demo_site)])
    caplog.set_level(logging.INFO, logger="archfit")
    pack = comfyui.load()
    wait_for_startup_check(pack)
    block = [r.getMessage() for r in caplog.records if r.getMessage().startswith("[archfit] ")]
    assert "[archfit] GPU none found; driver not found" in block, block
    assert ("[archfit] unknown: no GPU to judge against, so nothing was judged: no NVIDIA "
            "driver is installed here (libcuda.so.1 cannot be loaded)") in block, block
    assert any('set ARCHFIT_GPU (e.g. "RTX 5090")' in line for line in block), block
    node = pack.NODE_CLASS_MAPPINGS["ArchfitPreflight"]()
    text, fits, passthrough = node.run(stop_on_failure=True, passthrough=1)["result"]
    # Nothing is known to fail, so nothing is blocked; but it does not "fit" either.
    assert (fits, passthrough) == (False, 1)
    assert "unknown: no GPU to judge against" in text and "ARCHFIT_GPU" in text, text
    assert "? PyTorch 2.5.1+cu124  unknown" in text, text  # the core's text: not judged
    assert "✓" not in text, text


def test_preflight_passes_on_a_gpu_the_environment_fits(comfyui, demo_site, monkeypatch):
    monkeypatch.setenv("ARCHFIT_GPU", "H100")
    pack = comfyui.load()
    use_site(pack, demo_site)
    node = pack.NODE_CLASS_MAPPINGS["ArchfitPreflight"]()
    out = getattr(node, node.FUNCTION)(stop_on_failure=True, passthrough=42)
    assert out["result"][1] is True
    assert out["result"][2] == 42


def test_the_error_handler_diagnoses_comfyuis_error_records_and_pushes_them(comfyui, demo_site):
    pack = comfyui.load()
    use_site(pack, demo_site)
    pack.preflight.run()  # the environment errors are weighed against
    handler = pack.error_handler._installed
    assert handler in logging.getLogger().handlers
    # Exactly what ComfyUI's executor logs: two ERROR records on the root
    # logger, while the prompt of client "tab-1" runs.
    comfyui.server.client_id = "tab-1"
    comfyui.server.last_prompt_id = "prompt-1"
    logging.error("!!! Exception during processing !!! %s", NO_KERNEL_IMAGE)
    comfyui.server.client_id = "tab-2"  # the traceback belongs to the error line before it
    comfyui.server.last_prompt_id = "prompt-2"
    logging.error(comfyui_traceback("/home/me/ComfyUI/venv/lib/python3.12/site-packages"))
    handler.wait()
    events = [data for event, data in comfyui.server.sent if event == "archfit.diagnosis"]
    assert len(events) == 1, comfyui.server.sent
    assert comfyui.server.recipients == ["tab-1"], "only the client that queued the prompt"
    # What the toast shows: the core's headline, and the prompt it is about.
    # The traceback names xformers, which the check does not confirm as the
    # cause; what the check finds failing, PyTorch, is the title and the command.
    assert events[0]["diagnosis"]["environment"]["verdict"] != "confirms"
    assert events[0]["toast"]["title"] == "RTX 5090 cannot run PyTorch 2.5.1+cu124", events[0]
    assert events[0]["toast"]["command"].startswith("pip install torch==2.15.0"), events[0]
    assert events[0]["prompt_id"] == "prompt-1"
    # Kept with that prompt, for its client only.
    assert pack.prompt_store.of_prompt("prompt-1", "tab-1") == [events[0]]
    assert pack.prompt_store.of_prompt("prompt-1", "tab-2") == []
    diagnosis = events[0]["diagnosis"]
    assert diagnosis["category"] == "no-kernel-image"
    assert diagnosis["component"]["name"] == "xformers"
    assert diagnosis["environment"]["source"] == "report_json"
    assert "sm_120" in events[0]["text"]
    comfyui.server.client_id = "tab-1"  # the Explain node, in tab-1's next prompt
    node = pack.NODE_CLASS_MAPPINGS["ArchfitExplainLastError"]()
    out = getattr(node, node.FUNCTION)()
    assert out["result"][0] == events[0]["text"]


def test_an_error_line_without_its_traceback_is_diagnosed_alone(comfyui):
    pack = comfyui.load()
    comfyui.server.client_id = "tab-1"
    handler = pack.error_handler._installed
    logging.error("!!! Exception during processing !!! CUDA error: out of memory")
    logging.error("some other record")  # not a traceback: the line stands alone
    time.sleep(pack.error_handler.PAIRING_SECONDS * 2)
    handler.wait()
    events = [data for event, data in comfyui.server.sent if event == "archfit.diagnosis"]
    assert [e["diagnosis"]["category"] for e in events] == ["out-of-memory"]


def test_an_error_archfit_does_not_recognise_is_left_to_comfyui(comfyui):
    pack = comfyui.load()
    comfyui.server.client_id = "tab-1"
    comfyui.server.last_prompt_id = "prompt-9"
    handler = pack.error_handler._installed
    logging.error("!!! Exception during processing !!! [Errno 2] No such file or directory: "
                  "'/models/checkpoints/missing.safetensors'")
    logging.error('Traceback (most recent call last):\n  File "/ComfyUI/nodes.py", line 580, in '
                  'load_checkpoint\n    sd = load(path)\nFileNotFoundError: [Errno 2] No such file '
                  "or directory: '/models/checkpoints/missing.safetensors'\n")
    handler.wait()
    assert comfyui.server.sent == []
    assert pack.prompt_store.of_prompt("prompt-9", "tab-1") == []
    # The Explain node still has it, for whoever asks.
    latest = pack.error_handler.latest("tab-1")
    assert latest is not None and latest["diagnosis"]["recognised"] is False
    # Another client asking gets nothing of tab-1's.
    assert pack.error_handler.latest("tab-2") is None
    comfyui.server.client_id = "tab-2"
    node = pack.NODE_CLASS_MAPPINGS["ArchfitExplainLastError"]()
    assert getattr(node, node.FUNCTION)()["result"][0].startswith("No execution error")
    comfyui.server.client_id = "tab-1"
    assert getattr(node, node.FUNCTION)()["result"][0] == latest["text"]


def test_a_prompt_queued_without_a_client_id_is_told_to_no_one(comfyui):
    pack = comfyui.load()
    comfyui.server.client_id = None  # queued through the HTTP API alone
    logging.error("!!! Exception during processing !!! %s", NO_KERNEL_IMAGE)
    pack.error_handler._installed.wait()
    assert comfyui.server.sent == []


def test_an_unrelated_error_record_is_ignored(comfyui):
    pack = comfyui.load()
    logging.error("Failed to validate prompt for output 9")
    pack.error_handler._installed.wait()
    assert comfyui.server.sent == []


def _call(routes, method, path, **kwargs):
    """Runs one request against an aiohttp app holding `routes`."""
    from aiohttp import web
    from aiohttp.test_utils import TestClient, TestServer

    async def go():
        app = web.Application()
        app.add_routes(routes)
        async with TestClient(TestServer(app)) as client:
            response = await client.request(method, path, **kwargs)
            return response.status, await response.json()

    return asyncio.run(go())


def test_the_routes_report_and_explain(comfyui, demo_site):
    pack = comfyui.load()
    use_site(pack, demo_site)
    routes = comfyui.server.routes
    wait_for_startup_check(pack)  # the start-up check, of this test's own Python
    status, report = _call(routes, "POST", "/archfit/report")  # checks again: the demo site
    assert status == 200
    assert report["schema"] == "archfit.check/1" and report["verdict"] == "fails"
    checked = pack.preflight.latest()
    # A GET gives that check's document and never checks again, ?refresh=1 or
    # not: a page elsewhere can make a browser send one.
    for path in ("/archfit/report", "/archfit/report?refresh=1"):
        status, again = _call(routes, "GET", path)
        assert status == 200 and again == report
        assert pack.preflight.latest() is checked

    status, payload = _call(routes, "POST", "/archfit/explain", json={"text": NO_KERNEL_IMAGE})
    assert status == 200
    assert payload["diagnosis"]["category"] == "no-kernel-image"
    assert payload["toast"]["title"] == "RTX 5090 cannot run PyTorch 2.5.1+cu124", payload["toast"]
    assert payload["diagnosis"]["environment"]["verdict"] == "confirms"

    # ComfyUI's execution_error detail: frames as traceback.format_tb() lists them.
    detail = {
        "exception_type": "torch.AcceleratorError",
        "exception_message": NO_KERNEL_IMAGE,
        "traceback": ['  File "/v/lib/python3.12/site-packages/xformers/ops/fmha/__init__.py", '
                      'line 306, in memory_efficient_attention\n    return f()\n'],
    }
    status, payload = _call(routes, "POST", "/archfit/explain", json=detail)
    assert status == 200
    assert payload["diagnosis"]["component"]["name"] == "xformers"


def test_a_prompts_diagnoses_go_only_to_the_client_that_queued_it(comfyui):
    pack = comfyui.load()
    pack.prompt_store._reset_for_tests()
    payload = {"kind": "diagnosis", "toast": {"title": "t"}, "text": "/home/alice/ComfyUI …"}
    pack.prompt_store.keep("prompt-1", "alice", payload)
    pack.prompt_store.keep("prompt-1", "mallory", {"kind": "forged"})  # never mixed in
    routes = comfyui.server.routes
    status, kept = _call(routes, "GET", "/archfit/diagnoses?prompt_id=prompt-1&client_id=alice")
    assert (status, kept) == (200, [payload])
    for query in ("prompt_id=prompt-1&client_id=mallory", "prompt_id=prompt-2&client_id=alice"):
        status, kept = _call(routes, "GET", "/archfit/diagnoses?" + query)
        assert (status, kept) == (200, []), query
    status, body = _call(routes, "GET", "/archfit/diagnoses?prompt_id=prompt-1")
    assert status == 400 and "client_id" in body["error"]
    # Bounded like ComfyUI's history: the oldest prompt goes first.
    for number in range(pack.prompt_store.MAX_PROMPTS + 1):
        pack.prompt_store.keep("p%d" % number, "alice", payload)
    assert pack.prompt_store.of_prompt("p0", "alice") == []
    assert pack.prompt_store.of_prompt("p%d" % pack.prompt_store.MAX_PROMPTS, "alice") == [payload]
    pack.prompt_store._reset_for_tests()


@pytest.mark.parametrize("body, words", [
    (b"not json", "must be JSON"),
    (b"[1, 2]", "JSON object"),
    (b'{"text": ""}', "non-empty string"),
    (b'{"text": "x", "traceback": 3}', '"traceback"'),
])
def test_a_bad_explain_request_is_a_400_saying_what_is_wrong(comfyui, body, words):
    comfyui.load()
    status, payload = _call(comfyui.server.routes, "POST", "/archfit/explain", data=body,
                            headers={"Content-Type": "application/json"})
    assert status == 400
    assert words in payload["error"]


def test_explain_limits_the_body_while_reading_it(comfyui):
    """A chunked body has no Content-Length: 5 MB is refused all the same."""
    pack = comfyui.load()

    async def chunks():
        text = b'{"text": "' + b"x" * (1 << 20)
        for _ in range(5):
            yield text

    status, payload = _call(comfyui.server.routes, "POST", "/archfit/explain", data=chunks(),
                            headers={"Content-Type": "application/json"})
    assert status == 413, payload
    assert str(pack.routes.MAX_TEXT_BYTES) in payload["error"]


def test_explain_refuses_json_nested_too_deep_with_a_400(comfyui):
    pack = comfyui.load()
    deep = b"[" * 100000 + b"]" * 100000
    status, payload = _call(comfyui.server.routes, "POST", "/archfit/explain", data=deep,
                            headers={"Content-Type": "application/json"})
    assert status == 400, payload
    assert "nests deeper than %d" % pack.routes.MAX_JSON_DEPTH in payload["error"]
    # Brackets inside strings are text, not nesting.
    assert pack.routes.json_depth('{"text": "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\\"["}') == 1


@pytest.mark.parametrize("headers", [
    {"Origin": "http://evil.example"},
    {"Origin": "null"},
    {"Sec-Fetch-Site": "cross-site"},
])
def test_a_post_another_site_sends_is_refused(comfyui, headers):
    comfyui.load()
    for path, body in (("/archfit/report", None), ("/archfit/explain", {"text": NO_KERNEL_IMAGE})):
        status, payload = _call(comfyui.server.routes, "POST", path, json=body, headers=headers)
        assert status == 403, (path, payload)
        assert "refused" in payload["error"]


def test_behind_a_reverse_proxy_the_pages_own_post_is_served(comfyui):
    """The proxy forwards to a Host that is not the public name the page's
    Origin carries; the browser still says same-origin."""
    pack = comfyui.load()
    request = type("Request", (), {"headers": {
        "Host": "10.0.0.5:8188", "Origin": "https://comfy.example.net",
        "Sec-Fetch-Site": "same-origin"}})()
    pack.routes.refuse_other_sites(request)  # no 403
    request.headers["Host"] = "127.0.0.1:8188"  # the same mismatch on this machine is refused
    with pytest.raises(pack.routes.BadRequest):
        pack.routes.refuse_other_sites(request)


def test_a_post_from_comfyuis_own_page_is_served(comfyui, demo_site):
    pack = comfyui.load()
    use_site(pack, demo_site)

    async def go():
        from aiohttp import web
        from aiohttp.test_utils import TestClient, TestServer

        app = web.Application()
        app.add_routes(comfyui.server.routes)
        async with TestClient(TestServer(app)) as client:
            origin = "http://%s:%d" % (client.host, client.port)
            response = await client.post("/archfit/explain", json={"text": NO_KERNEL_IMAGE},
                                         headers={"Origin": origin,
                                                  "Sec-Fetch-Site": "same-origin"})
            return response.status

    assert asyncio.run(go()) == 200


def _run_pack_in_a_fresh_python(pack_dir, environment, binding_on_path=True, then=""):
    """Imports the pack in a new Python with the stand-in ComfyUI, runs its
    two nodes and `then`; returns the combined output and the exit code.
    Without binding_on_path the pack finds the binding by itself."""
    script = textwrap.dedent("""\
        import logging, sys
        logging.basicConfig(level=logging.INFO, format="%(levelname)s %(message)s")
        sys.path[:0] = {paths!r}
        import comfyui_standin, types
        server = comfyui_standin.StandInPromptServer()
        sys.modules["server"] = types.SimpleNamespace(PromptServer=types.SimpleNamespace(instance=server))
        sys.modules["folder_paths"] = types.SimpleNamespace(get_folder_paths=lambda kind: [])
        pack = comfyui_standin.load_like_comfyui({pack!r})
        node = pack.NODE_CLASS_MAPPINGS["ArchfitPreflight"]()
        print("NODE:", node.run(stop_on_failure=False)["result"][0])
        print("EXPLAIN:", pack.NODE_CLASS_MAPPINGS["ArchfitExplainLastError"]().run()["result"][0])
        """).format(paths=[os.path.dirname(__file__)] + ([BINDING_DIR] if binding_on_path else []),
                    pack=str(pack_dir)) + textwrap.dedent(then)
    env = dict(os.environ, **environment)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            env=env, timeout=60)
    return result.stdout + result.stderr, result.returncode


def test_a_missing_library_is_logged_and_comfyui_keeps_running(comfyui):
    output, code = _run_pack_in_a_fresh_python(
        comfyui.pack_dir, {"ARCHFIT_LIBRARY": "/nonexistent/libarchfit.so.0"})
    assert code == 0, output
    assert "WARNING [archfit]" in output and "LibraryError" in output, output
    assert "NODE: archfit cannot check this ComfyUI" in output, output
    assert "archfit is not working here" in output, output


def test_the_pack_writes_nothing_into_its_folder(comfyui):
    # A pack folder may be read-only (a system install, a container image);
    # root here cannot make one, so check the pack never writes there.
    def listing():
        return sorted(os.path.relpath(os.path.join(d, f), comfyui.pack_dir)
                      for d, _, files in os.walk(comfyui.pack_dir) for f in files)

    before = listing()
    output, code = _run_pack_in_a_fresh_python(comfyui.pack_dir, {"PYTHONDONTWRITEBYTECODE": "1"})
    assert code == 0, output
    assert "NODE: " in output and "Traceback" not in output, output
    assert listing() == before


def test_archfit_install_comfyui_gives_a_pack_that_works_with_nothing_installed(tmp_path,
                                                                             demo_site):
    cli = os.environ.get("ARCHFIT_CLI", os.path.join(REPO, "build", "sdk", "archfit"))
    if not os.path.exists(cli):
        pytest.skip("the archfit command is not built at %s" % cli)
    comfyui_root = tmp_path / "ComfyUI"
    (comfyui_root / "custom_nodes").mkdir(parents=True)
    (comfyui_root / "main.py").write_text("# ComfyUI\n")
    installed = subprocess.run([cli, "install", "comfyui", str(comfyui_root)],
                               capture_output=True, text=True, timeout=60)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    pack_dir = comfyui_root / "custom_nodes" / "comfyui-archfit"
    # No binding on sys.path, no ARCHFIT_LIBRARY, no ARCHFIT_KB_DIR: the
    # vendored copies must be found from inside the pack.
    environment = {"ARCHFIT_GPU": "RTX 5090", "ARCHFIT_LIBRARY": "", "ARCHFIT_KB_DIR": ""}
    output, code = _run_pack_in_a_fresh_python(
        pack_dir, environment, binding_on_path=False,
        then="""
            import archfit
            print("BINDING:", archfit.__file__)
            print("LIBRARY:", archfit.library_path())
            print("SITE:", pack.environment.site_packages())
            pack.environment.site_packages = lambda: [%r]
            print("DEMO:", node.run(stop_on_failure=False)["result"][0])
            """ % str(demo_site))
    assert code == 0, output
    vendor = str(pack_dir / "vendor" / "python" / "archfit")
    assert "BINDING: " + vendor in output, output
    assert "LIBRARY: " + vendor in output, output
    demo = output[output.index("DEMO:"):]
    assert "PyTorch 2.5.1+cu124" in demo and "no-image" in demo, output


def test_the_pack_folder_asks_pip_for_nothing_that_is_not_published():
    """ComfyUI-Manager runs `pip install -r requirements.txt` and the Comfy
    Registry reads pyproject.toml's dependencies; archfit is not on PyPI, so
    naming it would fail the install. The pack carries archfit inside it."""
    import tomllib

    pack = os.path.join(REPO, "host_adapters", "comfyui")
    with open(os.path.join(pack, "requirements.txt")) as f:
        wanted = [line.strip() for line in f if line.strip() and not line.startswith("#")]
    assert wanted == []
    with open(os.path.join(pack, "pyproject.toml"), "rb") as f:
        project = tomllib.load(f)["project"]
    assert project["dependencies"] == []


def test_the_registry_metadata_carries_the_projects_version(project_version):
    """The Comfy Registry reads pyproject.toml as committed, so its version is
    the one copy the build cannot generate: it must say CMakeLists.txt's."""
    import re

    text = (Path(REPO) / "host_adapters" / "comfyui" / "pyproject.toml").read_text()
    match = re.search(r'^version = "([^"]+)"', text, re.MULTILINE)
    assert match and match.group(1) == project_version, (match and match.group(1), project_version)
