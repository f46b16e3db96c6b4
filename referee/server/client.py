"""`referee submit`: send a bot to a club server and follow its check (standard library only,
so a student needs no more than `referee` itself)."""

from __future__ import annotations

import json
import os
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

SKIP_DIRS = {".git", "__pycache__", "node_modules", ".venv", "build", ".pytest_cache"}
TOKEN_ENV = "REFEREE_TOKEN"


class SubmitError(RuntimeError):
    """The server refused the upload or could not be reached; one line."""


def zip_folder(folder: Path, out: Path) -> int:
    """Zip a bot folder (its files at the top of the archive, links and caches left out);
    the number of files written."""
    count = 0
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for root, dirs, files in os.walk(folder):
            dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS
                             and not (Path(root) / d).is_symlink())
            for name in sorted(files):
                path = Path(root) / name
                if path.is_symlink() or not path.is_file():
                    continue
                archive.write(path, path.relative_to(folder).as_posix())
                count += 1
    if count == 0:
        raise SubmitError(f"{folder}: no files to send")
    return count


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
    """Upload a bot folder (zipped here) or archive; the new version as the server says."""
    base = server.rstrip("/")
    with tempfile.TemporaryDirectory(prefix="referee-submit-") as work:
        if path.is_dir():
            upload = Path(work) / f"{path.name}.zip"
            zip_folder(path, upload)
        elif path.is_file():
            upload = path
        else:
            raise SubmitError(f"{path}: no such file or folder")
        query = urllib.parse.urlencode({"bot": bot or "", "filename": upload.name})
        with upload.open("rb") as body:
            return _request(f"{base}/api/submit?{query}", token, body, upload.stat().st_size)


def follow(server: str, token: str, version: int, say: Callable[[str], None],
           poll_s: float = 1.0) -> dict:
    """Print the check's lines as the server gets them, until it passed, failed or was
    replaced by a newer upload before it ran."""
    after = 0
    while True:
        state = _request(f"{server.rstrip('/')}/api/versions/{version}?after={after}", token)
        for line in state["lines"]:
            say(line["text"])
            after = line["seq"]
        if state["check_state"] in ("passed", "failed", "replaced") and not state["lines"]:
            return state
        if not state["lines"]:
            time.sleep(poll_s)
