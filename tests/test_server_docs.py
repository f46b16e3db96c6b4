"""Every command docs/server.md and docs/bots/submitting.md show, run for real: the
`referee serve` lines on a free port until the server answers (tests/serve_briefly.py), the
league commands on a played season folder, the backup lines, the season file as shown, and
`referee submit` against a real server with a real student's token."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
import uuid
from pathlib import Path

import pytest
from doc_support import ROOT, SERVER, TOKEN, shell_commands
from runner_support import season_rows
from server_support import ServerProcess, make_student, play_season, student_bot
from wait_support import wait_for

SERVE = f"{sys.executable} {ROOT}/tests/serve_briefly.py"
SERVER_RUNS = {
    "referee serve": (f"{SERVE}", "first start: sign in at"),
    "referee serve --data club-data --season season.toml --host 127.0.0.1 --port 8000": (
        f"{SERVE} --data club-data --season season.toml --host 127.0.0.1",
        "season " + "{top}/season.toml"),
    "referee table club-data/season": ("cd played && referee table club-data/season",
                                       "League table"),
    "referee verify club-data/season": ("cd played && referee verify club-data/season",
                                        "match their replay"),
    "referee report club-data/season --out club-report": (
        "cd played && referee report club-data/season --out club-report", "club-report"),
    "referee serve --behind-proxy --trusted-origin https://club.example.org --allowed-host "
    "club.example.org": (f"{SERVE} --data proxied --behind-proxy --trusted-origin "
                         "https://club.example.org --allowed-host club.example.org",
                         "club server at"),
    "referee backup --data club-data club-2026-12-07.tar.gz": (
        "referee backup --data club-data club-2026-12-07.tar.gz",
        "backed up club-data to club-2026-12-07.tar.gz: 2 databases"),
    "referee restore club-2026-12-07.tar.gz --data club-data-restored": (
        "referee restore club-2026-12-07.tar.gz --data club-data-restored",
        "restored club-data-restored from club-2026-12-07.tar.gz: 2 databases"),
    "referee serve --data club-data-restored": (f"{SERVE} --data club-data-restored",
                                                 "club server at"),
    "referee serve --cluster local:2": (f"{SERVE} --data on-dask --cluster local:2",
                                        "club server at"),
    "referee serve --data club-data --cluster tls://W:8786": (
        # W is a real TLS scheduler on loopback, with credentials made as cluster.md makes them
        # and given to the server as server.md shows.
        "openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=referee-ca -keyout ca.key "
        "-out ca.pem 2>/dev/null; openssl req -newkey rsa:2048 -nodes -subj /CN=referee-cluster "
        "-keyout cluster.key -out cluster.csr 2>/dev/null; openssl x509 -req -in cluster.csr "
        "-CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -out cluster.pem 2>/dev/null; "
        "timeout 900 dask scheduler --protocol tls --host 127.0.0.1 --port 0 --no-dashboard "
        "--scheduler-file tls.json --tls-ca-file ca.pem --tls-cert cluster.pem --tls-key "
        "cluster.key >tls.log 2>&1 & scheduler=$!; trap 'kill $scheduler' EXIT; "
        "for _ in $(seq 600); do [ -s tls.json ] && break; sleep 0.5; done; "
        "export DASK_DISTRIBUTED__COMM__TLS__CA_FILE=ca.pem "
        "DASK_DISTRIBUTED__COMM__TLS__CLIENT__CERT=cluster.pem "
        "DASK_DISTRIBUTED__COMM__TLS__CLIENT__KEY=cluster.key; "
        f"{SERVE} --data tls-club --cluster "
        "$(python -c 'import json; print(json.load(open(\"tls.json\"))[\"address\"])')",
        "club server at"),
}


def run(top: Path, command: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "REFEREE_RUN_ID": uuid.uuid4().hex[:12],
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", command], cwd=top, env=env,
                          capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, f"{command}\n{done.stdout}\n{done.stderr}"
    return done


def test_every_command_of_the_server_docs_has_a_run() -> None:
    assert set(shell_commands(ROOT / "docs" / "server.md")) == set(SERVER_RUNS)
    assert set(shell_commands(ROOT / "docs" / "bots" / "submitting.md")) == \
        set(SUBMIT_RUNS) | set(REPLAY_RUNS)


def test_the_season_file_shown_is_what_the_server_reads(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    text = season_toml()
    data = tomllib.loads(text)
    (tmp_path / "season.toml").write_text(text)
    from referee.server.shared.seasonkeys import load_runner_settings

    runner = load_runner_settings(tmp_path / "season.toml")
    assert runner.round_games == data["round_games"]
    from referee.server.shared.seasonkeys import DEFAULT_PACE

    assert runner.games_per_bot_per_hour == data["games_per_bot_per_hour"] == DEFAULT_PACE
    assert runner.check_timeout_s == data["check_timeout_s"]
    from referee.bots.diskwatch import DEFAULT_WRITE_MAX_MB

    assert runner.write_max_mb == data["write_max_mb"] == DEFAULT_WRITE_MAX_MB
    from referee.server.shared.seasonkeys import RunnerSettings

    assert runner.forfeits_to_take_out == data["forfeits_to_take_out"] == \
        RunnerSettings().forfeits_to_take_out
    from server_support import club_django

    club_django()
    monkeypatch.setenv("REFEREE_SEASON_FILE", str(tmp_path / "season.toml"))
    from referee.server.shared.seasonread import server_limits

    limits = server_limits()
    assert limits.upload_max_bytes == data["upload_max_bytes"] == 50 * 1024 * 1024
    assert limits.test_games_per_hour == data["test_games_per_hour"]
    from referee.server.shared.seasonread import public_leaderboard

    assert public_leaderboard() is data["public_leaderboard"] is False


def season_toml() -> str:
    found = re.search(r"```toml\n(# season\.toml\n.*?)```",
                      (ROOT / "docs" / "server.md").read_text(), re.S)
    assert found, "docs/server.md no longer shows season.toml"
    return found.group(1)


def test_the_server_docs_commands_run_as_shown(tmp_path: Path) -> None:
    top = tmp_path / "docs"
    top.mkdir()
    (top / "season.toml").write_text(season_toml())
    play_season(top / "played" / "club-data", {"alpha.v1": "a", "beta.v1": "b"})
    for line in shell_commands(ROOT / "docs" / "server.md"):
        command, expected = SERVER_RUNS[line]
        done = run(top, command)
        assert expected.format(top=top) in done.stdout + done.stderr, (command, done.stdout)
    assert (top / "club-data-restored" / "server.sqlite3").stat().st_size > 0


SUBMIT_RUNS = {
    "referee submit mybot.toml --server http://127.0.0.1:8000": "uploaded mybot v1",
    "referee submit mybot/ --server http://127.0.0.1:8000": "uploaded mybot v2",
    "referee submit mybot.zip --server http://127.0.0.1:8000 --token rt_your_token_here --bot "
    "mybot": "uploaded mybot v3",
}


# `referee replay` lines: run in their block (replay_block), each line's output holds this.
REPLAY_RUNS = {
    "referee replay http://127.0.0.1:8000/games/12/ mybot.toml": "identical: your bot made",
    "referee replay game-12.json mybot.toml": "identical: your bot made",
}


def replay_block(doc: str) -> str:
    """The guide's `referee replay` block: the token, the game's address, its download."""
    found = re.search(r"```sh\n(export REFEREE_TOKEN=[^\n]*\nreferee replay .*?)```", doc, re.S)
    assert found, "docs/bots/submitting.md no longer shows the referee replay block"
    return found.group(1)


def game_of(data: Path, bot: str) -> list[int]:
    """[the index of a stored season game with one seat of `bot` (any version)], or []."""
    for index, bots in season_rows(data, "SELECT idx, bots FROM games ORDER BY idx"):
        if sum(1 for name in json.loads(bots) if name.split(".v")[0] == bot) == 1:
            return [int(index)]
    return []


def test_the_submitting_guides_commands_run_as_shown(tmp_path: Path) -> None:
    """The guide's layout (mybot.toml beside mybot/), its zip line, and each `referee submit`
    line to a passed check: the spec, the folder, and the archive. Then its `referee replay`
    block on a season game of mybot's against the house bot: by the game's address and by the
    record curl downloads, each identical (the bot is deterministic)."""
    (tmp_path / "data").mkdir()
    # Unpaced, one house bot: mybot's first season games come at once.
    (tmp_path / "data" / "season.toml").write_text(
        'players = 2\ngames_per_bot_per_hour = 0\nhouse_bots = ["greedy"]\n')
    server = ServerProcess(tmp_path / "data")
    try:
        token = make_student(server.data, "dora")
        folder = student_bot(tmp_path / "mybot", "mybot", "hello")
        spec = (folder / "bot.toml").read_text().replace('workdir = "."', 'workdir = "mybot"')
        (tmp_path / "mybot.toml").write_text(spec)
        (folder / "bot.toml").unlink()
        doc = (ROOT / "docs" / "bots" / "submitting.md").read_text()
        zip_line = re.search(r"```sh\n(zip -r mybot\.zip [^\n]*)\n```", doc).group(1)
        run(tmp_path, zip_line)
        submits = [line for line in shell_commands(ROOT / "docs" / "bots" / "submitting.md")
                   if line not in REPLAY_RUNS]
        for edit, line in enumerate(submits):
            if edit:   # the student changes the bot before each new version (an identical
                with (folder / "main.py").open("a") as main:   # upload is refused)
                    main.write(f"# edit {edit}\n")
                run(tmp_path, zip_line)
            command = line.replace(SERVER, server.url).replace(TOKEN, token)
            done = subprocess.run(
                ["bash", "-c", command], cwd=tmp_path, capture_output=True, text=True,
                timeout=900, env={**os.environ, "REFEREE_TOKEN": token,
                                  "PATH": f"{Path(sys.executable).parent}{os.pathsep}"
                                          f"{os.environ['PATH']}"})
            assert done.returncode == 0, done.stdout + done.stderr
            assert SUBMIT_RUNS[line] in done.stdout and "check passed" in done.stdout
        index = wait_for("a season game of mybot's", lambda: game_of(server.data, "mybot"),
                         server, timeout=900)[0]
        block = replay_block(doc).replace(SERVER, server.url).replace(TOKEN, token) \
            .replace("/games/12", f"/games/{index}")
        done = run(tmp_path, block)
        assert done.stdout.count("identical: your bot made") == len(REPLAY_RUNS), done.stdout
        assert (tmp_path / "game-12.json").stat().st_size > 0
    finally:
        assert server.stop() == 0, server.output()
