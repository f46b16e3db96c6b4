"""Notes from bots (referee/present/notes.py): what a record keeps of a decision's note, values."""

from __future__ import annotations

import math
import shutil

import pytest
from cli_support import referee
from hypothesis import given
from hypothesis import strategies as st

from referee.league.folder import LeagueFolder
from referee.present.notes import NAME_MAX_BYTES, NOTE_MAX_BYTES, VALUES_MAX, record_notes


def test_no_notes_add_nothing() -> None:
    assert record_notes("", {}) == {}


def test_notes_within_the_limits_are_kept_as_sent() -> None:
    assert record_notes("5 to casino 5", {"playouts": 120.0, "eval": 0.5}) == {
        "note": "5 to casino 5", "values": {"eval": 0.5, "playouts": 120}}


def test_oversized_notes_are_cut_and_flagged() -> None:
    kept = record_notes("é" * 200, {f"v{i:02}": i for i in range(20)} | {"x" * 33: 1.0,
                                                                        "nan": math.nan})
    assert kept["note_cut"] is True
    assert kept["note"] == "é" * (NOTE_MAX_BYTES // 2)
    assert list(kept["values"]) == [f"v{i:02}" for i in range(VALUES_MAX)]


@given(st.text(max_size=400), st.dictionaries(st.text(max_size=40), st.floats(), max_size=24))
def test_a_record_never_holds_more_than_the_limits(note: str, values: dict[str, float]) -> None:
    kept = record_notes(note, values)
    text = kept.get("note", "")
    assert len(text.encode("utf-8", "surrogatepass")) <= NOTE_MAX_BYTES
    assert note.startswith(text)
    numbers = kept.get("values", {})
    assert len(numbers) <= VALUES_MAX
    assert all(0 < len(k.encode("utf-8", "surrogatepass")) <= NAME_MAX_BYTES for k in numbers)
    assert all(math.isfinite(v) and v == values[k] for k, v in numbers.items())
    whole = text == note and len(numbers) == len(values)
    assert kept.get("note_cut", False) is (not whole)


@pytest.mark.slow
def test_a_bot_s_notes_are_recorded_with_its_moves_cut_never_struck(tmp_path) -> None:
    from pathlib import Path

    from referee.bots.spec import load_spec
    from referee.engine import preset
    from referee.game.single import run_match
    from referee.report.narrate import narrate

    bots = Path(__file__).parent / "bots"
    result = run_match([load_spec(bots / "noter.toml"), load_spec(bots / "honest.toml")],
                       preset("classic"), 7)
    assert [seat.strike_count for seat in result.seats] == [0, 0]
    record = result.record.to_json()
    mine = [d for d in record["decisions"] if d["seat"] == 0]
    assert mine and all("note" in d and "values" in d for d in mine)
    assert not any("note" in d for d in record["decisions"] if d["seat"] == 1)
    cut = [d for d in mine if d.get("note_cut")]
    whole = [d for d in mine if not d.get("note_cut")]
    assert cut and whole
    for d in cut:
        assert len(d["note"].encode()) <= NOTE_MAX_BYTES and d["note"].startswith("\x1b[31m")
        assert list(d["values"]) == [f"v{i:02}" for i in range(VALUES_MAX)]
    for d in whole:
        assert d["note"].startswith("decision ") and set(d["values"]) == {"n", "half"}
    text = "\n".join(narrate(record))
    assert "note (cut): \\x1b[31mred" in text and "\x1b" not in text
    assert "values: half=" in text


@pytest.mark.slow
def test_montecarlo_sends_its_playouts_and_evaluation_with_every_move(tmp_path) -> None:
    from pathlib import Path

    from referee.bots.spec import load_spec
    from referee.engine import preset
    from referee.game.single import run_match
    from referee.report.narrate import narrate

    samples = Path(__file__).resolve().parent.parent / "sample_bots"
    shutil.copytree(samples / "montecarlo", tmp_path / "montecarlo")
    spec = tmp_path / "mc.toml"   # the sample, with fewer playouts (a busy test machine)
    spec.write_text('name = "mc"\ncommand = ["{python}", "main.py"]\nworkdir = "montecarlo"\n'
                    'env = { MC_ROLLOUTS = "24" }\n')
    result = run_match([load_spec(spec), load_spec(samples / "greedy.toml")],
                       preset("classic"), 3)
    assert result.seats[0].strike_count == 0
    record = result.record.to_json()
    asked = [d for d in record["decisions"] if d["seat"] == 0 and "latency_us" in d]
    noted = [d for d in asked if "note" in d]
    assert len(noted) >= len(asked) // 2 > 0   # every move with a choice (not a single action)
    for d in noted:
        assert set(d["values"]) == {"eval", "playouts"} and 0 < d["values"]["playouts"] <= 24
        assert d["note"].startswith(f"{d['action'][0]}->") and "expected at round end" in d["note"]
    assert any(line.strip().startswith("values: eval=") for line in narrate(record))


@pytest.mark.slow
def test_a_bot_s_value_names_stay_bounded_in_every_output(tmp_path) -> None:
    """Issue 22, item 4: namer sends 16 values under new names with every decision. A league
    keeps its first NAMES_PER_BOT names and counts the others; the terminal table, table.md,
    table.json and the report say so in one line and stay small (a 45-game league grew
    table.json to 1.35 MB, a report page to 1.35 MB and the terminal table by 10,508 lines
    when every name was kept)."""
    import json

    from league_support import install_test_bot

    from referee.league.tables import NAMES_PER_BOT

    specs = [install_test_bot(tmp_path, "namer"), install_test_bot(tmp_path, "honest")]
    out = tmp_path / "out"
    done = referee("league", *specs, "--games", "30", "--players", "2", "--seed", str(2**70),
                   "--out", out, timeout=900, env={"COLUMNS": "100"}, check=False)
    assert done.returncode == 0, done.stderr
    store = LeagueFolder(out).open_store()
    sent = set()
    for record in store.records():
        seat = next(b["seat"] for b in record["bots"] if b["name"] == "namer")
        sent.update(name for d in record["decisions"] if d["seat"] == seat
                    for name in d.get("values", {}))
    store.close()
    assert len(sent) > 30 * 5 * 16   # every decision brought 16 new names
    row = next(r for r in json.loads(LeagueFolder(out).table_json.read_text())["table"]
               if r["bot"] == "namer")
    assert len(row["note_values"]) == NAMES_PER_BOT
    assert row["note_names_dropped"] == len(sent) - NAMES_PER_BOT
    line = (f"namer: {len(sent) - NAMES_PER_BOT} more value names dropped; a league keeps "
            f"the first {NAMES_PER_BOT} names of each bot")
    assert done.stdout.count(line) == 1, done.stdout
    assert LeagueFolder(out).table_md.read_text().count(line) == 1
    pages = [page.read_text() for page in (LeagueFolder(out).report / "bots").glob("*.html")]
    assert sum(f"{len(sent) - NAMES_PER_BOT} more value names dropped" in p for p in pages) == 1
    # Small whatever the bot sends: a few KiB each (the report's replay pages hold a game's
    # record, at most 16 values per decision).
    assert LeagueFolder(out).table_json.stat().st_size < 16_000
    assert LeagueFolder(out).table_md.stat().st_size < 8_000
    assert len(done.stdout.splitlines()) < 60
    for page in LeagueFolder(out).report.rglob("*.html"):
        assert page.stat().st_size < 100_000, page
