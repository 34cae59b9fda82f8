"""A stand-in for ComfyUI, enough to load the archfit node pack the way
ComfyUI's loader does and to run what it registers.

ComfyUI's pieces the pack touches are replaced by small modules put into
sys.modules: `server` (PromptServer.instance with an aiohttp route table and
a send_sync that records), `folder_paths` (custom_nodes of a temporary
ComfyUI folder) and `comfy_execution.graph_utils.ExecutionBlocker`. A pack
is imported from its __init__.py under a module name made from its path,
with '.' replaced by '_x_' (ComfyUI's nodes.load_custom_node). The
`comfyui` fixture (conftest.py) puts them together.
"""

import importlib.util
import os
import sys
import types

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
PACK_SOURCE = os.path.join(REPO, "host_adapters", "comfyui")
BINDING_DIR = os.path.join(REPO, "host_adapters", "python")


class ExecutionBlocker:
    """comfy_execution.graph_utils.ExecutionBlocker: a value that stops the
    branch that consumes it, with a message."""

    def __init__(self, message):
        self.message = message


class StandInPromptServer:
    def __init__(self):
        from aiohttp import web

        self.routes = web.RouteTableDef()
        self.sent = []
        self.recipients = []  # each send_sync's sid: None means every client
        # ComfyUI's executor sets this to the running prompt's client id, and
        # its prompt worker last_prompt_id to the running prompt's id.
        self.client_id = None
        self.last_prompt_id = None

    def send_sync(self, event, data, sid=None):
        self.sent.append((event, data))
        self.recipients.append(sid)


def _module(name, **attributes):
    module = types.ModuleType(name)
    module.__dict__.update(attributes)
    return module


def load_like_comfyui(pack_dir):
    """Imports a node pack folder as ComfyUI does; returns the module."""
    init = os.path.join(pack_dir, "__init__.py")
    name = pack_dir.replace(".", "_x_")
    spec = importlib.util.spec_from_file_location(name, init,
                                                  submodule_search_locations=[pack_dir])
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
