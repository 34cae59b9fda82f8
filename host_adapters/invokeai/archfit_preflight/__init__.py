"""archfit for InvokeAI: an `archfit_preflight` invocation that checks every
CUDA binary this InvokeAI can load against its GPU and driver, and a short
block in InvokeAI's log at start-up saying whether it fits.

InvokeAI imports each folder of its `nodes` directory as a module named
after the folder; only classes this __init__.py defines or imports are
registered. The start-up check runs in a background thread and never
imports torch; nothing here raises out of the import when the archfit
library is missing or broken — the invocation then says why.
"""

import logging
import threading

from invokeai.invocation_api import (
    BaseInvocation,
    BaseInvocationOutput,
    InputField,
    InvocationContext,
    OutputField,
    invocation,
    invocation_output,
)

try:
    from invokeai.backend.util.logging import InvokeAILogger

    _log = InvokeAILogger.get_logger("archfit")
except Exception:  # noqa: BLE001 - an InvokeAI without it, or a stand-in
    _log = logging.getLogger("archfit")

_problem = None
try:
    import archfit
    from archfit import host

    archfit.version()  # loads libarchfit: a missing or wrong library shows here
except Exception as error:  # noqa: BLE001 - InvokeAI must start whatever happens here
    archfit = None
    _problem = "%s: %s (install it with `pip install archfit` in InvokeAI's Python)" % (
        type(error).__name__, error)


def _check(gpu=None):
    # The scan index: a graph may run this node every time, and an
    # unchanged environment's libraries need not be read again.
    arguments = {"site_packages": host.site_packages(), "scan_index": True}
    if gpu:
        arguments["gpu"] = gpu
    return archfit.check(**arguments)


def _check_and_log():
    try:
        report = _check(host.gpu_from_environment())
        for line in host.summary_lines(report.document, where="the archfit Pre-flight node"):
            _log.info("[archfit] %s", line)
    except Exception as error:  # noqa: BLE001 - a background thread must not die loudly
        _log.warning("[archfit] the check failed: %s", error)


startup_check = None  # the thread of the start-up check, when one runs
if archfit is None:
    _log.warning("[archfit] %s", _problem)
else:
    startup_check = threading.Thread(target=_check_and_log, name="archfit-preflight", daemon=True)
    startup_check.start()


@invocation_output("archfit_preflight_output")
class ArchfitPreflightOutput(BaseInvocationOutput):
    """The checklist, and whether everything fits."""

    report: str = OutputField(description="What will fail on this GPU, and the exact fix")
    fits: bool = OutputField(description="True when every component has code this GPU runs")


@invocation(
    "archfit_preflight",
    title="archfit Pre-flight",
    tags=["archfit", "cuda", "gpu", "check"],
    category="archfit",
    version="1.0.0",
    use_cache=False,
)
class ArchfitPreflightInvocation(BaseInvocation):
    """Checks every CUDA binary InvokeAI can load against its GPU and driver, and says
    exactly what will fail and the fix."""

    gpu: str = InputField(
        default="",
        description='Judge against this GPU instead of the real one ("RTX 5090", "sm_120"); '
                    "empty: the real GPU (or ARCHFIT_GPU)")

    def invoke(self, context: InvocationContext) -> ArchfitPreflightOutput:
        if archfit is None:
            return ArchfitPreflightOutput(report="archfit cannot check this InvokeAI: %s" % _problem,
                                          fits=False)
        try:
            report = _check(self.gpu or host.gpu_from_environment())
        except archfit.ArchfitError as error:
            return ArchfitPreflightOutput(report="archfit could not run the check: %s" % error,
                                          fits=False)
        return ArchfitPreflightOutput(report=archfit.report_text(report.document),
                                      fits=report.verdict == "fits")
