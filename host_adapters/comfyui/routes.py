"""HTTP routes on ComfyUI's server (aiohttp, through PromptServer's route
table; ComfyUI serves each at /x and /api/x):

  GET  /archfit/report          the archfit.check/1 document of this process (the
                                last check's; the first GET runs one if none has run)
  POST /archfit/report          checks again, then the same document
  POST /archfit/explain         {"text", "traceback"?} or ComfyUI's execution_error
                                detail {"exception_type", "exception_message",
                                "traceback": [frames]} -> {"kind", "diagnosis", "text",
                                "toast"} (toast: null for an error archfit does not know)
  GET  /archfit/diagnoses       ?prompt_id=…&client_id=… -> what archfit told that
                                prompt's client ([] for any other client id)

A GET changes nothing: a page elsewhere can make a browser send one (an
<img> tag) without an Origin header. A POST is refused when its Origin, or
the browser's Sec-Fetch-Site, says another site sent it, as ComfyUI's own
origin check does. Bodies are limited while they are read (a chunked body has
no Content-Length) and JSON nested deeper than MAX_JSON_DEPTH is refused
before it is parsed. Checks and diagnoses run in a worker thread, never on
the server's loop.
"""

import asyncio
import ipaddress
import json
from urllib.parse import urlsplit

from . import error_handler, preflight, prompt_store

MAX_TEXT_BYTES = 4 << 20  # a pasted log; archfit reads only its last error anyway
MAX_JSON_DEPTH = 32  # an execution_error detail is 3 deep
READ_CHUNK_BYTES = 64 << 10


class BadRequest(Exception):
    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


async def read_limited(request, limit=MAX_TEXT_BYTES):
    """The body, refused (413) as soon as it passes `limit` bytes."""
    too_large = BadRequest(413, "the request body is over %d bytes" % limit)
    if request.content_length is not None and request.content_length > limit:
        raise too_large
    chunks, size = [], 0
    async for chunk in request.content.iter_chunked(READ_CHUNK_BYTES):
        size += len(chunk)
        if size > limit:
            raise too_large
        chunks.append(chunk)
    return b"".join(chunks)


def json_depth(text):
    """How deeply arrays and objects nest in `text` (strings skipped); stops
    counting past MAX_JSON_DEPTH, so it never recurses and is linear."""
    depth = deepest = 0
    in_string = escaped = False
    for character in text:
        if in_string:
            if escaped:
                escaped = False
            elif character == "\\":
                escaped = True
            elif character == '"':
                in_string = False
        elif character == '"':
            in_string = True
        elif character in "[{":
            depth += 1
            deepest = max(deepest, depth)
            if deepest > MAX_JSON_DEPTH:
                break
        elif character in "]}":
            depth -= 1
    return deepest


def parse_json_body(raw):
    """The JSON value in `raw`, or BadRequest(400) saying what is wrong."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise BadRequest(400, "the body must be UTF-8 JSON") from None
    if json_depth(text) > MAX_JSON_DEPTH:
        raise BadRequest(400, "the JSON nests deeper than %d levels" % MAX_JSON_DEPTH)
    try:
        return json.loads(text)
    except ValueError:
        raise BadRequest(400, 'the body must be JSON: {"text": "…the error…"}') from None


def _is_loopback(host):
    name = urlsplit("//" + host).hostname or ""
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def refuse_other_sites(request):
    """BadRequest(403) for a POST another site's page made a browser send.
    The browser's own Sec-Fetch-Site and an opaque ("null") Origin are
    trusted everywhere; Origin against Host only when Host is this machine,
    as ComfyUI's origin check does: behind a reverse proxy the Host header is
    the proxy's upstream, not what the page's Origin names."""
    if request.headers.get("Sec-Fetch-Site", "same-origin") not in ("same-origin", "none"):
        raise BadRequest(403, "archfit: cross-site request refused")
    origin = request.headers.get("Origin")
    if origin is None:
        return  # not from a browser page (curl, a script): nothing to forge
    host = request.headers.get("Host", "")
    if origin == "null" or (_is_loopback(host) and urlsplit(origin).netloc.lower() != host.lower()):
        raise BadRequest(403, "archfit: a request from %s to %s refused" % (origin, host))


def text_of_execution_error(detail):
    """A Python traceback text from ComfyUI's execution_error detail, whose
    `traceback` is traceback.format_tb()'s list: the frames without the
    header and the exception line."""
    kind = str(detail.get("exception_type") or "")
    message = str(detail.get("exception_message") or "")
    frames = detail.get("traceback") or []
    if isinstance(frames, str):
        frames = [frames]
    head = "%s: %s" % (kind, message) if kind else message
    if not frames:
        return head
    return "Traceback (most recent call last):\n" + "".join(str(f) for f in frames) + head + "\n"


def _error(web, status, message):
    return web.json_response({"error": message}, status=status)


def add_routes(routes, web):
    """Registers the routes on an aiohttp RouteTableDef (`web` is aiohttp.web)."""

    async def report_response(check):
        loop = asyncio.get_running_loop()
        try:
            report = await loop.run_in_executor(None, check)
        except preflight.Unavailable as error:
            return _error(web, 503, str(error))
        return web.json_response(report.document)

    @routes.get("/archfit/report")
    async def archfit_report(request):
        return await report_response(preflight.latest_or_run)

    @routes.post("/archfit/report")
    async def archfit_recheck(request):
        try:
            refuse_other_sites(request)
        except BadRequest as error:
            return _error(web, error.status, str(error))
        return await report_response(preflight.run)

    @routes.post("/archfit/explain")
    async def archfit_explain(request):
        try:
            refuse_other_sites(request)
            body = parse_json_body(await read_limited(request))
        except BadRequest as error:
            return _error(web, error.status, str(error))
        if not isinstance(body, dict):
            return _error(web, 400, 'the body must be a JSON object: {"text": "…the error…"}')
        traceback = body.get("traceback")
        if "exception_message" in body or "exception_type" in body:
            text, traceback = text_of_execution_error(body), None
        else:
            text = body.get("text")
        if not isinstance(text, str) or not text.strip():
            return _error(web, 400, '"text" must be the error text, a non-empty string')
        if isinstance(traceback, list):
            traceback = "".join(str(line) for line in traceback)
        if traceback is not None and not isinstance(traceback, str):
            return _error(web, 400, '"traceback" must be a string or a list of strings')
        loop = asyncio.get_running_loop()
        try:
            payload = await loop.run_in_executor(None, error_handler.diagnose, text, traceback)
        except preflight.Unavailable as error:
            return _error(web, 503, str(error))
        return web.json_response(payload)

    @routes.get("/archfit/diagnoses")
    async def archfit_diagnoses(request):
        # What archfit told the client that queued the prompt; [] for anyone else.
        prompt_id = request.query.get("prompt_id", "")
        client_id = request.query.get("client_id", "")
        if not prompt_id or not client_id:
            return _error(web, 400, "prompt_id and client_id are both needed")
        return web.json_response(prompt_store.of_prompt(prompt_id, client_id))

    return archfit_report, archfit_recheck, archfit_explain, archfit_diagnoses
