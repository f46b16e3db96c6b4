"""Every league setting is checked, stored and honoured: one-line errors for bad input (through
the real CLI), a stored league refused when given other settings, and each documented option
played end to end with its effect checked. Leagues here are tiny (a few games of fast bots)."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
from pathlib import Path

import pytest
from cli_support import referee, start_referee
from test_league import TEST_BOTS, bot_spec
from wait_support import wait_for

from referee.league.folder import LeagueFolder
from referee.league.store import games_stored, load_record


def fails(*args: str | Path) -> str:
    """Run a referee command that must fail with a one-line error; return that line."""
    done = referee(*args, check=False, timeout=180)
    assert done.returncode != 0, done.stdout
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert lines, done.stdout
    return lines[-1]


def refused(*args: str | Path) -> str:
    """Run a referee command that must be refused before it plays, in this process (click's
    runner: the same command line, without an interpreter of its own to start); its one-line
    error. A refusal must not depend on a game being played, so none is started here."""
    from click.testing import CliRunner

    from referee.cli import main

    done = CliRunner().invoke(main, [str(arg) for arg in args])
    assert done.exit_code != 0, done.output
    # An exception that escaped the command would print a traceback in a terminal.
    assert done.exception is None or isinstance(done.exception, SystemExit), done.exception
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert lines, done.output
    return lines[-1]


def records(out: Path) -> list[dict]:
    db = sqlite3.connect(LeagueFolder(out).store_path)
    try:
        return [load_record(blob) for (blob,) in
                db.execute("SELECT record FROM games ORDER BY idx")]
    finally:
        db.close()


def drop_last_games(out: Path, count: int) -> None:
    """Make a finished league unfinished, as if the referee had been killed before its last
    `count` games were recorded."""
    db = sqlite3.connect(LeagueFolder(out).store_path)
    with db:
        db.execute("DELETE FROM games WHERE idx IN (SELECT idx FROM games ORDER BY idx DESC "
                   "LIMIT ?)", (count,))
    db.close()


def table_json(out: Path) -> dict:
    return json.loads(LeagueFolder(out).table_json.read_text())


def results(table: dict) -> list[dict]:
    """The table's rows without think times (they depend on timing)."""
    return [{k: v for k, v in row.items() if not k.startswith("think_")}
            for row in table["table"]]


@pytest.fixture()
def bots(tmp_path: Path) -> list[Path]:
    return [bot_spec(tmp_path, f"honest-{n}") for n in "abc"]


# ------------------------------------------------------------------ bad input, one line each

def test_usage_errors_are_usage_errors_not_internal(tmp_path: Path) -> None:
    line = refused("league")
    assert "give bot spec files, a league file, or --resume --out DIR" in line
    empty = tmp_path / "empty"
    empty.mkdir()
    assert "no league here" in refused("table", empty)


@pytest.mark.slow
def test_a_reader_that_goes_away_ends_the_output_quietly() -> None:
    # `referee rules | head`: the pipe's reader is gone before anything is written, so the
    # first write fails with EPIPE; the command stops with 141 (as a SIGPIPE'd tool would)
    # and says nothing, instead of printing "Error: [Errno 32] Broken pipe".
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        with start_referee("rules", stdout=write_end, stderr=subprocess.PIPE) as process:
            _, stderr = process.communicate(timeout=120)
    finally:
        os.close(write_end)
    assert (process.returncode, stderr) == (141, "")


def test_resume_where_there_is_no_league_creates_nothing(tmp_path: Path) -> None:
    out = tmp_path / "nothing"
    assert "holds no league to resume" in refused("league", "--resume", "--out", out)
    assert not out.exists()


def test_an_out_that_cannot_be_written_is_named(tmp_path: Path, bots: list[Path]) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    line = refused("league", *bots, "--games", "2", "--out", blocker / "out", "-q")
    assert f"--out {blocker / 'out'}" in line and "cannot create" in line


def test_match_checks_its_replay_file_before_playing(tmp_path: Path, bots: list[Path]) -> None:
    line = refused("match", *bots[:2], "--replay", tmp_path / "no-such-dir" / "game.json")
    assert "--replay" in line and "no directory" in line


@pytest.mark.parametrize(("text", "message"), [
    ("games = 0", "key 'games': expected a whole number of at least 1, got 0"),
    ("concurrency = 0", "key 'concurrency': expected a whole number of at least 1"),
    ('players = "4-2"', "key 'players': the range 4-2 is not in order"),
    ("players = 6", "key 'players': tables of 6 players do not fit rules 'classic'"),
    ("players = 4", "key 'players': tables of 4 players need at least 4 bots, the league has 3"),
    ("[ratings]\nsigma = -1.0", "key 'ratings': sigma must be positive"),
    ("[ratings]\nkappa = 1.0", "key 'ratings': unknown parameter 'kappa'; known parameters: mu"),
    ("[limits]\ndecision_ms = 0", "key 'limits': decision_ms must be a whole number of at "
                                  "least 1 ms"),
    ("[limits]\nthinking_ms = 5", "key 'limits': unknown limit 'thinking_ms'; known limits: "
                                  "decision_ms"),
    ("colour = 1", "unknown key 'colour'; known keys: autoplay_forced, bots"),
    ('seed = "x"', "key 'seed': a seed must be a whole number"),
])
def test_league_file_values_are_checked_with_file_and_key(tmp_path: Path, bots: list[Path],
                                                          text: str, message: str) -> None:
    league = tmp_path / "season.toml"
    league.write_text(f'bots = ["honest-*.toml"]\nout = "out"\n{text}\n')
    line = refused("league", league, "-q")
    assert str(league) in line and message in line
    assert not (tmp_path / "out").exists()


def test_bot_count_and_directory_specs_are_checked(tmp_path: Path, bots: list[Path]) -> None:
    out = tmp_path / "out"
    assert "a league needs at least 2 bots, got 1" in refused("league", bots[0], "--out", out)
    line = refused("league", *bots, "--players", "4", "--out", out)
    assert "--players: tables of 4 players need at least 4 bots, the league has 3" in line
    line = refused("league", *bots, "--players", "3-2", "--out", out)
    assert "--players" in line and "not in order" in line
    line = refused("league", bots[0], TEST_BOTS / "honest", "--out", out)
    assert "is a directory; give its bot spec file" in line
    assert not out.exists()


# ------------------------------------------------------------------ a stored league

@pytest.mark.slow
def test_a_stored_league_is_refused_other_settings_and_continued_with_its_own(
        tmp_path: Path, bots: list[Path]) -> None:
    out = tmp_path / "out"
    referee("league", *bots, "--games", "3", "--players", "2", "--out", out, "-q")
    first = table_json(out)
    line = fails("league", *bots, "--games", "5", "--rules", "classic-white", "--duplicate",
                 "--out", out, "-q")
    assert "holds a league with other settings" in line
    assert "games: stored 3, given 5" in line
    assert "rules: preset classic (given classic-white), neutral none (given white)" in line
    assert "duplicate: stored off, given on" in line
    assert f"--out {tmp_path / 'out-2'}" in line
    line = fails("league", *bots[:2], "--out", out, "-q")
    assert "bots: stored honest-a, honest-b, honest-c, given honest-a, honest-b" in line
    seed = first["extra"]["seed"]
    assert "seed: stored" in fails("league", *bots, "--seed", str(int(seed) + 1), "--out", out)
    # The same settings, or none: the stored league is reprinted.
    again = referee("league", *bots, "--games", "3", "--seed", seed, "--out", out, "-q")
    assert "3/3 games recorded" in again.stdout and "played now: 0" in again.stdout
    drop_last_games(out, 2)
    resumed = referee("league", "--resume", "--out", out, "-q")
    assert "3/3 games recorded" in resumed.stdout and "played now: 2" in resumed.stdout
    assert results(table_json(out)) == results(first)


@pytest.mark.slow
def test_a_bot_changed_since_the_league_started_needs_a_flag(tmp_path: Path) -> None:
    code = tmp_path / "code"
    shutil.copytree(TEST_BOTS / "honest", code / "honest")
    shutil.copy(TEST_BOTS / "botlib.py", code / "botlib.py")
    spec = tmp_path / "mine.toml"
    spec.write_text(f'name = "mine"\ncommand = ["{{python}}", "honest/main.py"]\n'
                    f'workdir = "{code}"\n')
    other = bot_spec(tmp_path, "other")
    out = tmp_path / "out"
    referee("league", spec, other, "--games", "3", "--out", out, "-q")
    drop_last_games(out, 1)
    with (code / "honest" / "main.py").open("a") as handle:
        handle.write("# a new version\n")
    line = fails("league", "--resume", "--out", out, "-q")
    assert "bot files changed since the league started: 'mine'" in line
    assert "--accept-changed" in line
    referee("league", "--resume", "--accept-changed", "--out", out, "-q")
    store = LeagueFolder(out).open_store()
    try:
        versions = store.versions()
    finally:
        store.close()
    assert len(versions["mine"]) == 2 and len(versions["other"]) == 1
    facts = table_json(out)["extra"]
    assert facts["bot_versions"] == {"mine": versions["mine"]}
    assert facts["bots"]["mine"] == versions["mine"][1]
    played = [next(b["version"] for b in record["bots"] if b["name"] == "mine")
              for record in records(out)]
    assert played[:2] == [versions["mine"][0]] * 2 and played[2] == versions["mine"][1]


@pytest.mark.slow
def test_a_failed_start_leaves_no_league(tmp_path: Path, bots: list[Path]) -> None:
    broken = bot_spec(tmp_path, "broken", "exit_at_start")
    out = tmp_path / "existing"
    out.mkdir()
    assert "bot 'broken'" in fails("league", *bots, broken, "--games", "2", "--out", out, "-q")
    assert out.exists() and list(out.iterdir()) == []


# ------------------------------------------------------------------ options end to end

@pytest.mark.slow
def test_facts_of_the_league_in_every_table_file(tmp_path: Path, bots: list[Path]) -> None:
    out = tmp_path / "out"
    done = referee("league", *bots, "--games", "3", "--players", "2-3", "--out", out)
    facts = table_json(out)["extra"]
    seed = facts["seed"]
    assert int(seed) >= 2**64   # drawn: 128 random bits
    assert f"league seed {seed}" in done.stdout
    assert facts["table_sizes"] == [2, 3] and facts["rules"]["preset"] == "classic"
    assert facts["ratings"]["beta"] == pytest.approx(25 / 6)
    assert set(facts["bots"]) == {"honest-a", "honest-b", "honest-c"}
    assert facts["referee_version"] and facts["started"]
    assert facts["schedule_balance"].startswith("games per bot")
    markdown = LeagueFolder(out).table_md.read_text()
    csv_text = LeagueFolder(out).table_csv.read_text()
    for text in (markdown, csv_text):
        assert f"seed: {seed}" in text and "table_sizes: 2, 3" in text
        assert "beta=4.167" in text and "schedule_balance: games per bot" in text
    assert "seat0_of_2_win_pct" in csv_text and "seat2_of_3_win_pct" in csv_text
    # -q leaves the terminal quiet but the files keep the balance line.
    quiet = tmp_path / "quiet"
    done = referee("league", *bots, "--games", "2", "--out", quiet, "-q")
    assert "games per bot" not in done.stdout
    assert "schedule_balance: games per bot" in LeagueFolder(quiet).table_md.read_text()


@pytest.mark.slow
def test_league_options_from_a_file_and_the_command_line(tmp_path: Path) -> None:
    bot_spec(tmp_path, "spy", "spy")
    bot_spec(tmp_path, "illegal", "illegal")
    league = tmp_path / "season.toml"
    league.write_text(
        'bots = ["spy.toml", "illegal.toml"]\ngames = 6\nplayers = 2\nout = "out"\n'
        "autoplay_forced = true\nstrikes_to_forfeit = 1\n"
        "[limits]\ndecision_ms = 4321\ngame_bank_ms = 9876\n"
        "[ratings]\nmu = 100.0\nsigma = 10.0\nbeta = 5.0\ntau = 0.0\ndraw_probability = 0.2\n")
    referee("league", league, "--games", "2", "-q")   # the command line overrides the file
    out = tmp_path / "out"
    games = records(out)
    assert len(games) == 2
    for record in games:
        spy_seat = next(b["seat"] for b in record["bots"] if b["name"] == "spy")
        assert "SPY start decision_ms=4321 game_bank_ms=9876 autoplay_forced=True" in \
            record["output"][spy_seat]
        # strikes_to_forfeit = 1: the illegal bot forfeits at its first strike.
        other = 1 - spy_seat
        assert sum(record["strikes"][other].values()) == 1
        assert [f["seat"] for f in record["forfeits"]] == [other]
        # autoplay_forced: a forfeited seat and forced choices are not asked.
        assert any(d.get("auto") == "forced" for d in record["decisions"])
    rows = {row["bot"]: row for row in table_json(out)["table"]}
    assert rows["spy"]["mu"] > 100 > rows["illegal"]["mu"]   # [ratings] mu = 100
    assert 10.0 > rows["spy"]["sigma"] > 5.0
    # The stored limits apply when the league is resumed.
    drop_last_games(out, 1)
    referee("league", "--resume", "--out", out, "-q")
    last = records(out)[-1]
    seat = next(b["seat"] for b in last["bots"] if b["name"] == "spy")
    assert "decision_ms=4321 game_bank_ms=9876" in last["output"][seat]


@pytest.mark.slow
def test_a_leagues_limits_are_a_ceiling_on_a_bots_own(tmp_path: Path) -> None:
    """Each limit the league sets is the smaller of it and the bot's own: a bot asking for
    more (decision_ms) gets the league's, one asking for less (game_bank_ms) keeps its own."""
    bot_spec(tmp_path, "spy", "spy", decision_ms=600000, game_bank_ms=5)
    bot_spec(tmp_path, "other", "spy")
    league = tmp_path / "season.toml"
    league.write_text('bots = ["spy.toml", "other.toml"]\ngames = 1\nplayers = 2\nout = "out"\n'
                      "[limits]\ndecision_ms = 4321\ngame_bank_ms = 9876\n")
    referee("league", league, "-q")
    record = records(tmp_path / "out")[0]
    said = {b["name"]: record["output"][b["seat"]] for b in record["bots"]}
    assert "SPY start decision_ms=4321 game_bank_ms=5 " in said["spy"], said
    assert "SPY start decision_ms=4321 game_bank_ms=9876 " in said["other"], said


@pytest.mark.slow
def test_duplicate_rounds_up_and_no_bot_process_sees_a_deal_twice(tmp_path: Path) -> None:
    specs = spy_specs(tmp_path, "spy-a", "spy-b", "spy-c")
    out = tmp_path / "out"
    done = referee("league", *specs, "--games", "4", "--players", "3", "--duplicate", "-j", "1",
                   "--out", out, "-q")
    assert "--duplicate: 4 games asked, 6 scheduled" in done.stderr
    games = records(out)
    assert len(games) == 6
    outputs = "\n".join(text for record in games for text in record["output"])
    assert outputs.count("SPY start") == 18
    assert "SPY REPEATED DEAL" not in outputs
    assert "SPY PREDICTED" not in outputs
    # Each rotation's table really had the same deal (the spies would have seen it again).
    deals = {json.dumps(record["events"][0]["casinos"]) for record in games}
    assert len(deals) == 2
    # And the processes that played a table's rotations are all different, for every bot.
    processes: dict[tuple[str, int], set[str]] = {}   # (bot, rotation) -> process tokens
    for index, record in enumerate(games):
        for seat in record["bots"]:
            token = re.search(r"process=(\w+)", record["output"][seat["seat"]]).group(1)
            processes.setdefault((seat["name"], index % 3), set()).add(token)
    for name in ("spy-a", "spy-b", "spy-c"):
        used = [processes[name, rotation] for rotation in range(3)]
        assert all(not a & b for i, a in enumerate(used) for b in used[i + 1:]), used


def spy_specs(directory: Path, *names: str) -> list[Path]:
    """Copies of the spy test bot under other names."""
    return [bot_spec(directory, name, "spy") for name in names]


@pytest.mark.slow
def test_a_small_seed_is_warned_about_because_bots_can_search_it(tmp_path: Path) -> None:
    """The spy does break a league whose seed is small: the warning is deserved, and the spy
    really can tell when it predicts (so its silence above means something)."""
    out = tmp_path / "out"
    done = referee("league", *spy_specs(tmp_path, "spy-a", "spy-b"), "--games", "2",
                   "--seed", "3", "--out", out, "-q")
    assert "warning: seed 3 has fewer than 64 bits: a bot could try every seed" in done.stderr
    outputs = "\n".join(text for record in records(out) for text in record["output"])
    assert "SPY PREDICTED" in outputs


@pytest.mark.slow
def test_a_match_reveals_no_seed(tmp_path: Path) -> None:
    replay = tmp_path / "game.json"
    done = referee("match", *spy_specs(tmp_path, "spy-a", "spy-b"), "--replay", replay)
    assert "seed " in done.stderr and "--seed" in done.stderr   # drawn, printed to reproduce
    record = json.loads(replay.read_text())
    assert record["seed"] < 2**64 and record["game_id"].startswith("g")
    assert str(record["seed"]) not in record["game_id"]
    outputs = "\n".join(record["output"])
    assert outputs.count("SPY start") == 2 and "SPY PREDICTED" not in outputs


@pytest.mark.slow
def test_ctrl_c_says_how_many_games_are_saved_and_how_to_resume(tmp_path: Path,
                                                                bots: list[Path]) -> None:
    out = tmp_path / "out"
    proc = start_referee("league", *bots, "--games", "60", "-j", "1", "--out", out, "-q",
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        wait_for("three stored games", lambda: games_stored(LeagueFolder(out).store_path) >= 3,
                 timeout=240, every=0.05)
    finally:
        proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=120)
    # 130 = 128 + SIGINT, what shells expect of an interrupt; the user asked for it: no "Error:"
    assert proc.returncode == 130 and "Traceback" not in stderr, stderr
    assert "Error" not in stderr, stderr
    store = LeagueFolder(out).store_path
    saved = games_stored(store)
    assert 3 <= saved < 60
    command = f"referee league --resume --out {out}"
    assert f"interrupted: {saved} games saved in {store}; resume with: {command}" in stderr
    resumed = referee(*command.split()[1:], timeout=300)
    assert "60/60 games recorded" in resumed.stdout


@pytest.mark.slow
def test_games_where_every_seat_forfeits_count_apart_and_rate_nobody(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("illegal-a", "illegal-b"):
        bot_spec(tmp_path, name, "illegal")
    league = tmp_path / "void.toml"
    league.write_text('bots = ["illegal-*.toml"]\ngames = 2\nplayers = 2\nout = "out"\n'
                      "strikes_to_forfeit = 1\n")
    done = referee("league", league, "-q")
    assert "2/2 games recorded (2 where every seat forfeited: no result)" in done.stdout
    out = tmp_path / "out"
    rows = table_json(out)["table"]
    for row in rows:
        assert (row["games"], row["wins"], row["all_forfeit"], row["forfeits"]) == (0, 0, 2, 2)
        assert row["mu"] == 25.0   # the prior: no rating changed
    assert table_json(out)["extra"]["games_all_forfeited"] == 2
    # The terminal table fits 80 columns.
    monkeypatch.setenv("COLUMNS", "80")
    shown = referee("table", out)
    drawn = [line for line in shown.stdout.splitlines() if set(line) & set("│┃━─")]
    assert drawn and max(len(line) for line in drawn) <= 80, shown.stdout
    assert "illegal-a" in shown.stdout


@pytest.mark.slow
def test_the_printed_secret_reproduces_the_league(tmp_path: Path, bots: list[Path]) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    referee("league", *bots, "--games", "4", "--players", "2-3", "-j", "1", "--out", first,
            "-q")
    secret = table_json(first)["extra"]["seed"]
    again = referee("league", *bots, "--games", "4", "--players", "2-3", "-j", "3",
                    "--seed", secret, "--out", second, "-q")
    assert "warning" not in again.stderr
    assert results(table_json(second)) == results(table_json(first))
    ids = [record["game_id"] for record in records(first)]
    assert ids == [record["game_id"] for record in records(second)]
    assert all(secret not in ident for ident in ids)
