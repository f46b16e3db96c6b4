"""`referee show`, `export` and `verify` on a real league's stored games."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_support import referee
from report_support import play_league, stored_records


@pytest.fixture(scope="module")
def league(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return play_league(tmp_path_factory.mktemp("records") / "league", "--no-report")


def test_export_as_files_and_as_json_lines_round_trips_the_store(league: Path,
                                                                   tmp_path: Path) -> None:
    records = stored_records(league)
    assert len(records) == 12
    referee("export", league, "--out", tmp_path / "files")
    files = sorted(tmp_path.joinpath("files").glob("*.json"))
    by_id = {json.loads(p.read_text())["game_id"]: json.loads(p.read_text()) for p in files}
    assert by_id == {r["game_id"]: r for r in records}
    referee("export", league, "--out", tmp_path / "all.jsonl")
    lines = tmp_path.joinpath("all.jsonl").read_text().splitlines()
    assert [json.loads(line) for line in lines] == records
    # Seeds are 64-bit: they survive the files exactly.
    assert [json.loads(line)["seed"] for line in lines] == [r["seed"] for r in records]


def test_export_a_selection_of_indexes_ranges_and_ids(league: Path, tmp_path: Path) -> None:
    records = stored_records(league)
    out = tmp_path / "some.jsonl"
    referee("export", league, "--out", out, "--games", f"0-2,7,{records[10]['game_id']}")
    got = [json.loads(line)["game_id"] for line in out.read_text().splitlines()]
    assert got == [records[i]["game_id"] for i in (0, 1, 2, 7, 10)]
    missing = referee("export", league, "--out", out, "--games", "99", check=False)
    assert missing.returncode != 0 and "no recorded game 99" in missing.stderr
    assert "Traceback" not in missing.stderr


def test_show_tells_the_game_and_json_prints_its_record(league: Path) -> None:
    record = stored_records(league)[5]
    text = referee("show", league, "5").stdout
    names = [bot["name"] for bot in record["bots"]]
    assert text.count("Round ") == record["rules"]["rounds"]
    assert text.count("dice before scoring") == record["rules"]["rounds"]
    assert "Game over. Ranking (R26):" in text
    assert all(name in text for name in names)
    places = sum(1 for e in record["events"] if e["type"] == "place")
    assert text.count(" puts ") == places
    by_id = referee("show", league, record["game_id"], "--json").stdout
    assert json.loads(by_id) == record


def test_show_marks_every_strike_of_a_game(league: Path) -> None:
    records = stored_records(league)
    index, record = next((i, r) for i, r in enumerate(records)
                         if any(d.get("strike") for d in r["decisions"]))
    strikes = sum(1 for d in record["decisions"] if d.get("strike"))
    text = referee("show", league, str(index)).stdout
    assert text.count(" strike: ") == strikes


def test_verify_passes_every_stored_game_and_fails_a_changed_payout(league: Path,
                                                                    tmp_path: Path) -> None:
    ok = referee("verify", league)
    assert "12 records checked, 12 match their replay" in ok.stdout
    record = stored_records(league)[4]
    score = next(e for e in record["events"] if e["type"] == "score" and e["payouts"])
    who, note = score["payouts"][0]
    score["payouts"][0] = [who, note + 10000]
    changed = tmp_path / "changed.json"
    changed.write_text(json.dumps(record))
    bad = referee("verify", changed, check=False)
    assert bad.returncode == 1, bad.stdout
    assert f"event {record['events'].index(score)} (score)" in bad.stdout
    assert "1 differ" in bad.stdout
    # Every difference is listed, not just the first: change a second event too.
    end = record["events"][-1]
    end["money"][0] += 1
    changed.write_text(json.dumps(record))
    both = referee("verify", changed, league, check=False)
    assert both.returncode == 1
    assert "2 difference(s)" in both.stdout and "(end)" in both.stdout
    assert "13 records checked, 12 match their replay, 1 differ" in both.stdout


def test_verify_reports_an_unreadable_file_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "junk.jsonl"
    path.write_text('{"format": "something else"}\nnot json\n')
    done = referee("verify", path, check=False)
    assert done.returncode != 0
    assert "Traceback" not in done.stderr + done.stdout
    assert "not a game record" in done.stdout or "not JSON" in done.stderr
