"""What a student's uploads may take on a real club server (docs/security.md, "Untrusted
uploads, round 5"): a version's files are bounded at its upload and after its build; each
student has a disk budget; the built folders of replaced and retired versions are removed
while their archives and check reports stay. Real `referee serve`, real uploads through the
API `referee submit` uses, real checks in the sandbox."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import time
import urllib.error
import urllib.request
import zipfile
from pathlib import Path
from typing import Any

import pytest
from server_support import PASSWORD, ServerProcess, WebClient, make_student, student_bot, zip_of
from test_server_queue import HANG, hanging_builds
from wait_support import wait_for

from referee.bots.diskwatch import disk_use
from referee.server.shared.clubfolder import ClubFolder

pytestmark = [pytest.mark.slow, pytest.mark.sandbox]

MIB = 1024 * 1024
MAKE_SPARSE = ("import os\nfor n in range(3):\n"
               "    with open(f'huge{n}.bin', 'wb') as out:\n"
               "        out.truncate(120 * 1024 * 1024)\n")


def submit(server: ServerProcess, token: str, archive: Path, bot: str) -> tuple[int, dict]:
    """POST an archive to /api/submit as `referee submit` does: (HTTP status, its JSON)."""
    request = urllib.request.Request(
        f"{server.url}/api/submit?bot={bot}&filename=bot.zip", data=archive.read_bytes(),
        headers={"Authorization": f"Bearer {token}",
                 "Content-Type": "application/octet-stream"}, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=300) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def rows(data: Path, query: str) -> list[tuple[Any, ...]]:
    """The rows of a read-only query of the club's database."""
    db = sqlite3.connect(f"file:{data / 'server.sqlite3'}?mode=ro", uri=True, timeout=60)
    try:
        return list(db.execute(query))
    finally:
        db.close()


def check_of(data: Path, league_name: str) -> tuple[str, str]:
    """(check state, summary) of a version."""
    found = rows(data, "SELECT c.state, c.summary FROM club_checkrun c JOIN club_botversion v "
                       f"ON v.id = c.version_id WHERE v.league_name = '{league_name}'")
    return found[0] if found else ("", "")


def lines_of(data: Path, league_name: str) -> list[str]:
    """The lines of a version's check, in order."""
    return [text for (text,) in rows(
        data, "SELECT l.text FROM club_checkline l JOIN club_checkrun c ON c.id = l.run_id "
              f"JOIN club_botversion v ON v.id = c.version_id WHERE v.league_name = "
              f"'{league_name}' ORDER BY l.seq")]


def season_state(data: Path, league_name: str) -> str:
    found = rows(data, "SELECT season_state FROM club_botversion "
                       f"WHERE league_name = '{league_name}'")
    return found[0][0] if found else ""


def with_file(folder: Path, name: str, size: int) -> Path:
    """`folder` with a file of `size` zero bytes added (it takes its size on disk once
    unpacked; zipped, it takes a few KiB)."""
    with (folder / name).open("wb") as out:
        for _ in range(size // MIB):
            out.write(bytes(MIB))
    return folder


def zip_with_zeros(folder: Path, out: Path, files: int, size: int) -> Path:
    """A zip of `folder` (as `referee submit` makes it) with `files` files of `size` zero
    bytes more, written entry by entry."""
    zip_of(folder, out)
    with zipfile.ZipFile(out, "a", zipfile.ZIP_DEFLATED) as archive:
        for n in range(files):
            with archive.open(f"zeros{n}.bin", "w", force_zip64=True) as entry:
                for _ in range(size // MIB):
                    entry.write(bytes(MIB))
    return out


def test_files_past_the_bound_are_refused_at_upload_and_after_a_build(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    # The archive caps let a 300 MiB bot through: the bound on a version's files stops it.
    (data / "season.toml").write_text(f"unpacked_max_bytes = {1024 * MIB}\n")
    server = ServerProcess(data)
    try:
        token = make_student(data, "alice")
        big = zip_with_zeros(student_bot(tmp_path / "big", "big", "b"), tmp_path / "big.zip",
                             3, 100 * MIB)
        began = time.monotonic()
        status, answer = submit(server, token, big, "alice-big")
        print(f"the 300 MiB upload refused in {time.monotonic() - began:.1f} s")
        assert status == 400, answer
        assert "files of 300 MiB in all; at most 256 MiB in all" in answer["error"], answer
        assert "\n" not in answer["error"] and str(data) not in answer["error"], answer
        assert not (ClubFolder(data).bot_uploads("alice-big")).exists()

        sparse = student_bot(tmp_path / "sparse", "sparse", "s")
        (sparse / "make.py").write_text(MAKE_SPARSE)
        spec = sparse / "bot.toml"
        spec.write_text('build = ["{python}", "make.py"]\n' + spec.read_text())
        status, answer = submit(server, token, zip_of(sparse, tmp_path / "sparse.zip"),
                                "alice-sparse")
        assert status == 201, answer
        began = time.monotonic()
        wait_for("the sparse build's verdict", lambda: check_of(
            data, "alice-sparse.v1")[0] in ("passed", "failed"), server, timeout=600)
        print(f"the sparse build's check failed in {time.monotonic() - began:.1f} s")
        state, summary = check_of(data, "alice-sparse.v1")
        assert state == "failed", summary
        lines = lines_of(data, "alice-sparse.v1")
        said = " ".join(line.strip() for line in lines)   # the report wraps at 120 columns
        assert sum(line.startswith("FAIL") for line in lines) == 1, lines
        assert re.search(r"FAIL +build .*/bot: 7 files of 360 MiB in all; at most 256 MiB in "
                         r"all", said), lines
    finally:
        assert server.stop() == 0, server.output()


def test_a_replaced_versions_folder_goes_its_archive_and_report_stay(tmp_path: Path) -> None:
    """A student's build hangs, and they upload a bot five times more (changed a little each
    time: an identical upload is refused): each queued version is replaced by the next, and
    its 1 MiB folder goes; what the bot takes stays near two versions' folders, however often
    they upload."""
    data = tmp_path / "data"
    data.mkdir()
    server = ServerProcess(data)
    try:
        token = make_student(data, "alice")
        hang = student_bot(tmp_path / "hang", "hang", "h")
        spec = hang / "bot.toml"
        spec.write_text(f"build = {json.dumps(HANG)}\n" + spec.read_text())
        assert submit(server, token, zip_of(hang, tmp_path / "hang.zip"), "alice-hang")[0] == 201
        wait_for("the hanging build", lambda: hanging_builds(server.proc.pid), server)
        plain = with_file(student_bot(tmp_path / "plain", "plain", "p"), "mib.bin", MIB)
        for edit in range(5):
            (plain / "edit.txt").write_text(f"edit {edit}\n")
            status, answer = submit(server, token, zip_of(plain, tmp_path / f"plain{edit}.zip"),
                                    "alice-hang")
            assert status == 201, answer
        bot = ClubFolder(data).bot_uploads("alice-hang")
        for number in range(2, 6):
            assert check_of(data, f"alice-hang.v{number}")[0] == "replaced"
            assert "replaced by" in check_of(data, f"alice-hang.v{number}")[1]
            assert not (bot / str(number) / "bot").exists(), number
            assert (bot / str(number) / "archive").is_file(), number
        assert (bot / "6/bot/mib.bin").is_file()
        used = disk_use([bot])
        assert used < 3 * MIB, f"the bot takes {used / MIB:.1f} MiB after six uploads"
        # The replaced versions' pages still show their check's report.
        client = WebClient(server.url)
        client.sign_in("alice", PASSWORD)
        page = client.get(f"/versions/{answer['version'] - 1}/").text
        assert "replaced by v6" in page
        home = client.get("/").text
        assert 'id="disk-budget">2048 MiB' in home and 'id="disk-used">' in home, home
    finally:
        for pid in hanging_builds(server.proc.pid):
            os.kill(pid, signal.SIGKILL)
        assert server.stop() == 0, server.output()


def test_an_upload_past_the_disk_budget_is_refused_in_one_line(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "season.toml").write_text("student_disk_mb = 2\npublic_leaderboard = true\n")
    server = ServerProcess(data)
    try:
        token = make_student(data, "alice")
        heavy = zip_of(with_file(student_bot(tmp_path / "heavy", "heavy", "h"), "three.bin",
                                 3 * MIB), tmp_path / "heavy.zip")
        status, answer = submit(server, token, heavy, "alice-heavy")
        assert status == 400, answer
        line = answer["error"]
        assert "\n" not in line and "over your disk budget of 2 MiB" in line, line
        assert "this version 3." in line, line
        assert not rows(data, "SELECT id FROM club_botversion WHERE league_name LIKE 'alice-%'")
        season = WebClient(server.url).get("/season/").text
        assert 'id="student-disk-mb">2 MiB' in season and "built folder is removed" in season
        # Small as uploaded, its build writes 3 MiB: its check fails, saying so in one line.
        grows = student_bot(tmp_path / "grows", "grows", "g")
        (grows / "grow.py").write_text("open('three.bin', 'wb').write(bytes(3 << 20))\n")
        spec = grows / "bot.toml"
        spec.write_text('build = ["{python}", "grow.py"]\n' + spec.read_text())
        status, answer = submit(server, token, zip_of(grows, tmp_path / "grows.zip"),
                                "alice-grows")
        assert status == 201, answer
        wait_for("the growing build's verdict", lambda: check_of(
            data, "alice-grows.v1")[0] in ("passed", "failed"), server, timeout=600)
        state, summary = check_of(data, "alice-grows.v1")
        assert state == "failed" and "over your disk budget of 2 MiB" in summary, summary
        assert lines_of(data, "alice-grows.v1")[-1] == summary
        assert not (ClubFolder(data).version_upload("alice-grows", 1) / "bot").exists()
        assert (ClubFolder(data).version_upload("alice-grows", 1) / "archive").is_file()
    finally:
        assert server.stop() == 0, server.output()


def test_a_retired_versions_built_folder_goes_when_the_next_one_enters(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "season.toml").write_text('players = 2\ngames_per_bot_per_hour = 0\nround_games = 1\n'
                                      'house_bots = ["random"]\n')
    server = ServerProcess(data)
    try:
        token = make_student(data, "alice")
        plain = student_bot(tmp_path / "plain", "plain", "p")
        for number in (1, 2):
            (plain / "edit.txt").write_text(f"v{number}\n")   # identical uploads are refused
            archive = zip_of(plain, tmp_path / f"plain{number}.zip")
            assert submit(server, token, archive, "alice-bot")[0] == 201
            wait_for(f"v{number} to enter the season", lambda n=number: season_state(
                data, f"alice-bot.v{n}") == "active", server, timeout=600)
        first = ClubFolder(data).version_upload("alice-bot", 1)
        wait_for("v1's built folder to go", lambda: not (first / "bot").exists(), server,
                 timeout=120)
        assert (first / "archive").is_file()
        assert season_state(data, "alice-bot.v1") == "retired"
        assert check_of(data, "alice-bot.v1")[0] == "passed"
        assert any(line.startswith("PASS") for line in lines_of(data, "alice-bot.v1"))
        assert (ClubFolder(data).version_upload("alice-bot", 2) / "bot").is_dir()
    finally:
        assert server.stop() == 0, server.output()
