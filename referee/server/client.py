"""`referee submit`: send a bot to a club server and follow its check (standard library only,
so a student needs no more than `referee` itself)."""

from __future__ import annotations

import json
import os
import re
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from referee.bots.spec import LAYOUT_HELP, BotSpec, BotSpecError, load_spec, spec_of_folder
from referee.errors import UserError

# Caches, tool state and build output (`target/`: the server builds the bot itself).
SKIP_DIRS = {".git", "__pycache__", "node_modules", ".venv", "build", ".pytest_cache", "target"}


class SubmitError(UserError, RuntimeError):
    """The server refused the upload or could not be reached; one line."""


def _add_tree(archive: zipfile.ZipFile, folder: Path, prefix: str) -> int:
    """Add the files below `folder` as `prefix` + their relative path (links and SKIP_DIRS
    left out); how many."""
    count = 0
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS
                         and not (Path(root) / d).is_symlink())
        for name in sorted(files):
            path = Path(root) / name
            if path.is_symlink() or not path.is_file():
                continue
            archive.write(path, prefix + path.relative_to(folder).as_posix())
            count += 1
    return count


def zip_submission(spec_path: Path, out: Path) -> int:
    """Zip a submission as the guides lay it out: the spec at the top of the archive and the
    folder its `workdir` names, at the same place relative to the spec (`mybot.toml` and
    `mybot/`), or the spec's own folder when the spec lies inside it (`workdir = "."`).
    Nothing the student wrote is rewritten. The number of files written."""
    spec = _read_spec(spec_path)
    base = spec_path.resolve().parent
    workdir = spec.workdir or base
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        if workdir == base:
            count = _add_tree(archive, base, "")
        else:
            archive.write(spec_path, spec_path.name)
            count = 1 + _add_tree(archive, workdir, workdir.relative_to(base).as_posix() + "/")
    return count


def _read_spec(spec_path: Path) -> BotSpec:
    """The spec a submission is made from; SubmitError naming the fix if it cannot be sent."""
    try:
        spec = load_spec(spec_path)
    except BotSpecError as exc:
        hint = ""
        if "'workdir'" in str(exc):
            hint = (f"; a spec names its folder relative to itself: keep {spec_path.name} "
                    f"beside the folder (workdir = \"FOLDER\") or inside it (workdir = \".\")")
        raise SubmitError(f"{exc}{hint} (see {LAYOUT_HELP})") from None
    if spec.kind != "command":
        raise SubmitError(f"{spec_path}: an uploaded bot runs on the server from a command; "
                          f"for an image, send the archive of `podman save -o mybot.tar IMAGE` "
                          f"(see {LAYOUT_HELP})")
    return spec


def pack(path: Path, work: Path) -> Path:
    """The file to upload for `path`: an archive as it is; a spec zipped with its folder; a
    folder zipped with its spec (`spec_of_folder`). SubmitError when there is nothing to
    send."""
    if path.is_dir():
        try:
            path = spec_of_folder(path)
        except BotSpecError as exc:
            raise SubmitError(str(exc)) from None
    elif not path.is_file():
        raise SubmitError(f"{path}: no such file or folder")
    if path.suffix != ".toml":
        return path   # an archive (or not: the server says so)
    upload = work / f"{path.stem if path.stem != 'bot' else path.resolve().parent.name}.zip"
    if zip_submission(path, upload) == 0:
        raise SubmitError(f"{path}: no files to send")
    return upload


def _request(url: str, token: str, data: Any = None, length: int | None = None) -> dict:
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json"}
    if data is not None:
        headers["Content-Type"] = "application/octet-stream"
        headers["Content-Length"] = str(length)
    request = urllib.request.Request(url, data=data, headers=headers,
                                     method="POST" if data is not None else "GET")
    try:
        with urllib.request.urlopen(request, timeout=600) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as exc:
        try:
            text = json.loads(exc.read()).get("error", "")
        except (ValueError, AttributeError):
            text = ""
        raise SubmitError(text or f"the server answered {exc.code} {exc.reason}") from None
    except urllib.error.URLError as exc:
        raise SubmitError(f"cannot reach {url}: {exc.reason}") from None
    except (OSError, ValueError) as exc:
        raise SubmitError(f"{url}: {exc}") from None


def submit(path: Path, server: str, token: str, bot: str | None = None) -> dict:
    """Upload a bot (a spec or a folder, zipped here with each other, or an archive); the new
    version as the server says."""
    base = server.rstrip("/")
    with tempfile.TemporaryDirectory(prefix="referee-submit-") as work:
        upload = pack(path, Path(work))
        query = urllib.parse.urlencode({"bot": bot or "", "filename": upload.name})
        with upload.open("rb") as body:
            return _request(f"{base}/api/submit?{query}", token, body, upload.stat().st_size)


#: A season game's address: its page (/games/12/, /games/12/viewer) or its record (/api/games/12).
GAME_URL = re.compile(r"^(?P<base>https?://[^/?#]+(?:/[^?#]*?)?)/(?:api/)?games/(?P<index>\d{1,18})"
                      r"(?:/[^?#]*)?(?:[?#].*)?$")


def game_record_url(url: str) -> str:
    """The API address of the record of the season game at `url` (its page or its record);
    SubmitError if `url` names no season game."""
    found = GAME_URL.match(url.strip())
    if found is None:
        raise SubmitError(f"{url}: not the address of a season game (like "
                          f"http://club.example.org/games/12/)")
    return f"{found['base']}/api/games/{found['index']}"


def fetch_record(url: str, token: str) -> dict:
    """The record of the season game at `url` as the server shows it to the token's owner
    (GET /api/games/<index>); SubmitError in one line if it cannot be had."""
    return _request(game_record_url(url), token)


def follow(server: str, token: str, version: int, say: Callable[[str], None],
           poll_s: float = 1.0) -> dict:
    """Print the check's lines as the server gets them, until it passed, failed or was
    replaced by a newer upload before it ran, or the server holds it queued (a queued check
    with a line: the server cannot run uploads now, referee.server.shared.confinement)."""
    after = 0
    while True:
        state = _request(f"{server.rstrip('/')}/api/versions/{version}?after={after}", token)
        for line in state["lines"]:
            say(line["text"])
            after = line["seq"]
        if state["check_state"] in ("passed", "failed", "replaced") and not state["lines"]:
            return state
        if state["check_state"] == "queued" and after:
            return state
        if not state["lines"]:
            time.sleep(poll_s)
