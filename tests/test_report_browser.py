"""The league report and the replay viewer in a real headless Chromium (Debian's), from file://.

Skipped with a reason where Chromium, its driver or selenium is missing, except where
REFEREE_REQUIRE_BROWSER is set (CI sets it): there a missing browser fails the tests.
With REFEREE_DOCS_SCREENSHOTS=1 the tests also write docs/report-league.png and
docs/report-replay.png, the screenshots docs/report.md shows.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from report_support import (
    LEAGUE_BOTS,
    ROOT,
    chromium_missing,
    play_league,
    referee,
    start_browser,
    stored_records,
)

from referee.report.site import single_game_html

MISSING = chromium_missing()
if MISSING and os.environ.get("REFEREE_REQUIRE_BROWSER"):
    raise RuntimeError(f"the browser tests must run here: {MISSING}")
pytestmark = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")
DOCS_SHOTS = bool(os.environ.get("REFEREE_DOCS_SCREENSHOTS"))


@pytest.fixture(scope="module")
def league(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return play_league(tmp_path_factory.mktemp("report") / "league")


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator:
    driver = start_browser(tmp_path_factory.mktemp("chromium-profile"))
    try:
        yield driver
    finally:
        driver.quit()


def console_errors(browser) -> list[dict]:  # noqa: ANN001
    return [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]


def open_page(browser, path: Path) -> None:  # noqa: ANN001
    browser.get_log("browser")   # drop what earlier pages logged
    browser.get(path.resolve().as_uri())


def keys(browser, key: str, times: int) -> None:  # noqa: ANN001
    from selenium.webdriver.common.by import By

    body = browser.find_element(By.TAG_NAME, "body")
    for _ in range(times):
        body.send_keys(key)


def texts(browser, selector: str) -> list[str]:  # noqa: ANN001
    from selenium.webdriver.common.by import By

    return [e.text for e in browser.find_elements(By.CSS_SELECTOR, selector)]


def dollars(text: str) -> int:
    return int(re.sub(r"[^0-9]", "", text))


def screenshot(browser, name: str, tmp: Path) -> None:  # noqa: ANN001
    height = browser.execute_script("return document.documentElement.scrollHeight")
    browser.set_window_size(1400, min(max(height + 40, 900), 2400))
    for target in [tmp / name] + ([ROOT / "docs" / name] if DOCS_SHOTS else []):
        browser.save_screenshot(str(target))
    browser.set_window_size(1400, 1000)


def test_the_league_ends_with_a_report_whose_index_lists_the_bots_in_table_order(
        league: Path, browser, tmp_path: Path) -> None:  # noqa: ANN001
    from selenium.webdriver.common.by import By

    index = league / "report" / "index.html"
    assert index.is_file()
    open_page(browser, index)
    assert console_errors(browser) == []
    table = json.loads((league / "table.json").read_text())
    shown = [row.get_attribute("data-bot")
             for row in browser.find_elements(By.CSS_SELECTOR, "#league-table tr.bot-row")]
    assert shown == [row["bot"] for row in table["table"]]
    assert len(shown) == len(LEAGUE_BOTS)
    # The rating chart draws one line and one band per bot; the heat map one cell per pair.
    lines = browser.find_elements(By.CSS_SELECTOR, "#rating-chart polyline.line")
    bands = browser.find_elements(By.CSS_SELECTOR, "#rating-chart polygon.band")
    assert len(lines) == len(bands) == len(shown)
    cells = browser.find_elements(By.CSS_SELECTOR, "#heat-map td:not(.self)")
    assert len(cells) == len(shown) * (len(shown) - 1)
    ahead = {(h["a"], h["b"]): h for h in table["head_to_head"]}
    first, second = shown[0], shown[1]
    expected = ahead[first, second]
    assert cells[0].text == f"{expected['a_ahead']}–{expected['b_ahead']}"
    # The global fit's interval and rank range are shown where the table has them.
    headers = texts(browser, "#league-table thead th")
    if any(row.get("strength") is not None for row in table["table"]):
        assert "strength (95%)" in headers and "rank range" in headers
        chances = browser.find_elements(By.CSS_SELECTOR, "#chance-map td:not(.self)")
        assert len(chances) == len(shown) * (len(shown) - 1)
    screenshot(browser, "report-league.png", tmp_path)


def test_a_replay_steps_to_the_end_and_back_to_an_empty_board(
        league: Path, browser, tmp_path: Path) -> None:  # noqa: ANN001
    from selenium.webdriver.common.keys import Keys

    record = stored_records(league)[5]
    page = league / "report" / "games" / "5.html"
    open_page(browser, page)
    events = len(record["events"])
    assert texts(browser, "#step-position") == [f"event 0 / {events}"]
    assert texts(browser, "#board .die") == [] and texts(browser, "#board .banknote") == []
    keys(browser, Keys.ARROW_RIGHT, events)
    assert texts(browser, "#step-position") == [f"event {events} / {events}"]
    final = record["events"][-1]
    money = [dollars(text) for text in texts(browser, "#seats .seat .money")]
    assert money == final["money"]
    standings = [dollars(text) for text in texts(browser, "#standings .final-money")]
    assert sorted(standings) == sorted(final["money"])
    assert console_errors(browser) == []
    keys(browser, Keys.ARROW_LEFT, events)
    assert texts(browser, "#step-position") == [f"event 0 / {events}"]
    assert texts(browser, "#board .die") == [] and texts(browser, "#board .banknote") == []
    assert texts(browser, "#standings") == [""]
    # One step in, the first round's notes are on the casinos.
    keys(browser, Keys.ARROW_RIGHT, 1)
    funded = [n for notes in record["events"][0]["casinos"] for n in notes]
    assert len(texts(browser, "#board .banknote")) == len(funded)
    # Mid-game: the dice placed so far are on the board.
    middle = events // 3
    keys(browser, Keys.ARROW_RIGHT, middle - 1)
    placed = _dice_on_board(record, middle)
    assert len(texts(browser, "#board .die")) == placed
    if placed:
        screenshot(browser, "report-replay.png", tmp_path)


def _dice_on_board(record: dict, upto: int) -> int:
    """Dice shown on the board after `upto` events: this round's placements (and pre-rolls)."""
    count = 0
    for event in record["events"][:upto]:
        if event["type"] == "round":
            count = 0
        elif event["type"] == "preroll":
            count += len(event["faces"])
        elif event["type"] == "place":
            count += event["own"] + event["big"] + event["neutral"]
    return count


def test_a_game_with_strikes_shows_each_strike_and_its_substitute_move(
        league: Path, browser) -> None:  # noqa: ANN001
    from selenium.webdriver.common.by import By

    stored = stored_records(league)
    index, record = next((i, r) for i, r in enumerate(stored)
                         if any(d.get("strike") for d in r["decisions"]))
    struck = [d for d in record["decisions"] if d.get("strike")]
    open_page(browser, league / "report" / "games" / f"{index}.html")
    items = browser.find_elements(By.CSS_SELECTOR, "#strikes .strike-item")
    assert len(items) == len(struck)
    assert struck[0]["detail"] in items[0].text
    items[0].find_element(By.TAG_NAME, "a").click()
    current = browser.find_element(By.ID, "current").text
    assert f"{struck[0]['strike']} strike" in current and "substitute move" in current
    assert len(texts(browser, "#event-log .strike-line")) == len(struck)
    # The bot's page lists the same strikes, each with its game.
    bot = record["bots"][struck[0]["seat"]]["name"]
    open_page(browser, league / "report" / "index.html")
    browser.find_element(By.LINK_TEXT, bot).click()
    rows = texts(browser, "#bot-strikes tbody tr")
    total = sum(1 for r in stored for d in r["decisions"]
                if d.get("strike") and r["bots"][d["seat"]]["name"] == bot)
    assert len(rows) == total
    assert console_errors(browser) == []


def test_the_game_list_filters_by_bot_place_and_strikes_and_sorts(
        league: Path, browser) -> None:  # noqa: ANN001
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    stored = stored_records(league)
    open_page(browser, league / "report" / "games.html")
    visible = lambda: [r for r in browser.find_elements(By.CSS_SELECTOR, "#game-list tbody tr")  # noqa: E731
                       if r.is_displayed()]
    assert len(visible()) == len(stored)
    bot = stored[0]["bots"][0]["name"]
    Select(browser.find_element(By.ID, "filter-bot")).select_by_value(bot)
    with_bot = [r for r in stored if bot in [b["name"] for b in r["bots"]]]
    assert len(visible()) == len(with_bot)
    Select(browser.find_element(By.ID, "filter-place")).select_by_value("1")
    won = [r for r in with_bot
           if r["places"][[b["name"] for b in r["bots"]].index(bot)] == 1]
    assert len(visible()) == len(won)
    Select(browser.find_element(By.ID, "filter-bot")).select_by_value("")
    Select(browser.find_element(By.ID, "filter-place")).select_by_value("")
    browser.find_element(By.ID, "filter-strikes").click()
    assert len(visible()) == sum(1 for r in stored if any(d.get("strike")
                                                          for d in r["decisions"]))
    browser.find_element(By.ID, "filter-strikes").click()
    header = browser.find_element(By.CSS_SELECTOR, "#game-list th:nth-child(1)")
    header.click()
    header.click()   # descending
    first = visible()[0].find_element(By.TAG_NAME, "td").text
    assert first == str(len(stored) - 1)
    assert console_errors(browser) == []


def test_a_single_file_game_plays_offline_and_escapes_bot_text(
        league: Path, browser, tmp_path: Path) -> None:  # noqa: ANN001
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    record = stored_records(league)[2]
    hostile = '<img src=x onerror="document.title=\'pwned\'">'
    record["bots"][0]["name"] = hostile
    record["decisions"][0]["note"] = "</script><b id='injected'>bold</b>"
    record["decisions"][0]["values"] = {"<i>": 1.5}
    record["decisions"][1]["note"] = "\x1b[31mred\u202e"   # terminal and bidi controls
    page = tmp_path / "game.html"
    page.write_text(single_game_html(record), encoding="utf-8")
    assert "<link" not in page.read_text().split("</head>")[0].replace('<link rel="icon"', "")
    open_page(browser, page)
    keys(browser, Keys.END, 1)
    money = [dollars(text) for text in texts(browser, "#seats .seat .money")]
    assert money == record["events"][-1]["money"]
    assert hostile in texts(browser, "#seats .seat-name")[0]
    assert browser.find_elements(By.ID, "injected") == []
    assert browser.find_elements(By.CSS_SELECTOR, "#viewer img") == []
    assert browser.title != "pwned"
    keys(browser, Keys.HOME, 1)
    keys(browser, Keys.ARROW_RIGHT, 3)   # round, roll, the first placement
    assert "</script><b id='injected'>bold</b>" in browser.find_element(By.ID, "current").text
    keys(browser, Keys.ARROW_RIGHT, 2)   # the second placement: its controls shown as escapes
    assert "\\x1b[31mred\\u202e" in browser.find_element(By.ID, "current").text
    link = browser.find_element(By.ID, "raw-record").get_attribute("href")
    assert link.startswith("blob:")
    raw = browser.execute_async_script(
        "fetch(arguments[0]).then(r => r.text()).then(arguments[1])", link)
    assert json.loads(raw) == record
    assert console_errors(browser) == []


def test_match_html_writes_one_self_contained_page(tmp_path: Path) -> None:
    page = tmp_path / "one.html"
    done = referee("match", *LEAGUE_BOTS[:3], "--seed", "4", "--html", page,
                   "--replay", tmp_path / "one.json")
    assert f"replay page written to {page}" in done.stdout
    text = page.read_text()
    record = json.loads((tmp_path / "one.json").read_text())
    assert 'src="' not in text and "assets/" not in text
    assert record["game_id"] in text
