"""HTTP routes on ComfyUI's server (aiohttp, through PromptServer's route
table; ComfyUI serves each at /x and /api/x):

  GET  /archfit/report[?refresh=1]  the archfit.check/1 document of this process
  POST /archfit/explain             {"text", "traceback"?} or ComfyUI's execution_error
                                    detail {"exception_type", "exception_message",
                                    "traceback": [frames]} -> {"diagnosis", "text"}

Checks and diagnoses run in a worker thread, never on the server's loop.
"""

import asyncio

from . import error_handler, preflight

MAX_TEXT_BYTES = 4 << 20  # a pasted log; archfit reads only its last error anyway


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

    @routes.get("/archfit/report")
    async def archfit_report(request):
        refresh = request.query.get("refresh") in ("1", "true")
        loop = asyncio.get_running_loop()
        try:
            report = await loop.run_in_executor(
                None, preflight.run if refresh else preflight.latest_or_run)
        except preflight.Unavailable as error:
            return _error(web, 503, str(error))
        return web.json_response(report.document)

    @routes.post("/archfit/explain")
    async def archfit_explain(request):
        if request.content_length is not None and request.content_length > MAX_TEXT_BYTES:
            return _error(web, 413, "the error text is over %d bytes" % MAX_TEXT_BYTES)
        try:
            body = await request.json()
        except ValueError:
            return _error(web, 400, 'the body must be JSON: {"text": "…the error…"}')
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

    return archfit_report, archfit_explain
