"""What to check for the running ComfyUI process: its Python's
site-packages (archfit.host), ComfyUI's custom_nodes folders, the real GPU
and driver — or ARCHFIT_GPU. Nothing here imports torch: archfit reads
torch/version.py and the libraries' headers, so the check can run before
ComfyUI imports torch.
"""

import os

_PACK_DIR = os.path.dirname(os.path.abspath(__file__))


def custom_nodes():
    """ComfyUI's custom_nodes folder: the one folder_paths names, else the
    folder this pack sits in."""
    try:
        import folder_paths  # ComfyUI's own module; absent outside ComfyUI

        for path in folder_paths.get_folder_paths("custom_nodes"):
            if os.path.isdir(path):
                return path
    except Exception:  # noqa: BLE001 - outside ComfyUI, or an older one
        pass
    return os.path.dirname(_PACK_DIR)


def site_packages():
    from . import binding

    return binding.load().host.site_packages()


def check_arguments():
    """Keyword arguments of archfit.check() for this process."""
    from . import binding

    host = binding.load().host
    # The scan index: Pre-flight runs before every queued prompt, and an
    # unchanged environment's libraries need not be read again.
    arguments = {
        "site_packages": site_packages(),
        "custom_nodes": custom_nodes(),
        "scan_index": True,
    }
    gpu = host.gpu_from_environment()
    if gpu:
        arguments["gpu"] = gpu
    return arguments
