"""The archfit nodes (ComfyUI's V1 node contract), category "archfit":

- Pre-flight: checks this process (its GPU, torch, site-packages and
  custom_nodes); outputs the checklist text and a pass/fail BOOLEAN, shows
  the checklist on the node, and with stop_on_failure stops the workflow
  before the expensive part (ExecutionBlocker) instead of failing minutes
  later. Its optional passthrough input lets it gate any link.
- Explain last error: the diagnosis of the last execution error of the
  client that runs it, as text.

When Pre-flight stops a workflow it tells the client that queued it why, as
the error handler does for a CUDA error: ComfyUI then shows only "Execution
Blocked", which says nothing of the cause.
"""

import time

from . import binding, error_handler, preflight, prompt_store

# Set by the pack's __init__ (ComfyUI's server); no one to tell without it.
tell_front_end = None
running_prompt = error_handler._no_prompt


class AnyType(str):
    """ComfyUI's wildcard socket type: equal to every type, so the
    passthrough connects to anything."""

    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = str.__hash__


ANY = AnyType("*")


def _execution_blocker(message):
    # ComfyUI's own class: a consumer of a blocked output reports
    # "Execution Blocked: <message>" and its branch stops.
    from comfy_execution.graph_utils import ExecutionBlocker

    return ExecutionBlocker(message)


class ArchfitPreflight:
    CATEGORY = "archfit"
    FUNCTION = "run"
    OUTPUT_NODE = True
    RETURN_TYPES = ("STRING", "BOOLEAN", ANY)
    RETURN_NAMES = ("report", "fits", "passthrough")
    DESCRIPTION = ("Checks every CUDA binary this ComfyUI can load against its GPU and driver, "
                   "and says exactly what will fail and the fix.")

    @classmethod
    def INPUT_TYPES(cls):
        return {
            "required": {
                "stop_on_failure": ("BOOLEAN", {
                    "default": False,
                    "tooltip": "Stop the workflow here, with the diagnosis, when something "
                               "will fail on this GPU"}),
            },
            "optional": {
                "passthrough": (ANY, {"tooltip": "Any link to gate: passed on when the check "
                                                 "fits (or stop_on_failure is off)"}),
            },
        }

    @classmethod
    def IS_CHANGED(cls, **kwargs):
        # The environment can change between runs (a pip install): always check.
        return float("nan")

    def run(self, stop_on_failure, passthrough=None):
        archfit = binding.load()
        try:
            report = preflight.run()
        except preflight.Unavailable as error:
            text = "archfit cannot check this ComfyUI: %s" % error
            return {"ui": {"text": [text]}, "result": (text, False, passthrough)}
        document = report.document
        text = archfit.host.check_text(report)  # the core's, as `archfit check` prints it
        fits = report.verdict == "fits"
        ui = {"text": [text], "archfit_report": [document]}
        if stop_on_failure and report.verdict == "fails":
            # The core's one line names the stack, the GPU and the command.
            fix = (document.get("fix") or {}).get("summary")
            message = "archfit: %s" % document.get("summary", "fails")
            if fix:
                message += ". Fix: %s" % fix
            blocker = _execution_blocker(message)
            _tell_why_it_stopped(archfit, report)
            return {"ui": ui, "result": (blocker, blocker, blocker)}
        return {"ui": ui, "result": (text, fits, passthrough)}


def _tell_why_it_stopped(archfit, report):
    prompt = running_prompt()
    payload = {"kind": "check", "toast": archfit.host.check_toast(report.document, stopped=True),
               "text": archfit.host.check_text(report), "prompt_id": prompt.prompt_id,
               "time": time.time()}
    prompt_store.keep(prompt.prompt_id, prompt.client_id, payload)
    if tell_front_end is not None:
        tell_front_end(payload, prompt.client_id)


class ArchfitExplainLastError:
    CATEGORY = "archfit"
    FUNCTION = "run"
    OUTPUT_NODE = True
    RETURN_TYPES = ("STRING",)
    RETURN_NAMES = ("diagnosis",)
    DESCRIPTION = "The cause, the component behind it and the fix of the last execution error."

    @classmethod
    def INPUT_TYPES(cls):
        return {"required": {}}

    @classmethod
    def IS_CHANGED(cls, **kwargs):
        return float("nan")

    def run(self):
        # The latest of this client's own prompts, never another user's.
        payload = error_handler.latest(running_prompt().client_id)
        if payload is None:
            text = "No execution error in your prompts since ComfyUI started."
            if binding.load() is None:
                text += " (archfit is not working here: %s)" % binding.problem()
            return {"ui": {"text": [text]}, "result": (text,)}
        return {"ui": {"text": [payload["text"]], "archfit_diagnosis": [payload["diagnosis"]]},
                "result": (payload["text"],)}


NODE_CLASS_MAPPINGS = {
    "ArchfitPreflight": ArchfitPreflight,
    "ArchfitExplainLastError": ArchfitExplainLastError,
}
NODE_DISPLAY_NAME_MAPPINGS = {
    "ArchfitPreflight": "archfit Pre-flight",
    "ArchfitExplainLastError": "archfit Explain last error",
}
