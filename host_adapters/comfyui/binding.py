"""Finds the archfit Python binding for this node pack.

The pack ships two ways: as a node pack whose requirements pull the
`archfit` wheel (then `import archfit` finds it), or copied whole into
custom_nodes/comfyui-archfit by `archfit install comfyui` with the binding,
libarchfit.so and the knowledge base inside it (under `vendor/`). The
folder is never named `archfit`: an older ComfyUI imports a pack under its
folder name, which would then hide the binding. Anything
that goes wrong here is returned as a sentence, never raised: ComfyUI must
start whatever state archfit is in.
"""

import importlib
import importlib.util
import os
import sys

_PACK_DIR = os.path.dirname(os.path.abspath(__file__))
_VENDORED = os.path.join(_PACK_DIR, "vendor", "python", "archfit", "__init__.py")

_binding = None
_problem = None


def _load_vendored():
    # Loaded under its own name, so an `archfit` elsewhere on sys.path (or
    # this pack's folder, if custom_nodes is on sys.path) is not shadowed.
    spec = importlib.util.spec_from_file_location(
        "archfit", _VENDORED, submodule_search_locations=[os.path.dirname(_VENDORED)])
    module = importlib.util.module_from_spec(spec)
    sys.modules["archfit"] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop("archfit", None)
        raise
    return module


def _is_binding(module):
    return all(hasattr(module, name) for name in ("check", "diagnose", "LibraryError"))


def load():
    """The binding module, or None; problem() then says why."""
    global _binding, _problem
    if _binding is not None or _problem is not None:
        return _binding
    try:
        already = sys.modules.get("archfit")
        if already is not None and _is_binding(already):
            _binding = already
        elif os.path.isfile(_VENDORED):
            _binding = _load_vendored()
        else:
            module = importlib.import_module("archfit")
            if not _is_binding(module):
                raise ImportError(
                    "the module named archfit at %s is not the archfit binding"
                    % getattr(module, "__file__", "?"))
            _binding = module
        _binding.version()  # loads libarchfit: a missing or wrong library shows here
        importlib.import_module(_binding.__name__ + ".host")  # binding.host, shared by the packs
    except Exception as error:  # noqa: BLE001 - every failure becomes a sentence
        _binding = None
        _problem = "%s: %s (run `archfit install comfyui PATH/TO/ComfyUI`, or install the " \
                   "archfit wheel, made by `make wheel` in archfit's source or taken from its " \
                   "release, in ComfyUI's Python)" % (type(error).__name__, error)
    return _binding


def problem():
    """Why load() returned None; None when it did not."""
    return _problem


def _reset_for_tests():
    global _binding, _problem
    _binding = None
    _problem = None
