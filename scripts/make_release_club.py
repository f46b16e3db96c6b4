"""Make tests/fixtures/club-<REV>.tar.gz: a club's data folder written by an older release.

Run with a checkout of that release (`git worktree add --detach DIR REV`):

    python scripts/make_release_club.py DIR REV

It starts that release's `referee serve` on a loopback port in a new data folder with a short
season (two players, one round of 4 games), joins two students, sends each a sample bot with that
release's `referee submit`, waits until the round is played and fitted, stops the server, and
packs the folder with what the test needs to sign in (`fixture.json`: passwords and tokens). The
test (tests/test_server_upgrade.py) starts this referee on it.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
SEASON = """\
name = "Club of an older release"
rules = "classic"
players = 2
seed = 3
round_games = 4
max_rounds = 1
refit_seconds = 1
"""
PASSWORD = "a long password 1"
STUDENTS = {"ann": "greedy", "ben": "random"}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait(what: str, test, seconds: float = 900) -> None:  # noqa: ANN001
    deadline = time.monotonic() + seconds
    while not test():
        if time.monotonic() > deadline:
            raise SystemExit(f"gave up waiting for {what}")
        time.sleep(1)


def main(release: Path, rev: str) -> None:
    env = {**os.environ, "PYTHONPATH": str(release)}
    python = [sys.executable, "-m", "referee.cli"]
    with tempfile.TemporaryDirectory() as top:
        data = Path(top) / "club-data"
        data.mkdir(mode=0o700)
        (data / "season.toml").write_text(SEASON)
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        log = Path(top) / "serve.log"
        server = subprocess.Popen([*python, "serve", "--data", str(data), "--port", str(port)],
                                  env=env, cwd=top, stdout=log.open("w"), stderr=subprocess.STDOUT,
                                  start_new_session=True)
        try:
            def answers() -> bool:
                try:
                    with urllib.request.urlopen(f"{url}/login/", timeout=5) as page:
                        return page.status == 200
                except OSError:
                    return False

            wait("the server", answers)
            organiser = re.search(r"as 'organiser' with password (\S+)", log.read_text())
            assert organiser, log.read_text()
            code = ("import django, json; django.setup()\n"
                    "from referee.server.club.people import make_join_code, join, new_token\n"
                    "tokens = {}\n"
                    f"for name in {list(STUDENTS)!r}:\n"
                    f"    tokens[name] = new_token(join(make_join_code().code, name, "
                    f"{PASSWORD!r}, 3))[0]\n"
                    "print(json.dumps(tokens))\n")
            made = subprocess.run([sys.executable, "-c", code], env={
                **env, "REFEREE_SERVER_DATA": str(data),
                "DJANGO_SETTINGS_MODULE": "referee.server.settings"}, cwd=top,
                capture_output=True, text=True, check=True)
            tokens = json.loads(made.stdout)
            for name, bot in STUDENTS.items():
                folder = Path(top) / name   # the sample bot in a folder of its own, as uploaded
                folder.mkdir()
                (folder / "main.py").write_bytes(
                    (release / "sample_bots" / bot / "main.py").read_bytes())
                (folder / "bot.toml").write_text(
                    f'name = "{bot}"\ncommand = ["{{python}}", "main.py"]\nworkdir = "."\n')
                subprocess.run([*python, "submit", f"{folder}/", "--server", url, "--token",
                                tokens[name]], env=env, cwd=top, check=True)
            db = data / "season" / "league.db"

            def played() -> bool:
                if not db.exists():
                    return False
                with sqlite3.connect(db) as store:
                    return store.execute("SELECT count(*) FROM games").fetchone()[0] == 4

            wait("the round's games", played)
            time.sleep(10)   # its refit (refit_seconds = 1)
        finally:
            server.send_signal(signal.SIGTERM)
            server.wait(timeout=300)
        (data / "fixture.json").write_text(json.dumps({
            "release": rev, "organiser_password": organiser.group(1),
            "password": PASSWORD, "tokens": tokens, "bots": STUDENTS, "games": 4}, indent=1))
        out = HERE / "tests" / "fixtures" / f"club-{rev}.tar.gz"
        out.parent.mkdir(exist_ok=True)
        with tarfile.open(out, "w:gz") as tar:
            tar.add(data, arcname="club-data", filter=lambda info: None if
                    info.name.split("/")[1:2] in (["tmp"], ["runner.lock"]) else info)
        print(f"wrote {out} ({out.stat().st_size} bytes)")


if __name__ == "__main__":
    main(Path(sys.argv[1]).resolve(), sys.argv[2])
