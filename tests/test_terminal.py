"""A league that says what it does, in lines that fit a terminal, through
the real command line: a line per finished game with `--verbose`, the seed and the schedule's
balance before the first game, what `--duplicate` does to the balance, every line within 80
columns with no trailing spaces at COLUMNS=80, and `report --open` on a machine without a
browser. (Ctrl-C's exit status 130: tests/test_league_settings.py.)"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from cli_support import referee
from test_league import ROOT, bot_spec

SAMPLES = ROOT / "sample_bots"


def run(*args: str | Path, env: dict[str, str] | None = None, check: bool = True,
        cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """The real CLI with COLUMNS=80 (as a terminal of 80 columns) unless `env` says else."""
    return referee(*args, env={"COLUMNS": "80", **(env or {})}, check=check, timeout=600,
                   cwd=cwd)


def too_wide(done: subprocess.CompletedProcess[str]) -> list[str]:
    """Every printed line over 80 columns or ending in a space."""
    return [line for line in (done.stdout + done.stderr).splitlines()
            if len(line) > 80 or line.endswith(" ")]


def test_verbose_prints_a_line_per_game_after_the_seed_and_balance(tmp_path: Path) -> None:
    bots = [bot_spec(tmp_path, "honest-a"), bot_spec(tmp_path, "honest-b"),
            bot_spec(tmp_path, "cheat", "illegal")]
    out = tmp_path / "out"
    done = run("league", *bots, "--games", "6", "--players", "3", "-j", "1", "--out", out,
               "--verbose", "--no-report", env={"COLUMNS": ""})   # piped: a line per game
    err = done.stderr.splitlines()
    intro = err.index(f"league in {out}: 3 bots, 6 games at tables of 3")
    seed = re.fullmatch(r"seed (\d+) \(stored in league\.db\)", err[intro + 1])
    assert seed and f"league seed {seed.group(1)}" in done.stdout   # the same, at the end
    assert err[intro + 2] == ("schedule: 6 games; games per bot 6-6, pair meetings 6-6, "
                              "seats per bot 2-2")
    games = [line for line in err if line.startswith("game ")]
    assert len(games) == 6
    assert sorted(int(line.split()[1]) for line in games) == list(range(6))
    assert intro < err.index(games[0])
    for line in games:
        # bots level on money share a place (1, 1 or 2, then the forfeited cheat last)
        standing = re.match(r"game \d+ g[0-9a-f]{16}: 1\. \S+ \$\d+k, [12]\. \S+ \$\d+k, "
                            r"3\. cheat \$\d+k", line)
        assert standing, line
        # the illegal bot is struck three times and forfeits: the line says so and why
        assert "strikes: cheat 3 illegal; cheat forfeited: 3 strikes; the last: illegal: " \
            in line and "is not legal here" in line, line
    quiet = run("league", *bots, "--games", "6", "--players", "3", "--out", tmp_path / "q",
                "--no-report", "-q", "-v", check=False)
    assert quiet.returncode != 0 and "--quiet and --verbose exclude each other" in quiet.stderr


def test_duplicate_says_at_the_start_what_it_does_to_the_balance(tmp_path: Path) -> None:
    bots = [bot_spec(tmp_path, f"honest-{n}") for n in "abcd"]
    done = run("league", *bots, "--games", "6", "--players", "3", "--duplicate",
               "--out", tmp_path / "out", "--no-report", env={"COLUMNS": ""})
    err = done.stderr.splitlines()
    note = next(line for line in err if line.startswith("--duplicate: bots meet a whole"))
    plain = re.search(r"without it: (games per bot \d+-\d+, pair meetings \d+-\d+, seats per "
                      r"bot \d+-\d+)$", note)
    assert plain, note
    first_game = next(n for n, line in enumerate(err) if line.startswith("games "))
    assert err.index(note) < first_game
    # "without it" is what the league without --duplicate schedules
    without = run("league", *bots, "--games", "6", "--players", "3", "--out",
                  tmp_path / "plain", "--no-report", "--seed",
                  re.search(r"^seed (\d+)", done.stderr, re.M).group(1), env={"COLUMNS": ""})
    assert f"schedule: 6 games; {plain.group(1)}" in without.stdout


@pytest.mark.sandbox
def test_every_line_fits_80_columns(tmp_path: Path) -> None:
    # As a user types them: paths relative to where they stand.
    names = [bot_spec(tmp_path, "honest-a"), bot_spec(tmp_path, "honest-b"),
             bot_spec(tmp_path, "cheat", "illegal")]
    bots = [path.name for path in names]
    here = {"cwd": tmp_path}
    at_root = {"cwd": ROOT}
    runs = [run("league", *bots, "--games", "6", "--players", "3", "--out", "out", "-v",
                **here),
            run("table", "out", **here), run("show", "out", "2", **here),
            run("check", "sample_bots/greedy.toml", "--games", "1", **at_root),
            run("match", "sample_bots/greedy.toml", "sample_bots/random.toml", "-v",
                "--rules", "biggy-slot", **at_root),
            run("rules"), run("--help")]
    # Every command's help, the ones added later included.
    from referee.cli import main
    commands = sorted(main.commands)
    assert {"league", "gauntlet", "serve", "submit"} <= set(commands)
    helps = [run(command, "--help") for command in commands]
    runs += helps
    assert "--seed SEED" in runs[commands.index("league") - len(commands)].stdout
    for command, done in zip(commands, helps, strict=True):
        # A seed's range is said in words, not as a number of 78 digits.
        assert not re.search(r"\d{30}", done.stdout), command
    seed_line = next(line for line in runs[0].stdout.splitlines()
                     if line.startswith("league seed "))
    assert len(re.search(r"\d+", seed_line).group(0)) > 30   # a drawn 128-bit seed
    for done in runs:
        assert too_wide(done) == [], done.args


def test_report_open_without_a_browser_says_so(tmp_path: Path) -> None:
    bots = [bot_spec(tmp_path, "honest-a"), bot_spec(tmp_path, "honest-b")]
    out = tmp_path / "out"
    run("league", *bots, "--games", "2", "--out", out, "-q", "--no-report")
    done = referee("report", out, "--open", unset=("DISPLAY", "WAYLAND_DISPLAY", "BROWSER", "TERM"),
                   timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip().splitlines() == [
        f"--open: no web browser found on this machine; open {out}/report/index.html in one"]
