"""One game, fully seen from the terminal: `referee match --verbose`
prints each decision's think time and note, `referee show` reads the file `match --replay`
wrote (and `export`'s files) and tells it exactly as `match --verbose` did; banknotes read
highest first everywhere, and the board line speaks of big dice only when the rules have them.
All through the real command line, with real bot processes."""

from __future__ import annotations

import json
import re
from pathlib import Path

from cli_support import referee
from report_support import play_league
from test_league import ROOT

BOTS = ROOT / "tests" / "bots"
SAMPLES = ROOT / "sample_bots"
SEED = "123456789012345678901234567890"
THINK = re.compile(r"  \(\d+\.\d ms\)$")


def test_match_verbose_shows_think_times_and_notes_and_show_reads_its_replay(
        tmp_path: Path) -> None:
    replay = tmp_path / "game.json"
    played = referee("match", BOTS / "noter.toml", SAMPLES / "greedy.toml", "--verbose",
                     "--seed", SEED, "--replay", replay).stdout.splitlines()
    record = json.loads(replay.read_text())
    placements = [line for line in played if " puts " in line]
    asked = [d for d in record["decisions"] if "latency_us" in d]
    assert len(placements) == len(record["decisions"]) and asked
    assert sum(bool(THINK.search(line)) for line in placements) == len(asked)
    assert any(line.startswith("      note: decision ") for line in played)
    assert any(line.startswith("      values: ") for line in played)
    assert sum("dice before scoring" in line for line in played) == record["rules"]["rounds"]
    # `show` reads that file and tells the game line for line as `match --verbose` did.
    shown = referee("show", replay).stdout.splitlines()
    assert shown[0].startswith(f"Game {record['game_id']}: classic, 2 seats")
    assert shown[1:] == played[:len(shown) - 1]
    assert played[len(shown) - 1].startswith("  noter: ")   # the summary follows the game
    # Without --verbose: the game as before, no think times or notes.
    plain = referee("match", BOTS / "noter.toml", SAMPLES / "greedy.toml",
                    "--seed", SEED).stdout.splitlines()
    assert not any(THINK.search(line) or "note" in line for line in plain if " puts " in line)


def test_show_reads_export_files_by_number_and_id(tmp_path: Path) -> None:
    league = play_league(tmp_path / "league", "--no-report")
    array = tmp_path / "sel.json"
    referee("export", league, "--out", array, "--games", "0-2")
    records = json.loads(array.read_text())
    assert isinstance(records, list) and len(records) == 3
    assert "3 records checked, 3 match their replay" in referee("verify", array).stdout
    second = referee("show", array, "2").stdout
    assert second.startswith(f"Game {records[1]['game_id']}:")
    assert referee("show", array, records[2]["game_id"]).stdout.startswith(
        f"Game {records[2]['game_id']}:")
    assert second == referee("show", league, "1").stdout
    many = referee("show", array, check=False)
    assert many.returncode != 0 and "holds 3 records: give GAME, a number from 1 to 3" in \
        many.stderr and "Traceback" not in many.stderr
    lines = tmp_path / "sel.jsonl"
    referee("export", league, "--out", lines, "--games", "0-2")
    assert referee("show", lines, "2").stdout == second
    folder = referee("show", league, check=False)
    assert folder.returncode != 0 and "give GAME too" in folder.stderr
    # The example id in `show --help` is one the command takes.
    help_text = referee("show", "--help").stdout
    example = re.search(r"game id\s+\((g[0-9a-f]+)\)", help_text)
    assert example and re.fullmatch(r"g[0-9a-f]{16}", example.group(1)), help_text
    assert re.fullmatch(r"g[0-9a-f]{16}", records[0]["game_id"])   # the form ids have


def casino_notes(line: str) -> list[list[int]]:
    """The notes of each casino in a 'Round N ... Casinos 1: $60k $30k; 2: ...' line."""
    listed = line.split("Casinos ", 1)[1]
    return [[int(n) for n in re.findall(r"\$(\d+)k", part)] for part in listed.split("; ")]


def test_banknotes_read_highest_first_and_big_dice_only_where_the_rules_have_them(
        tmp_path: Path) -> None:
    for rules, big in (("classic", False), ("biggy-slot", True)):
        replay = tmp_path / f"{rules}.json"
        played = referee("match", SAMPLES / "greedy.toml", SAMPLES / "random.toml", "-v",
                         "--rules", rules, "--seed", SEED, "--replay", replay)
        shown = referee("show", replay).stdout
        for text in (played.stdout, shown):
            rounds = [line for line in _unwrapped(text) if line.startswith("Round ")]
            assert rounds
            for line in rounds:
                notes = casino_notes(line)
                assert all(n == sorted(n, reverse=True) for n in notes), line
            boards = [line for line in text.splitlines() if "dice before scoring" in line]
            assert boards and all(("big dice count 2" in line) is big for line in boards)
        # The record keeps the notes in the order they were dealt: order is for display only.
        record = json.loads(replay.read_text())
        dealt = [notes for e in record["events"] if e["type"] == "round"
                 for notes in e["casinos"]]
        if rules == "classic":   # this seed deals a casino its notes lowest first
            assert any(notes != sorted(notes, reverse=True) for notes in dealt)


def _unwrapped(text: str) -> list[str]:
    """Lines with their continuations (indented further) joined back."""
    joined: list[str] = []
    for line in text.splitlines():
        if joined and line.startswith("    ") and not line.lstrip().startswith(
                ("puts", "note", "values")) and joined[-1].startswith("Round "):
            joined[-1] += " " + line.strip()
        else:
            joined.append(line)
    return joined
