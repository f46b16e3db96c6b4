"""`referee play` (issue "Play and watch", items 1 and 2): a person plays a game against the
sample bots in a real pseudo-terminal, through the real CLI, the real sandbox and gRPC. Their
seat is a bot served over the protocol, held to the referee's clock like any bot; the record
verifies and opens in `show` and the viewer, also when Ctrl-C stops the game."""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path

import pytest
from cli_support import REFEREE, cli_env, referee
from proc_support import descendants, running
from pty_support import Terminal
from test_league import ROOT
from wait_support import wait_for

from referee.bots.spec import Limits, load_spec
from referee.engine import preset
from referee.game.human import PlaySession
from referee.league.folder import LeagueFolder

PROMPT = r"your move \(1-(\d+); 5 min per move, 30 min bank\): "
CAPTURE = os.environ.get("REFEREE_PLAY_CAPTURE")   # where to keep the screen (for docs/play.md)


def play(tmp_path: Path, *args: str) -> Terminal:
    """`referee play --seed 7 --players 3 ARGS` (the sample bots) on a terminal of 100 columns,
    standing in tmp_path."""
    return Terminal([*REFEREE, "play", "--seed", "7", "--players", "3", *args],
                    env=cli_env(env={"COLUMNS": "100"}), cwd=str(tmp_path))



@pytest.mark.sandbox
def test_digits_that_are_no_plain_number_are_asked_again(tmp_path: Path) -> None:
    """A superscript two is a digit to str.isdigit() and no number to int(): typed at the
    prompt it is asked again like any other answer that names no move (it used to end
    `referee play` with an internal error, exit 70, and no record). So are other scripts'
    digits, which int() would take, and Python's underscores."""
    terminal = play(tmp_path)
    try:
        terminal.expect(PROMPT)
        for bad in ("\u00b2", "\u0661", "1_0", "\uff11"):
            terminal.type(bad)
            terminal.expect(r"please type a number from 1 to \d\n *" + PROMPT)
        terminal.type("1")
        while terminal.expect(PROMPT + r"|record saved in (\S+) ").group(2) is None:
            terminal.type("1")
        assert terminal.wait() == 0
    finally:
        terminal.close()
    assert "Traceback" not in terminal.screen and "internal error" not in terminal.screen

@pytest.mark.sandbox
def test_a_whole_game_in_a_terminal_verifies_and_opens_in_show_and_the_viewer(
        tmp_path: Path) -> None:
    terminal = play(tmp_path, "--html", "game.html")
    try:
        first = terminal.expect(PROMPT)
        # What the person is shown before their first move: the seats, the casinos' notes,
        # the roll, the board and the legal choices, numbered.
        shown = terminal.screen[:first.end()]
        assert "classic, 3 seats: you (seat 0), greedy (seat 1), random (seat 2)" in shown
        assert re.search(r"Round 1, you \(seat 0\) starts\. Casinos 1: \$", shown)
        assert "    casino 6 ($" in shown and "    greedy: $0k in 0 notes, 8 dice left" in shown
        assert re.search(r"your roll: [1-6]( [1-6]){7}\n", shown)
        assert re.search(r"\n    1\. \d dic?e? ?\w* showing \d on casino \d\n", shown)
        # Bad answers are asked again, with no traceback.
        for bad in ("x", "99", "0", ""):
            terminal.type(bad)
            terminal.expect(r"please type a number from 1 to \d\n *" + PROMPT)
        terminal.type("1")
        moves = 1
        while terminal.expect(PROMPT + r"|record saved in (\S+) ").group(2) is None:
            terminal.type("1")
            moves += 1
        assert terminal.wait() == 0
    finally:
        terminal.close()
        if CAPTURE:
            Path(CAPTURE).write_text(terminal.screen, encoding="utf-8")
    screen = terminal.screen
    assert "Traceback" not in screen and "listening" not in screen
    # The others' moves as they happen, and each round's payout explained.
    assert re.search(r"greedy \(seat 1\) rolls [1-6 ]+\n    puts \d", screen)
    assert screen.count("  scoring: on each casino equal counts cancel first (R21)") == 4
    assert re.search(r"  casino \d: .*; pays ", screen)
    assert "Game over. Ranking (R26):" in screen
    record_file = tmp_path / re.search(r"record saved in (\S+) ", screen).group(1)
    record = json.loads(record_file.read_text())
    assert record["bots"][0] == {"seat": 0, "name": "you", "version": "human", "human": True}
    assert [bot.get("human") for bot in record["bots"][1:]] == [None, None]
    assert len([d for d in record["decisions"] if d["seat"] == 0]) == moves
    assert sorted(record["places"]) in ([1, 2, 3], [1, 1, 3], [1, 2, 2], [1, 1, 1])
    verified = referee("verify", record_file)
    assert verified.returncode == 0 and "1 match their replay" in verified.stdout
    shown = referee("show", record_file)
    assert shown.returncode == 0 and "Game over. Ranking (R26):" in shown.stdout
    assert record["game_id"] in (tmp_path / "game.html").read_text()


@pytest.mark.sandbox
def test_ctrl_c_leaves_with_the_record_of_what_was_played(tmp_path: Path) -> None:
    terminal = play(tmp_path, "--replay", "part.json", "--html", "part.html")
    try:
        for _ in range(3):
            terminal.expect(PROMPT)
            terminal.type("1")
        terminal.expect(PROMPT)
        bots = descendants(terminal.process.pid)
        assert len([cmd for cmd in bots.values() if "main.py" in cmd]) >= 2, bots
        terminal.ctrl_c()
        code = terminal.wait()
    finally:
        terminal.close()
    # One line, exit status 130, no traceback; every bot process stopped.
    after = terminal.screen[terminal.seen:].replace("^C", "")
    assert after == "\ninterrupted: the game so far (9 moves) is saved in part.json\n"
    assert code == 130
    assert running(*bots) == set()
    record = json.loads((tmp_path / "part.json").read_text())
    assert record["interrupted"] is True and record["bots"][0]["human"] is True
    assert len(record["decisions"]) == 9
    verified = referee("verify", tmp_path / "part.json")
    assert verified.returncode == 0 and "1 match their replay" in verified.stdout
    shown = referee("show", tmp_path / "part.json")
    assert shown.returncode == 0 and shown.stdout.count("you (seat 0) rolls") == 4
    assert record["game_id"] in (tmp_path / "part.html").read_text()


@pytest.mark.sandbox
def test_the_human_seat_is_held_to_the_referees_clock_like_any_bot() -> None:
    """A person who answers too late gets the timeout strike and substitute move any bot
    gets, and after three of them forfeits, as any bot would (docs/protocol.md). The limit is
    tiny here, and each answer is typed only once the referee has struck the question: no
    timing margin is involved."""
    def timeouts() -> int:
        return sum(d["seat"] == 1 and d.get("strike") == "timeout"
                   for d in session.decisions())

    asked: list[str] = []

    def read(prompt: str) -> str:
        # The k-th question is the k-th request: answer it once the referee struck it.
        asked.append(prompt)
        wait_for("the timeout strike", lambda: timeouts() >= len(asked), timeout=120,
                 every=0.01)
        return "1"

    lines: list[str] = []
    session = PlaySession(rules=preset("classic"), seed=11, seat=1, name="ann",
                          opponents=[load_spec(ROOT / "sample_bots" / "greedy.toml")],
                          read=read, write=lines.append,
                          limits=Limits(decision_ms=1, game_bank_ms=0))
    result = session.run()
    human = result.seats[1]
    assert human.strikes["timeout"] == 3 and human.forfeited and len(asked) == 3
    assert result.places[1] == 2 and result.record.meta["bots"][1]["human"] is True
    assert sum("[timeout strike: no decision within 1 ms; substitute move]" in line
               for line in lines) == 3
    assert any("[forfeited]" in line for line in lines)


@pytest.mark.sandbox
def test_a_human_seat_listens_however_deep_tmpdir_is(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`referee serve` puts TMPDIR in its data folder, which may be deep: the human seat's
    socket there would pass the kernel's 107 bytes, gRPC could not listen, and the referee
    saw a seat that never answered (a club's browser game failed at its start). The seat's
    folder goes to /tmp then, as a bot instance's does, and nothing stays behind."""
    deep = tmp_path.joinpath(*["a-rather-long-folder"] * 5)
    deep.mkdir(parents=True)
    monkeypatch.setattr(tempfile, "tempdir", str(deep))
    lines: list[str] = []
    session = PlaySession(rules=preset("classic"), seed=11, seat=0, name="ann",
                          opponents=[load_spec(ROOT / "sample_bots" / "greedy.toml")],
                          read=lambda prompt: "1", write=lines.append,
                          limits=Limits(decision_ms=600_000, game_bank_ms=600_000))
    result = session.run()
    assert result.record.meta["bots"][0]["human"] is True
    assert sum(result.seats[0].strikes.values()) == 0 and not result.seats[0].forfeited
    assert len(result.places) == 2
    assert list(deep.iterdir()) == []


@pytest.mark.sandbox
def test_no_league_or_season_store_takes_a_human_game(tmp_path: Path) -> None:
    """A season rates every game its store holds; a human game (its seat marked `"human":
    true`) is refused there, one line naming the seat, and the store stays as it was."""
    from referee.league.schedule import ScheduledGame
    from referee.league.store import HumanGameRefused

    session = PlaySession(rules=preset("classic"), seed=5, seat=0, name="ann",
                          opponents=[load_spec(ROOT / "sample_bots" / "greedy.toml")],
                          read=lambda _prompt: "1", write=lambda _line: None)
    result = session.run()
    assert result.record.meta["bots"][0]["human"] is True
    store = LeagueFolder(tmp_path).open_store()
    game = ScheduledGame(0, ("ann", "greedy"), 5, 0)
    store.create({"seed": 1}, {"ann": ("human", None), "greedy": ("v", None)}, [game])
    try:
        with pytest.raises(HumanGameRefused, match=r"game 0 has a human seat \(ann\); human "
                                                   r"games are never stored or rated"):
            store.save(game, result)
        assert store.count() == 0 and store.played() == []
    finally:
        store.close()


def test_bad_options_get_one_line_each(tmp_path: Path) -> None:
    greedy = ROOT / "sample_bots" / "greedy.toml"
    broken = tmp_path / "broken.toml"   # a bot that exits at once: it cannot start
    broken.write_text('name = "broken"\ncommand = ["{python}", "-c", "pass"]\n'
                      'workdir = "."\n')
    cases = {("--seat", "3", "--players", "3"): "Invalid value for --seat: 3 is not a seat "
                                                "of 3 (0-2)",
             ("--name", "a b"): "Invalid value for --name: letters, digits",
             ("--name", "greedy", str(greedy)): "'greedy' is a bot's name here",
             ("--players", "9"): "Invalid value for '--players'",
             (str(tmp_path / "none.toml"),): "none.toml",
             (str(broken),): "broken"}
    for args, said in cases.items():
        done = referee("play", *args, check=False)
        assert done.returncode in (1, 2) and said in done.stderr, (args, done.stderr)
        assert "Traceback" not in done.stderr + done.stdout
