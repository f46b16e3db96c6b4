"""No student can hold up another's check: a real `referee serve`, where one student's build
hangs and they upload again and again, still checks another student's upload next."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from proc_support import descendants
from server_support import ServerProcess, make_student, student_bot, zip_of
from wait_support import wait_for

HANG = ["sleep", "3600"]   # the build that never ends (until the test ends it)


def upload(server: ServerProcess, token: str, archive: Path, bot: str) -> dict:
    """POST an archive to /api/submit as `referee submit` does: the new version's state."""
    request = urllib.request.Request(
        f"{server.url}/api/submit?bot={bot}&filename=bot.zip", data=archive.read_bytes(),
        headers={"Authorization": f"Bearer {token}",
                 "Content-Type": "application/octet-stream"}, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=120) as answer:
            return json.loads(answer.read())
    except urllib.error.HTTPError as exc:
        raise AssertionError(f"upload of {bot} refused: {exc.read()!r}") from None


def version_state(server: ServerProcess, token: str, version: int) -> dict:
    request = urllib.request.Request(f"{server.url}/api/versions/{version}",
                                     headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, timeout=120) as answer:
        return json.loads(answer.read())


def checks(data: Path) -> dict[str, tuple[str, str | None, str]]:
    """league name -> (check state, started at, summary) of every version."""
    db = sqlite3.connect(f"file:{data / 'server.sqlite3'}?mode=ro", uri=True, timeout=60)
    try:
        rows = db.execute("SELECT v.league_name, c.state, c.started_at, c.summary "
                          "FROM club_checkrun c JOIN club_botversion v ON v.id = c.version_id")
        return {name: (state, started, summary) for name, state, started, summary in rows}
    finally:
        db.close()


def hanging_builds(pid: int) -> list[int]:
    """The hanging builds' processes below `pid`."""
    found = []
    for child in descendants(pid):
        try:
            argv = Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0")[:-1]
        except OSError:
            continue
        if argv == [part.encode() for part in HANG]:
            found.append(child)
    return found


@pytest.mark.sandbox
def test_a_hanging_build_and_many_uploads_hold_up_no_other_student(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    # Two check slots: the hanging build takes one; the other must go to the other student.
    (data / "season.toml").write_text("check_concurrency = 2\n")
    server = ServerProcess(data)
    try:
        alice, bob = make_student(data, "alice"), make_student(data, "bob")
        hang = student_bot(tmp_path / "hang", "hang", "h")
        spec = hang / "bot.toml"
        spec.write_text(f"build = {json.dumps(HANG)}\n" + spec.read_text())   # before [limits]
        hang_zip = zip_of(hang, tmp_path / "hang.zip")
        plain_zip = zip_of(student_bot(tmp_path / "plain", "plain", "p"), tmp_path / "plain.zip")

        upload(server, alice, hang_zip, "alice-hang")
        wait_for("the hanging build", lambda: hanging_builds(server.proc.pid))
        # While it hangs, alice uploads that bot twice more and another bot; then bob uploads.
        second = upload(server, alice, plain_zip, "alice-hang")
        # A third, changed (the same files again would be refused as nothing new).
        upload(server, alice, zip_of(student_bot(tmp_path / "plain2", "plain", "p2"),
                                     tmp_path / "plain2.zip"), "alice-hang")
        upload(server, alice, plain_zip, "alice-other")
        upload(server, bob, plain_zip, "bob-bot")
        wait_for("bob's check to start", lambda: checks(data)["bob-bot.v1"][1])

        seen = checks(data)
        bob_started = seen["bob-bot.v1"][1]
        assert seen["alice-hang.v1"][0] == "running"
        # Alice's queued checks wait for her running one, and bob's went ahead of them.
        for name in ("alice-hang.v3", "alice-other.v1"):
            state, started, _ = seen[name]
            assert started is None or started > bob_started, (name, seen)
        # Her newer upload replaced her queued one, visibly.
        assert seen["alice-hang.v2"][0] == "replaced", seen
        assert "replaced by v3" in seen["alice-hang.v2"][2]
        shown = version_state(server, alice, second["version"])
        assert shown["check_state"] == "replaced" and "replaced by v3" in shown["summary"]

        # The hang ends (as its time limit would end it): alice's next check runs.
        for pid in hanging_builds(server.proc.pid):
            os.kill(pid, signal.SIGKILL)
        wait_for("the hanging check's verdict",
                 lambda: checks(data)["alice-hang.v1"][0] == "failed")
        wait_for("alice's next check", lambda: checks(data)["alice-hang.v3"][1]
                 or checks(data)["alice-other.v1"][1])
        seen = checks(data)
        assert seen["alice-hang.v2"][1] is None   # a replaced check never runs
    finally:
        assert server.stop() == 0, server.output()
