"""The `comfyui` fixture: a ComfyUI folder with the archfit node pack in its
custom_nodes and ComfyUI's modules stood in for (comfyui_standin.py)."""

import logging
import shutil
import sys
import types

import pytest

from comfyui_standin import (
    BINDING_DIR,
    PACK_SOURCE,
    ExecutionBlocker,
    StandInPromptServer,
    _module,
    load_like_comfyui,
)


@pytest.fixture
def comfyui(tmp_path, monkeypatch):
    """A ComfyUI folder with the pack in custom_nodes; yields a namespace
    with .root, .custom_nodes, .pack_dir, .server, .load() (imports the pack
    once and returns it)."""
    root = tmp_path / "ComfyUI"
    custom_nodes = root / "custom_nodes"
    pack_dir = custom_nodes / "comfyui-archfit"
    shutil.copytree(PACK_SOURCE, pack_dir, ignore=shutil.ignore_patterns("__pycache__"))
    server = StandInPromptServer()
    monkeypatch.setitem(sys.modules, "server",
                        _module("server", PromptServer=types.SimpleNamespace(instance=server)))
    monkeypatch.setitem(sys.modules, "folder_paths", _module(
        "folder_paths", get_folder_paths=lambda kind: [str(custom_nodes)] if kind == "custom_nodes"
        else []))
    monkeypatch.setitem(sys.modules, "comfy_execution", _module("comfy_execution"))
    monkeypatch.setitem(sys.modules, "comfy_execution.graph_utils",
                        _module("comfy_execution.graph_utils", ExecutionBlocker=ExecutionBlocker))
    monkeypatch.syspath_prepend(BINDING_DIR)
    # No GPU here: judge against a named one.
    monkeypatch.setenv("ARCHFIT_GPU", "RTX 5090")
    loaded = {}
    handlers_before = list(logging.getLogger().handlers)

    def load():
        if "pack" not in loaded:
            loaded["pack"] = load_like_comfyui(str(pack_dir))
        return loaded["pack"]

    yield types.SimpleNamespace(root=root, custom_nodes=custom_nodes, pack_dir=pack_dir,
                                server=server, load=load)
    # The pack adds its log handler to the root logger once per process
    # state; take it off so tests stay apart.
    for handler in list(logging.getLogger().handlers):
        if handler not in handlers_before:
            logging.getLogger().removeHandler(handler)
    for name in [n for n in sys.modules if n.startswith(str(pack_dir).replace(".", "_x_"))]:
        del sys.modules[name]
