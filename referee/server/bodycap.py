"""An ASGI wrapper that refuses a request body too big before any of it is read.

Django's ASGI handler reads a whole body into a temporary file before a view runs, so a view
cannot refuse an upload by its size in time. This wrapper looks at Content-Length first: an
upload route may take the season file's upload_max_bytes (plus room for the form around the
file), every other route 1 MiB; a body without a length is refused on the upload routes.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

Scope = dict[str, Any]
ASGIApp = Callable[[Scope, Callable, Callable], Awaitable[None]]

UPLOAD_PATHS = ("/upload", "/api/submit")
OTHER_MAX = 1 << 20
FORM_SLACK = 64 * 1024


def _length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", []):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return -1
    return None


class BodyCap:
    """Wraps the Django ASGI app; `upload_max` gives the current upload cap in bytes."""

    def __init__(self, app: ASGIApp, upload_max: Callable[[], int]) -> None:
        self.app = app
        self.upload_max = upload_max

    async def __call__(self, scope: Scope, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http" or scope.get("method") in ("GET", "HEAD", "OPTIONS"):
            return await self.app(scope, receive, send)
        length = _length(scope)
        upload = scope.get("path", "") in UPLOAD_PATHS
        most = self.upload_max() + FORM_SLACK if upload else OTHER_MAX
        if length is not None and length < 0:
            return await _refuse(scope, send, 400, "the Content-Length is not a number")
        if upload and length is None:
            return await _refuse(scope, send, 411, "an upload needs a Content-Length")
        if length is not None and length > most:
            return await _refuse(scope, send, 413, f"the request is {length} bytes, more than "
                                                   f"the limit of {most - FORM_SLACK * upload}")
        started = False

        async def tracked(message: dict[str, Any]) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, tracked)
        except OSError as exc:   # the disk filled while the body was being spooled
            if started:
                raise
            await _refuse(scope, send, 507, f"the server could not store the request "
                                            f"({exc.strerror or exc}); nothing was kept")


async def _refuse(scope: Scope, send: Callable, status: int, text: str) -> None:
    """One line: JSON for the API, plain text for pages."""
    if scope.get("path", "").startswith("/api/"):
        body, kind = json.dumps({"error": text}).encode(), b"application/json"
    else:
        body, kind = (text + "\n").encode(), b"text/plain; charset=utf-8"
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", kind), (b"content-length", str(len(body)).encode()),
                            (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": body})
