"""archfit for ComfyUI: a pre-flight check and an error handler for
"CUDA error: no kernel image is available for execution on the device" and
its siblings.

Loaded by ComfyUI from custom_nodes/<this folder>/__init__.py. The import
itself does little and cannot fail: the nodes are registered, the error
handler is added to the root logger, the routes go on ComfyUI's server, and
the check of this process runs in a background thread that writes a short
block to ComfyUI's log when it is done. torch is never imported. When the
archfit library is missing or broken the nodes still load and say why.
"""

import logging
import threading
import time

from . import binding, error_handler, preflight

WEB_DIRECTORY = "./web"
NODE_CLASS_MAPPINGS = {}
NODE_DISPLAY_NAME_MAPPINGS = {}

_log = logging.getLogger("archfit")
# Seconds the import took, and the background check (for the log and tests).
timings = {}


def _prompt_server():
    from server import PromptServer  # ComfyUI's; absent outside it

    return PromptServer.instance


def _running_prompt():
    # ComfyUI's prompt worker sets last_prompt_id, and its executor client_id,
    # to the running prompt's before the prompt's nodes run.
    server = _prompt_server()
    return error_handler.RunningPrompt(getattr(server, "client_id", None),
                                       getattr(server, "last_prompt_id", None))


def _push_to_front_end(payload, client_id):
    # Only the client that queued the prompt: a shared server's other tabs and
    # users never see this one's traceback and paths. A prompt queued with no
    # client id (the HTTP API alone) has no one to tell.
    if client_id:
        _prompt_server().send_sync("archfit.diagnosis", payload, sid=client_id)


def _check_and_log():
    started = time.perf_counter()
    try:
        report = preflight.run()
        timings["check_seconds"] = time.perf_counter() - started
        for line in preflight.summary_lines(report.document):
            _log.info("[archfit] %s", line)
    except preflight.Unavailable as error:
        _log.warning("[archfit] not checking this ComfyUI: %s", error)
    except Exception as error:  # noqa: BLE001 - a background thread must not die loudly
        _log.warning("[archfit] the check failed: %s", error)


def _step(what, action):
    try:
        action()
    except Exception as error:  # noqa: BLE001 - ComfyUI must start whatever happens here
        _log.warning("[archfit] %s failed: %s", what, error)


def _register_nodes():
    from . import nodes
    from .nodes import NODE_CLASS_MAPPINGS as classes, NODE_DISPLAY_NAME_MAPPINGS as names

    nodes.tell_front_end = _push_to_front_end
    nodes.running_prompt = _running_prompt
    NODE_CLASS_MAPPINGS.update(classes)
    NODE_DISPLAY_NAME_MAPPINGS.update(names)


def _register_routes():
    from aiohttp import web

    from .routes import add_routes

    add_routes(_prompt_server().routes, web)


def _start_check():
    thread = threading.Thread(target=_check_and_log, name="archfit-preflight", daemon=True)
    thread.start()
    timings["check_thread"] = thread


def _setup():
    started = time.perf_counter()
    _step("registering the nodes", _register_nodes)
    _step("installing the error handler",
          lambda: error_handler.install(_push_to_front_end, _running_prompt))
    _step("adding the /archfit routes", _register_routes)
    if binding.load() is None:
        _log.warning("[archfit] %s", binding.problem())
    else:
        _step("starting the check", _start_check)
    timings["import_seconds"] = time.perf_counter() - started


_setup()
