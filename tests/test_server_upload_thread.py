"""An upload in progress never holds a web worker's pages up.

The club's ASGI application (`referee.server.asgi.application`, the one uvicorn serves in each
web worker) is driven in process, with the real SQLite database and the real unpacker: an upload
(the API's and the upload form's, with its session and CSRF token) is held inside its unpack on
a threading.Event; a page of the same process must answer 200 meanwhile, and the upload, let
go, becomes a version. Django's test Client is not used here: its handler runs every sync view
on one thread it shares, where the server gives each request a thread of its own.
"""

from __future__ import annotations

import asyncio
import re
import secrets
import threading
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from server_support import club_django, student_bot, zip_of
from wait_support import wait_for

club_django()

from django.test import Client, override_settings  # noqa: E402

from referee.server.asgi import application  # noqa: E402
from referee.server.club import uploads  # noqa: E402
from referee.server.club.models import BotVersion, CheckRun  # noqa: E402
from referee.server.club.people import join, make_join_code, new_token  # noqa: E402

PASSWORD = "a-long-club-password-7"
BOUND_S = 120.0   # a busy machine: a bound for a broken run, never a timing the test needs


class Answer:
    """What the application sent: status, headers (lower-case names) and body."""

    def __init__(self) -> None:
        self.status = 0
        self.headers: list[tuple[str, str]] = []
        self.body = b""

    def cookie(self, name: str) -> str:
        for key, value in self.headers:
            if key == "set-cookie" and value.startswith(f"{name}="):
                return value.split(";", 1)[0].split("=", 1)[1]
        raise AssertionError(f"no {name} cookie in {self.headers}")


async def request(method: str, path: str, *, query: str = "", body: bytes = b"",
                  headers: dict[str, str] | None = None) -> Answer:
    """One HTTP request through the club's ASGI application, as uvicorn hands it one."""
    sent, finished, answer = False, asyncio.Event(), Answer()
    raw = [(b"host", b"testserver")]
    raw += [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()]
    if method == "POST":
        raw.append((b"content-length", str(len(body)).encode()))
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
             "method": method, "scheme": "http", "path": path, "raw_path": path.encode(),
             "query_string": query.encode(), "root_path": "", "headers": raw,
             "client": ("127.0.0.1", 40000), "server": ("testserver", 80)}

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        await finished.wait()   # the client stays until its answer is complete
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            answer.status = message["status"]
            answer.headers = [(k.decode().lower(), v.decode()) for k, v in message["headers"]]
        elif message["type"] == "http.response.body":
            answer.body += message.get("body", b"")
            if not message.get("more_body"):
                finished.set()

    await application(scope, receive, send)
    return answer


@pytest.fixture()
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """This test's data folder (uploads, season file); the database is the process's."""
    monkeypatch.setenv("REFEREE_SEASON_FILE", str(tmp_path / "season.toml"))
    with override_settings(DATA_DIR=tmp_path):
        yield tmp_path


@pytest.fixture()
def held(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[threading.Event, threading.Event]]:
    """(entered, release): every unpack sets `entered`, then waits for `release` before it
    unpacks for real. Released at the end whatever happened, so no thread is left waiting."""
    entered, release = threading.Event(), threading.Event()
    real = uploads.unpack_upload

    def unpack_when_released(*args: Any, **kwargs: Any) -> Any:
        entered.set()
        release.wait(2 * BOUND_S)   # longer than the test waits for the page
        return real(*args, **kwargs)

    monkeypatch.setattr(uploads, "unpack_upload", unpack_when_released)
    try:
        yield entered, release
    finally:
        release.set()


def new_student() -> tuple[str, str]:
    """A new student's (signed-in session cookie, personal token)."""
    user = join(make_join_code("test", 1).code, f"stu{uuid.uuid4().hex[:6]}", PASSWORD, 3)
    client = Client()
    client.force_login(user)
    return client.cookies["sessionid"].value, new_token(user)[0]


def multipart(fields: dict[str, str], filename: str, data: bytes) -> tuple[str, bytes]:
    """(content type, body) of the upload form as a browser sends it."""
    boundary = secrets.token_hex(12)
    parts = [f'--{boundary}\r\nContent-Disposition: form-data; name="{key}"\r\n\r\n{value}\r\n'
             .encode() for key, value in fields.items()]
    parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="archive"; '
                 f'filename="{filename}"\r\nContent-Type: application/zip\r\n\r\n'.encode()
                 + data + b"\r\n")
    return f"multipart/form-data; boundary={boundary}", b"".join(parts) + \
        f"--{boundary}--\r\n".encode()


async def api_upload(session: str, token: str, bot: str,
                     archive: Path) -> Callable[[], Any]:
    """`referee submit`'s request (a personal token, the archive as the body)."""

    async def upload() -> Answer:
        return await request("POST", "/api/submit", query=f"bot={bot}&filename=bot.zip",
                             body=archive.read_bytes(),
                             headers={"Authorization": f"Bearer {token}",
                                      "Content-Type": "application/octet-stream"})
    return upload


async def form_upload(session: str, token: str, bot: str, archive: Path) -> Callable[[], Any]:
    """The My bots page's form: its CSRF cookie and token from the page, then the POST."""
    home = await request("GET", "/", headers={"Cookie": f"sessionid={session}"})
    assert home.status == 200, home.body[:300]
    csrf = home.cookie("csrftoken")
    found = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', home.body)
    assert found, home.body[:300]
    kind, body = multipart({"csrfmiddlewaretoken": found.group(1).decode(), "bot": bot},
                           "bot.zip", archive.read_bytes())

    async def upload() -> Answer:
        return await request("POST", "/upload", body=body, headers={
            "Cookie": f"sessionid={session}; csrftoken={csrf}", "Content-Type": kind})
    return upload


@pytest.mark.parametrize("way", [api_upload, form_upload], ids=["api", "form"])
def test_a_page_answers_while_an_upload_is_held_in_its_unpack(
        folder: Path, tmp_path: Path, held: tuple[threading.Event, threading.Event],
        way: Callable[..., Any]) -> None:
    entered, release = held
    session, token = new_student()
    bot = f"held-{uuid.uuid4().hex[:6]}"
    archive = zip_of(student_bot(tmp_path / "src", "speaker", "hi"), tmp_path / "speaker.zip")

    async def scenario() -> tuple[Answer, Answer]:
        upload = asyncio.create_task((await way(session, token, bot, archive))())
        await asyncio.to_thread(wait_for, "the upload to reach its unpack", entered.is_set,
                                timeout=BOUND_S)
        page = asyncio.create_task(request("GET", "/leaderboard/",
                                           headers={"Cookie": f"sessionid={session}"}))
        done, _ = await asyncio.wait({page, upload}, timeout=BOUND_S,
                                     return_when=asyncio.FIRST_COMPLETED)
        assert page in done, "the page did not answer while an upload was held in its unpack"
        assert not upload.done() and not release.is_set()   # the upload is held still
        release.set()
        return page.result(), await asyncio.wait_for(upload, BOUND_S)

    page, answer = asyncio.run(scenario())
    assert page.status == 200 and b"Leaderboard" in page.body, page.body[:300]
    version = BotVersion.objects.get(bot__name=bot)
    assert answer.status in (201, 302), answer.body[:300]
    if answer.status == 302:   # the form goes on to the version's page
        assert dict(answer.headers)["location"] == f"/versions/{version.pk}/"
    assert version.number == 1 and version.checkrun.state == CheckRun.QUEUED
    assert (folder / version.folder / version.spec).is_file()
