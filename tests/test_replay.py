"""`referee replay`: a stored game played again with a local bot in one seat, real bot
subprocesses over gRPC. A deterministic bot replayed against its own games reproduces them (exit
0); another bot stops at its first deviation, a crashing one at its crash (exit 1), each with one
block naming the move, the state and both moves; bad input is one line, exit 2. (The record
downloaded from a real server: tests/test_server_api.py and tests/test_server_docs.py.)"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from cli_support import referee

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_bots"
TEST_BOTS = ROOT / "tests" / "bots"
SEED = "58209749445923078164062862089986280348"


@pytest.fixture(scope="module")
def league(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A small league of the sample random and greedy bots; its records by index."""
    top = tmp_path_factory.mktemp("replay")
    out = top / "league-out"
    referee("league", SAMPLES / "random.toml", SAMPLES / "greedy.toml", "--games", "4",
            "--players", "2", "--seed", SEED, "--out", out, "--quiet", "--no-report",
            timeout=600)
    records = {}
    for index in range(2):
        text = referee("show", out, str(index), "--json").stdout
        path = top / f"game-{index}.json"
        path.write_text(text)
        records[index] = path
    return {"top": top, "records": records}


def seat_of(path: Path, name: str) -> int:
    data = json.loads(path.read_text())
    return next(bot["seat"] for bot in data["bots"] if bot["name"] == name)


def test_each_sample_bot_reproduces_its_own_league_games(league: dict[str, Any]) -> None:
    for path in league["records"].values():
        data = json.loads(path.read_text())
        for name in ("random", "greedy"):
            seat = seat_of(path, name)
            moves = sum(1 for d in data["decisions"] if d["seat"] == seat)
            done = referee("replay", path, SAMPLES / f"{name}.toml", check=False)
            assert done.returncode == 0, done.stdout + done.stderr
            assert done.stdout.startswith(f"identical: your bot made every one of seat {seat} "
                                          f"({name})'s {moves} moves"), done.stdout


def test_another_bot_stops_at_its_first_deviation(league: dict[str, Any]) -> None:
    path = league["records"][0]
    data = json.loads(path.read_text())
    seat = seat_of(path, "random")
    done = referee("replay", path, SAMPLES / "greedy.toml", "--seat", str(seat), check=False)
    assert done.returncode == 1, done.stdout + done.stderr
    out = done.stdout
    head = re.match(r"deviated at move (\d+) of (\d+) \(round (\d+), seat (\d+) \(random\)'s "
                    r"decision (\d+), ", out)
    assert head, out
    move, total, _, shown_seat, turn = map(int, head.groups())
    assert (total, shown_seat) == (len(data["decisions"]), seat)
    entry = data["decisions"][move - 1]
    assert entry["seat"] == seat
    # Its decision number counts the seat's decisions up to this move.
    assert turn == sum(1 for d in data["decisions"][:move] if d["seat"] == seat)
    value, slot = entry["action"]
    recorded = f"{value}->slot" if slot else f"{value}->casino {value}"
    lines = out.splitlines()
    assert f"recorded: played {recorded}" in lines, out
    now = next(line for line in lines if line.startswith("your bot now: played "))
    assert now != f"your bot now: played {recorded}"
    # The state it saw: the board and the roll with the legal moves, the recorded one among them.
    assert "what your bot saw:" in lines and "  board:" in lines
    assert any(line.startswith("  your roll: ") for line in lines)
    legal = [line for line in lines if re.match(r"    \d+\. ", line)]
    assert any(line.endswith(f"on casino {value}") or line.endswith("on the slot")
               for line in legal), out
    assert "Traceback" not in done.stdout + done.stderr


def test_a_bot_that_crashes_stops_with_the_failure(tmp_path: Path) -> None:
    """honest plays the first legal move; crash_mid plays it too, three times, then its
    process exits: the replay stops there, at the fourth decision, with the crash."""
    record = tmp_path / "honest.json"
    referee("match", TEST_BOTS / "honest.toml", SAMPLES / "greedy.toml", "--seed", SEED,
            "--replay", record)
    done = referee("replay", record, TEST_BOTS / "crash_mid.toml", "--seat", "0", check=False)
    assert done.returncode == 1, done.stdout + done.stderr
    out = done.stdout
    assert re.match(r"failed at move \d+ of \d+ \(round \d+, seat 0 \(honest\)'s decision 4, "
                    r"the 3 before it matched\)", out), out
    assert re.search(r"^recorded: played \d->", out, re.M), out
    assert re.search(r"^your bot now: a crash strike: the bot's process ended", out, re.M), out
    assert "crash_mid: exiting on purpose" in out   # what it printed, after the block
    # Its own crashed game, replayed with it: the recorded strike and the same failure.
    own = tmp_path / "crashed.json"
    referee("match", TEST_BOTS / "crash_mid.toml", SAMPLES / "greedy.toml", "--seed", SEED,
            "--replay", own)
    done = referee("replay", own, TEST_BOTS / "crash_mid.toml", check=False)
    assert done.returncode == 1, done.stdout + done.stderr
    assert re.search(r"^recorded: a crash strike: ", done.stdout, re.M), done.stdout
    assert "decision 4, the 3 before it matched" in done.stdout


def test_bad_input_is_one_line_and_exit_2(league: dict[str, Any], tmp_path: Path) -> None:
    path = league["records"][0]
    simulated = tmp_path / "simulated.jsonl"
    referee("simulate", "--players", "2", "--games", "1", "--replay", simulated)
    not_record = tmp_path / "not-record.json"
    not_record.write_text('{"format": "something else"}')
    broken = tmp_path / "broken.json"
    data = json.loads(path.read_text())
    data["decisions"][3]["action"] = [7, False]
    broken.write_text(json.dumps(data))
    bad_seed = tmp_path / "bad-seed.json"
    bad_seed.write_text(json.dumps({**json.loads(path.read_text()), "seed": -1}))
    cases = [
        ((bad_seed, SAMPLES / "random.toml"), "the record cannot be played: a game seed must"),
        ((tmp_path / "missing.json", SAMPLES / "random.toml"), "no such file"),
        ((not_record, SAMPLES / "random.toml"), "not a game record"),
        ((simulated, SAMPLES / "random.toml"), "the record has no decisions"),
        ((broken, SAMPLES / "random.toml"), "decision 4 does not match its placement"),
        ((path, SAMPLES / "random.toml", "--seat", "5"), "the game has seats 0-1, not 5"),
        ((path, SAMPLES / "montecarlo.toml"), "no seat of the game played 'montecarlo'"),
        ((path, tmp_path / "nobot.toml"), "no such file"),
        (("http://127.0.0.1:8000/games/3/", SAMPLES / "random.toml"), "no token"),
        (("http://127.0.0.1:8000/leaderboard/", SAMPLES / "random.toml", "--token", "rt_x"),
         "not the address of a season game"),
    ]
    for args, expected in cases:
        done = referee("replay", *args, check=False, unset=("REFEREE_TOKEN",))
        assert done.returncode == 2, (args, done.stdout, done.stderr)
        assert done.stdout == "", (args, done.stdout)
        assert done.stderr.count("\n") == 1 and done.stderr.startswith("error: "), done.stderr
        assert expected in done.stderr, (args, done.stderr)


def test_a_bot_that_cannot_start_fails_in_one_line(league: dict[str, Any]) -> None:
    path = league["records"][0]
    done = referee("replay", path, TEST_BOTS / "exit_at_start.toml", "--seat", "0", check=False)
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stdout == "" and done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith("failed: your bot could not start: "), done.stderr
