"""An ASGI wrapper that refuses a request body over its route's limit as it streams in.

Django's ASGI handler reads a whole body before a view runs, so a view cannot refuse a body by
its size in time. This wrapper stands between the server and Django and counts the bytes of
every `http.request` message Django receives: the moment a body passes its route's limit, the
client gets 413 (and `Connection: close`), Django is told the client went away, and nothing
more of the body is read. A declared Content-Length over the limit is refused before any of the
body is read. The limits, by route: an upload route takes the season file's upload_max_bytes
(plus room for the form around the file); every other route, whatever its method, takes
FORM_MAX. An upload without a Content-Length is refused (411): `referee submit` and browsers
always send one.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

UPLOAD_PATHS = ("/upload", "/api/submit")
FORM_MAX = 1 << 20      # every route but the uploads: forms, sign-in, the admin, the API's GETs
FORM_SLACK = 64 * 1024  # the upload page's form fields around the file


def _length(scope: Scope) -> int | None:
    """The declared Content-Length: None without one, -1 for one that is not a number."""
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

    def limit(self, scope: Scope) -> tuple[int, int]:
        """(most bytes of body this request may send, the limit as told to the client)."""
        if scope.get("path", "") in UPLOAD_PATHS:
            shown = self.upload_max()
            return shown + FORM_SLACK, shown
        return FORM_MAX, FORM_MAX

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        length = _length(scope)
        most, shown = self.limit(scope)
        if length is not None and length < 0:
            return await _refuse(scope, send, 400, "the Content-Length is not a number")
        if scope.get("path", "") in UPLOAD_PATHS and length is None \
                and scope.get("method") not in ("GET", "HEAD"):
            return await _refuse(scope, send, 411, "an upload needs a Content-Length")
        if length is not None and length > most:
            return await _refuse(scope, send, 413, f"the request is {length} bytes, more than "
                                                   f"the limit of {shown}")
        await self._guarded(scope, receive, send, most, shown)

    async def _guarded(self, scope: Scope, receive: Receive, send: Send, most: int,
                       shown: int) -> None:
        """Run the app with a receive that counts the body and a send that knows whether an
        answer has begun (after a refusal, the app's own answer is dropped)."""
        received = 0
        started = refused = False

        async def counted() -> Message:
            nonlocal received, refused
            if refused:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > most:
                    refused = True
                    if not started:
                        await _refuse(scope, send, 413, f"the request is more than the limit "
                                                        f"of {shown} bytes; nothing was kept")
                    # Django drops a request whose client went away, body and all.
                    return {"type": "http.disconnect"}
            return message

        async def tracked(message: Message) -> None:
            nonlocal started
            if refused:
                return
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counted, tracked)
        except OSError as exc:   # the disk filled while the body was being spooled
            if started or refused:
                raise
            await _refuse(scope, send, 507, f"the server could not store the request "
                                            f"({exc.strerror or exc}); nothing was kept")


async def _refuse(scope: Scope, send: Send, status: int, text: str) -> None:
    """One line: JSON for the API, plain text for pages; the connection is closed after it,
    so no more of the body is read."""
    if scope.get("path", "").startswith("/api/"):
        body, kind = json.dumps({"error": text}).encode(), b"application/json"
    else:
        body, kind = (text + "\n").encode(), b"text/plain; charset=utf-8"
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", kind), (b"content-length", str(len(body)).encode()),
                            (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": body})
