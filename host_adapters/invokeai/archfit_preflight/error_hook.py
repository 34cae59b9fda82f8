"""Explains InvokeAI's failed invocations in its log, under the same rules
as the ComfyUI pack: only errors archfit recognises as CUDA, driver or
GPU-arch problems get a word (the title, one sentence of cause, the one
command); everything else is InvokeAI's alone.

InvokeAI offers node packs no hook for node errors (its session runner's
on_node_error callbacks are set only by its own constructor), but its
runner logs each one on the "InvokeAI" logger as two ERROR records: "Error
while invoking session S, invocation I (type): message", then the formatted
traceback, which ends with the exception line. This handler takes the
traceback that follows such a line, diagnoses it off the logging thread,
weighed against the last check, and logs the answer. What it writes goes to
the server's log only, never to another user's screen. Nothing here raises
into the logging call that fed it.
"""

import concurrent.futures
import logging

ERROR_LINE = "Error while invoking session "
TRACEBACK = "Traceback (most recent call last):"
INVOKEAI_LOGGER = "InvokeAI"


class InvocationErrorHandler(logging.Handler):
    def __init__(self, archfit, log, latest_report):
        super().__init__(level=logging.ERROR)
        self._archfit = archfit
        self._log = log
        self._latest_report = latest_report
        self._expecting_traceback = False
        self._worker = concurrent.futures.ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="archfit-diagnose")
        self.latest = None  # the last payload logged: {"toast", "text", "session"}
        self._session = None

    def emit(self, record):
        try:
            message = record.getMessage()
            if message.startswith(ERROR_LINE):
                self._expecting_traceback = True
                self._session = message[len(ERROR_LINE):].split(",", 1)[0]
            elif self._expecting_traceback and message.lstrip().startswith(TRACEBACK):
                self._expecting_traceback = False
                self._worker.submit(self._diagnose, message, self._session)
        except Exception:  # noqa: BLE001 - a log handler must never raise
            pass

    def _diagnose(self, text, session):
        try:
            report = self._latest_report()
            diagnosis = self._archfit.diagnose(
                text, report_json=report.json if report is not None else None)
            toast = self._archfit.host.diagnosis_toast(diagnosis.document)
            if toast is None:
                return  # not a CUDA problem archfit knows: InvokeAI's to show
            self.latest = {"toast": toast, "session": session,
                           "text": diagnosis.text}
            self._log.error("[archfit] %s", toast["title"])
            if toast["cause"]:
                self._log.error("[archfit] %s", toast["cause"])
            if toast["command"]:
                self._log.error("[archfit] fix: %s", toast["command"])
            elif toast["step"]:
                self._log.error("[archfit] fix: %s", toast["step"])
        except Exception as error:  # noqa: BLE001 - reported, never raised
            self._log.warning("[archfit] could not diagnose the error: %s", error)

    def wait(self, timeout=10.0):
        """Blocks until every error handed over so far is diagnosed (tests)."""
        self._worker.submit(lambda: None).result(timeout=timeout)


def install(archfit, log, latest_report):
    """Adds the handler to InvokeAI's logger once; returns it."""
    logger = logging.getLogger(INVOKEAI_LOGGER)
    for handler in logger.handlers:
        if isinstance(handler, InvocationErrorHandler):
            return handler
    handler = InvocationErrorHandler(archfit, log, latest_report)
    logger.addHandler(handler)
    return handler
