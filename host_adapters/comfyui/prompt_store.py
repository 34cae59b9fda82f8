"""What archfit told each prompt's client, kept with the prompt as ComfyUI
keeps its history: a page opened later, or reloaded, asks for a prompt's
diagnoses (GET /archfit/diagnoses?prompt_id=…&client_id=…) and gets them
only with the client id that queued it, so one user's traceback and paths
never reach another. Bounded like ComfyUI's own history: the oldest prompt
goes first."""

import collections
import threading

# ComfyUI keeps 10,000 prompts of history; a diagnosis holds a traceback, so
# fewer are kept here (a few KB each).
MAX_PROMPTS = 1000
MAX_PER_PROMPT = 8

_lock = threading.Lock()
_by_prompt = collections.OrderedDict()  # prompt_id -> (client_id, [payload, …])


def keep(prompt_id, client_id, payload):
    """Keeps `payload` for the prompt; nothing without a prompt id (an
    error outside a prompt) or a client (no one could ask for it)."""
    if not prompt_id or not client_id:
        return
    with _lock:
        owner, payloads = _by_prompt.get(prompt_id, (client_id, []))
        if owner != client_id:
            return  # a prompt id is one client's; never mix two
        if len(payloads) < MAX_PER_PROMPT:
            payloads.append(payload)
        _by_prompt[prompt_id] = (owner, payloads)
        _by_prompt.move_to_end(prompt_id)
        while len(_by_prompt) > MAX_PROMPTS:
            _by_prompt.popitem(last=False)


def of_prompt(prompt_id, client_id):
    """The payloads kept for the prompt, oldest first; [] when there are
    none or `client_id` is not the one that queued it."""
    with _lock:
        owner, payloads = _by_prompt.get(prompt_id, (None, []))
        return list(payloads) if owner is not None and owner == client_id else []


def _reset_for_tests():
    with _lock:
        _by_prompt.clear()
