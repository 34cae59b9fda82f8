"""Turns ComfyUI's execution errors into archfit diagnoses.

ComfyUI's executor logs a failed node as two ERROR records on the root
logger: "!!! Exception during processing !!! <message>" and then the
formatted traceback (which ends with the exception line). The handler pairs
them, diagnoses the error off the logging thread — weighed against the
pre-flight check when one has run — keeps the latest diagnosis for the
Explain node (per client) and each prompt's for the routes (prompt_store), and hands it
to a callback (the front-end push) only when archfit recognised the error
as one of its CUDA, driver or architecture failures, naming the prompt and
client that were running when the error was logged: everything else is
ComfyUI's to show, and one user's traceback never goes to another. Nothing
here ever raises into the logging call that fed it.
"""

import collections
import concurrent.futures
import logging
import threading
import time

from . import binding, preflight, prompt_store

MARKER = "!!! Exception during processing !!!"
TRACEBACK = "Traceback (most recent call last):"
# How long an error line waits for its traceback before it is diagnosed alone.
PAIRING_SECONDS = 0.5

_latest_lock = threading.Lock()
# client id -> its latest payload ({"diagnosis", "text", "toast", "time", …});
# None is the key of prompts queued with no client id. Bounded: the oldest
# client goes first.
_latest = collections.OrderedDict()
_MAX_CLIENTS = 256


def latest(client_id):
    """The latest diagnosis payload of that client's prompts, or None: one
    user's traceback is never another's answer."""
    with _latest_lock:
        return _latest.get(client_id)


def diagnose(text, traceback=None):
    """The payload for one error text: the archfit.diagnosis/1 document and
    its text, weighed against the latest pre-flight check when there is one.
    Raises preflight.Unavailable when archfit cannot run here."""
    archfit = binding.load()
    if archfit is None:
        raise preflight.Unavailable(binding.problem())
    report = preflight.latest()
    diagnosis = archfit.diagnose(text, traceback=traceback,
                                 report_json=report.json if report is not None else None)
    document = diagnosis.document
    # The text is the core's (archfit_diagnosis_text), as `archfit explain` prints it.
    return {"kind": "diagnosis", "diagnosis": document, "text": diagnosis.text,
            "toast": archfit.host.diagnosis_toast(document), "time": time.time()}


# Whose prompt was running when an error was logged.
RunningPrompt = collections.namedtuple("RunningPrompt", "client_id prompt_id")
_NO_PROMPT = RunningPrompt(None, None)


def _no_prompt():
    return _NO_PROMPT


class ExecutionErrorHandler(logging.Handler):
    """`on_diagnosis(payload, client_id)`; `running_prompt()` gives the
    RunningPrompt when a record is logged (ComfyUI's executor logs on the
    thread that runs the prompt)."""

    def __init__(self, on_diagnosis=None, pairing_seconds=PAIRING_SECONDS,
                 running_prompt=_no_prompt):
        super().__init__(level=logging.ERROR)
        self._on_diagnosis = on_diagnosis
        self._running_prompt = running_prompt
        self._pairing_seconds = pairing_seconds
        self._pending = None  # (the error line waiting for its traceback, its RunningPrompt)
        self._timer = None
        self._state = threading.Lock()
        self._worker = concurrent.futures.ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="archfit-diagnose")

    def emit(self, record):
        try:
            message = record.getMessage()
            if MARKER in message or message.lstrip().startswith(TRACEBACK):
                self._take(message, self._running_prompt())
        except Exception:  # noqa: BLE001 - a log handler must never raise
            pass

    def _take(self, message, prompt):
        with self._state:
            if MARKER in message:
                self._flush_locked()
                self._pending = (message.split(MARKER, 1)[1].strip(), prompt)
                self._timer = threading.Timer(self._pairing_seconds, self.flush)
                self._timer.daemon = True
                self._timer.start()
                return
            if self._pending is not None and message.lstrip().startswith(TRACEBACK):
                # The traceback ends with the exception line: it is the whole error.
                self._cancel_timer_locked()
                _, pending_prompt = self._pending
                self._pending = None
                self._submit(message, pending_prompt)

    def flush(self):
        """Diagnoses an error line whose traceback never came."""
        with self._state:
            self._flush_locked()

    def _flush_locked(self):
        self._cancel_timer_locked()
        if self._pending is not None and self._pending[0]:
            self._submit(*self._pending)
        self._pending = None

    def _cancel_timer_locked(self):
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _submit(self, text, prompt):
        self._worker.submit(self._diagnose, text, prompt)

    def _diagnose(self, text, prompt):
        try:
            payload = diagnose(text)
        except Exception as error:  # noqa: BLE001 - reported, never raised
            logging.getLogger("archfit").warning("archfit could not diagnose the error: %s", error)
            return
        with _latest_lock:
            _latest[prompt.client_id] = payload
            _latest.move_to_end(prompt.client_id)
            while len(_latest) > _MAX_CLIENTS:
                _latest.popitem(last=False)
        # An error archfit does not recognise (a missing file, a bad input) is
        # ComfyUI's alone to show.
        if payload["toast"] is None:
            return
        payload["prompt_id"] = prompt.prompt_id
        prompt_store.keep(prompt.prompt_id, prompt.client_id, payload)
        if self._on_diagnosis is not None:
            try:
                self._on_diagnosis(payload, prompt.client_id)
            except Exception as error:  # noqa: BLE001 - reported, never raised
                logging.getLogger("archfit").warning("archfit could not send the diagnosis: %s",
                                                     error)

    def wait(self, timeout=10.0):
        """Blocks until every error handed over so far is diagnosed (tests)."""
        self.flush()
        self._worker.submit(lambda: None).result(timeout=timeout)


_installed = None


def install(on_diagnosis, running_prompt=_no_prompt):
    """Adds the handler to the root logger once; returns it."""
    global _installed
    if _installed is None:
        _installed = ExecutionErrorHandler(on_diagnosis, running_prompt=running_prompt)
        logging.getLogger().addHandler(_installed)
    return _installed
