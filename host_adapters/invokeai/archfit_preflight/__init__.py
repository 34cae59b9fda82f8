"""archfit for InvokeAI: an `archfit_preflight` invocation that checks every
CUDA binary this InvokeAI can load against its GPU and driver, a short
block in InvokeAI's log at start-up saying whether it fits, and an error
hook (error_hook.py) that explains in the log a failed invocation archfit
recognises as a CUDA, driver or GPU-arch problem.

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
    _problem = ("%s: %s (install the archfit wheel, made by `make wheel` in archfit's source or "
                "taken from its release, in InvokeAI's Python)" % (type(error).__name__, error))


def _check(gpu=None):
    # The scan index: a graph may run this node every time, and an
    # unchanged environment's libraries need not be read again.
    global _latest_report
    arguments = {"site_packages": host.site_packages(), "scan_index": True}
    if gpu:
        arguments["gpu"] = gpu
    _latest_report = archfit.check(**arguments)
    return _latest_report


def _check_and_log():
    try:
        report = _check(host.gpu_from_environment())
        for line in host.summary_lines(report.document, where="the archfit Pre-flight node"):
            _log.info("[archfit] %s", line)
    except Exception as error:  # noqa: BLE001 - a background thread must not die loudly
        _log.warning("[archfit] the check failed: %s", error)


startup_check = None  # the thread of the start-up check, when one runs
_latest_report = None  # the last check's Report: errors are weighed against it
if archfit is None:
    _log.warning("[archfit] %s", _problem)
else:
    startup_check = threading.Thread(target=_check_and_log, name="archfit-preflight", daemon=True)
    startup_check.start()
    try:
        from .error_hook import install as _install_error_hook

        error_hook = _install_error_hook(archfit, _log, lambda: _latest_report)
    except Exception as error:  # noqa: BLE001 - InvokeAI must start whatever happens here
        _log.warning("[archfit] the error hook could not be installed: %s", error)


@invocation_output("archfit_preflight_output")
class ArchfitPreflightOutput(BaseInvocationOutput):
    """What will fail and its fix first, the whole checklist, and whether everything fits."""

    report: str = OutputField(description="What will fail on this GPU and the exact fix, "
                                          "failing stacks first")
    details: str = OutputField(description="Every stack and component the check judged")
    fits: bool = OutputField(description="True when every component has code this GPU runs")


@invocation(
    "archfit_preflight",
    title="archfit Pre-flight",
    tags=["archfit", "cuda", "gpu", "check"],
    category="archfit",
    version="1.1.0",
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
            text = "archfit cannot check this InvokeAI: %s" % _problem
            return ArchfitPreflightOutput(report=text, details=text, fits=False)
        try:
            report = _check(self.gpu or host.gpu_from_environment())
        except archfit.ArchfitError as error:
            text = "archfit could not run the check: %s" % error
            return ArchfitPreflightOutput(report=text, details=text, fits=False)
        return ArchfitPreflightOutput(report="\n".join(host.fix_first_lines(report.document)),
                                      details=host.check_text(report),
                                      fits=report.verdict == "fits")
