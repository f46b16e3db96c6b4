"""Building the report folder: replacing an earlier report whole, never anything else."""

from __future__ import annotations

import math
import stat
import sys
from pathlib import Path

import pytest
from cli_support import referee
from report_support import play_league, stored_records
from wait_support import wait_for

from referee.league.folder import LeagueFolder


@pytest.fixture(scope="module")
def league(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return play_league(tmp_path_factory.mktemp("build") / "league")


def test_a_report_has_a_page_per_game_and_bot_holding_each_stored_record(league: Path) -> None:
    report = LeagueFolder(league).report
    records = stored_records(league)
    assert sorted(p.name for p in (report / "games").iterdir()) == \
        sorted(f"{i}.html" for i in range(len(records)))
    assert len(list((report / "bots").iterdir())) == 4
    page = (report / "games" / "3.html").read_text()
    assert records[3]["game_id"] in page
    assert "</script>" not in page.split('id="record">')[1].split("</script>")[0]
    assert stat.S_IMODE(report.stat().st_mode) == 0o755


def test_rebuilding_replaces_the_report_and_leaves_no_temporary_folder(league: Path) -> None:
    stale = LeagueFolder(league).report / "games" / "999.html"
    stale.write_text("an old page")
    done = referee("report", league)
    assert f"report: {LeagueFolder(league).report / 'index.html'}" in done.stdout
    assert not stale.exists()
    assert [p.name for p in league.iterdir() if p.name.startswith(".report")] == []


def test_a_folder_that_is_not_a_report_is_never_replaced(league: Path, tmp_path: Path) -> None:
    keep = tmp_path / "site"
    keep.mkdir()
    (keep / "mine.txt").write_text("precious")
    done = referee("report", league, "--out", keep, check=False)
    assert done.returncode != 0 and "is not a report" in done.stderr
    assert "Traceback" not in done.stderr
    assert (keep / "mine.txt").read_text() == "precious"
    assert referee("report", tmp_path / "nothing-here", check=False).returncode != 0


def test_open_hands_the_index_to_the_web_browser(league: Path, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    opened = tmp_path / "opened.txt"
    # webbrowser runs $BROWSER with the URL for %s: here a command that writes it down.
    monkeypatch.setenv("BROWSER", f"{sys.executable} -c \"import sys; "
                                  f"open({str(opened)!r}, 'w').write(sys.argv[1])\" %s")
    referee("report", league, "--out", tmp_path / "site", "--open")
    wait_for("the browser command to write the address", opened.exists, timeout=120)
    assert opened.read_text() == (tmp_path / "site" / "index.html").resolve().as_uri()


def test_bot_pages_and_table_show_the_strength_at_each_table_size(league: Path) -> None:
    # the league plays tables of 2-4: the fit gives each size its scale (docs/ratings.md)
    import json

    data = json.loads(LeagueFolder(league).table_json.read_text())
    scales = data["extra"]["strength_scale_by_table_size"]
    assert sorted(scales) == ["2", "3", "4"]
    # read at the league's typical table: the scales' games-weighted geometric mean is 1
    games = {size: sum(row["games_by_size"].get(size, 0) for row in data["table"]) / int(size)
             for size in scales}
    log_mean = sum(games[k] * math.log(c) for k, c in scales.items()) / sum(games.values())
    assert abs(log_mean) < 1e-6, (scales, games)
    greedy = next(row for row in data["table"] if row["bot"] == "greedy")
    assert set(greedy["strength_by_size"]) == set(greedy["games_by_size"]) == {"2", "3", "4"}
    pages = [p.read_text() for p in (LeagueFolder(league).report / "bots").glob("*.html")]
    text = next(page for page in pages if "<h1>greedy</h1>" in page)
    said = text.split('id="bot-by-size">')[1].split("</p>")[0]
    assert "2 players" in said and "4 players" in said and "games)" in said
