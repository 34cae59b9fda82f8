"""Nodes for the real-ComfyUI tests (tests/python/comfyui_real): a node that
fails the way a custom node does on a GPU its code was not built for, or
with a plain missing file, and a sink that consumes any value (so archfit
Pre-flight's blocked output has a consumer). Loaded by ComfyUI from
custom_nodes/ like any pack; never shipped."""


class AnyType(str):
    def __ne__(self, other):
        return False


ANY = AnyType("*")

# What the failure raises: the text torch prints for a kernel with no image
# for the GPU (CUDA error 209), and a missing model file.
FAILURES = {
    "cuda-no-kernel-image": lambda: RuntimeError(
        "CUDA error: no kernel image is available for execution on the device\n"
        "CUDA kernel errors might be asynchronously reported at some other API call, so the "
        "stacktrace below might be incorrect.\nFor debugging consider passing "
        "CUDA_LAUNCH_BLOCKING=1\nCompile with `TORCH_USE_CUDA_DSA` to enable device-side "
        "assertions.\n"),
    "file-not-found": lambda: FileNotFoundError(
        2, "No such file or directory", "/models/checkpoints/missing.safetensors"),
}


class _OutputNode:
    CATEGORY = "archfit tests"
    FUNCTION = "run"
    OUTPUT_NODE = True
    RETURN_TYPES = ()


class ArchfitTestFail(_OutputNode):
    @classmethod
    def INPUT_TYPES(cls):
        return {"required": {"failure": (sorted(FAILURES),)}}

    @classmethod
    def IS_CHANGED(cls, **kwargs):
        return float("nan")

    def run(self, failure):
        raise FAILURES[failure]()


class ArchfitTestSink(_OutputNode):
    @classmethod
    def INPUT_TYPES(cls):
        return {"required": {"value": (ANY,)}}

    def run(self, value):
        return {}


NODE_CLASS_MAPPINGS = {"ArchfitTestFail": ArchfitTestFail, "ArchfitTestSink": ArchfitTestSink}
