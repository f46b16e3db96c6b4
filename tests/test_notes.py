"""Notes from bots (referee/notes.py): what a record keeps of a decision's note and values."""

from __future__ import annotations

import math
import shutil

from hypothesis import given
from hypothesis import strategies as st

from referee.notes import NAME_MAX_BYTES, NOTE_MAX_BYTES, VALUES_MAX, record_notes


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


def test_a_bot_s_notes_are_recorded_with_its_moves_cut_never_struck(tmp_path) -> None:
    from pathlib import Path

    from referee.bots.spec import load_spec
    from referee.engine import preset
    from referee.report.narrate import narrate
    from referee.single import run_match

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


def test_montecarlo_sends_its_playouts_and_evaluation_with_every_move(tmp_path) -> None:
    from pathlib import Path

    from referee.bots.spec import load_spec
    from referee.engine import preset
    from referee.report.narrate import narrate
    from referee.single import run_match

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
