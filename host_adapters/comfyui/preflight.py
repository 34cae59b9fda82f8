"""The check of the running ComfyUI process, shared by the start-up log
block, the Pre-flight node, the error handler (which weighs errors against
it) and GET /archfit/report. Runs at most one check at a time."""

import threading

from . import binding, environment

_lock = threading.Lock()
_latest = None  # the last archfit.Report


class Unavailable(Exception):
    """archfit cannot check here; the message says why."""


def run():
    """Checks the process now and keeps the report. Raises Unavailable when
    the binding is missing or the check cannot run."""
    global _latest
    archfit = binding.load()
    if archfit is None:
        raise Unavailable(binding.problem())
    with _lock:
        try:
            report = archfit.check(**environment.check_arguments())
        except archfit.ArchfitError as error:
            raise Unavailable("the check could not run: %s" % error) from error
        _latest = report
        return report


def latest():
    """The last report, or None when no check has run."""
    return _latest


def latest_or_run():
    return _latest if _latest is not None else run()


def summary_lines(document):
    return binding.load().host.summary_lines(
        document, where="the archfit Pre-flight node, or GET /archfit/report")
