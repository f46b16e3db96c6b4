"""The league report and the replay viewer in a real headless Chromium (Debian's), from file://.

Skipped with a reason where Chromium, its driver or selenium is missing, except where
REFEREE_REQUIRE_BROWSER is set (CI sets it): there a missing browser fails the tests.
With REFEREE_DOCS_SCREENSHOTS=1 the tests also write the screenshots docs/report.md shows:
docs/report-league.png and docs/report-replay.png (desktop), docs/report-phone-index.png and
docs/report-phone-replay.png (a phone, 390 x 844).
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_support import referee
from report_support import (
    ROOT,
    SAMPLE_BOTS,
    chromium_missing,
    league_bots,
    play_league,
    start_browser,
    stored_records,
)

from referee.league.config import league_file_text
from referee.league.folder import LeagueFolder
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

    index = LeagueFolder(league).report / "index.html"
    assert index.is_file()
    open_page(browser, index)
    assert console_errors(browser) == []
    table = json.loads(LeagueFolder(league).table_json.read_text())
    shown = [row.get_attribute("data-bot")
             for row in browser.find_elements(By.CSS_SELECTOR, "#league-table tr.bot-row")]
    assert shown == [row["bot"] for row in table["table"]]
    assert len(shown) == len(league_bots(league.parent))
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


def in_view(browser, selector: str) -> bool:  # noqa: ANN001
    """Whether the element is wholly inside the browser's viewport as it is scrolled now."""
    return browser.execute_script(
        "const r = document.querySelector(arguments[0]).getBoundingClientRect();"
        "return r.top >= 0 && r.left >= 0 && r.bottom <= window.innerHeight"
        " && r.right <= window.innerWidth && r.width > 0;", selector)


def test_a_replay_opens_on_the_funded_board_and_steps_to_the_end_and_back(
        league: Path, browser, tmp_path: Path) -> None:  # noqa: ANN001
    from selenium.webdriver.common.keys import Keys

    record = stored_records(league)[5]
    page = LeagueFolder(league).report / "games" / "5.html"
    open_page(browser, page)
    events = len(record["events"])
    # It opens on round 1 with its banknotes dealt, not on the empty table before it.
    assert record["events"][0]["type"] == "round"
    funded = [n for notes in record["events"][0]["casinos"] for n in notes]
    assert texts(browser, "#step-position") == [f"event 1 / {events}"]
    assert len(texts(browser, "#board .banknote")) == len(funded) > 0
    # Each casino's banknotes read highest first, as in `show` and the SDK (the record keeps
    # the draw order).
    shown = browser.execute_script(
        "return [...document.querySelectorAll('#board .casino')].map(c =>"
        " [...c.querySelectorAll('.banknote')].map(n => n.textContent));")
    assert sorted(n for card in shown for n in card) == sorted(
        f"${n // 1000}k" for n in funded)
    assert all([dollars(n) for n in card] == sorted((dollars(n) for n in card), reverse=True)
               for card in shown)
    assert any(len(card) > 1 for card in shown)
    assert texts(browser, "#headline") == ["Round 1 of 4"]
    keys(browser, Keys.END, 1)
    assert texts(browser, "#step-position") == [f"event {events} / {events}"]
    final = record["events"][-1]
    money = [dollars(text) for text in texts(browser, "#seats .seat .money")]
    assert money == final["money"]
    standings = [dollars(text) for text in texts(browser, "#standings .final-money")]
    assert sorted(standings) == sorted(final["money"])
    assert in_view(browser, "#standings")   # the end shows the standings, no scrolling
    assert console_errors(browser) == []
    keys(browser, Keys.HOME, 1)   # the start: the table before the first deal
    assert texts(browser, "#step-position") == [f"event 0 / {events}"]
    assert texts(browser, "#board .die") == [] and texts(browser, "#board .banknote") == []
    assert texts(browser, "#standings") == [""]
    # Mid-game: the dice placed so far are on the board.
    middle = events // 3
    keys(browser, Keys.ARROW_RIGHT, middle)
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
    open_page(browser, LeagueFolder(league).report / "games" / f"{index}.html")
    items = browser.find_elements(By.CSS_SELECTOR, "#strikes .strike-item")
    assert len(items) == len(struck)
    assert struck[0]["detail"] in items[0].text
    items[0].find_element(By.TAG_NAME, "a").click()
    current = browser.find_element(By.ID, "current").text
    assert f"{struck[0]['strike']} strike" in current and "substitute move" in current
    assert len(texts(browser, "#event-log .strike-line")) == len(struck)
    # The bot's page lists the same strikes, each with its game.
    bot = record["bots"][struck[0]["seat"]]["name"]
    open_page(browser, LeagueFolder(league).report / "index.html")
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
    open_page(browser, LeagueFolder(league).report / "games.html")
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
    # Someone sent this page sees the first deal first, as in a league's report.
    assert texts(browser, "#step-position") == [f"event 1 / {len(record['events'])}"]
    assert texts(browser, "#board .banknote")
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
    done = referee("match", *league_bots(tmp_path)[:3], "--seed", "4", "--html", page,
                   "--replay", tmp_path / "one.json")
    assert f"replay page written to {page}" in done.stdout
    text = page.read_text()
    record = json.loads((tmp_path / "one.json").read_text())
    assert 'src="' not in text and "assets/" not in text
    assert record["game_id"] in text


PHONE = {"width": 390, "height": 844, "deviceScaleFactor": 1, "mobile": True}


def phone_shot(browser, name: str, tmp: Path) -> None:  # noqa: ANN001
    for target in [tmp / name] + ([ROOT / "docs" / name] if DOCS_SHOTS else []):
        browser.save_screenshot(str(target))


def test_on_a_phone_no_page_is_wider_than_the_screen_and_the_replay_works(
        league: Path, browser, tmp_path: Path) -> None:  # noqa: ANN001
    from selenium.webdriver.common.by import By

    report = LeagueFolder(league).report
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", PHONE)
    try:
        for page in ("index.html", "games.html", "bots/bot-0.html", "bots/bot-3.html",
                     "games/5.html", "games/0.html"):
            open_page(browser, report / page)
            width, inner = browser.execute_script(
                "return [document.documentElement.scrollWidth, window.innerWidth]")
            assert inner == 390 and width <= 390, f"{page} is {width} px wide on a 390 px phone"
            assert console_errors(browser) == []
        # One game in one file (match --html), its bot named with 80 letters and no space.
        record = stored_records(league)[2]
        record["bots"][0]["name"] = "x" * 80
        single = tmp_path / "one.html"
        single.write_text(single_game_html(record), encoding="utf-8")
        open_page(browser, single)
        assert browser.execute_script("return document.documentElement.scrollWidth") <= 390
        browser.find_element(By.ID, "btn-last").click()
        assert browser.execute_script("return document.documentElement.scrollWidth") <= 390
        open_page(browser, report / "index.html")
        phone_shot(browser, "report-phone-index.png", tmp_path)
        # The table's strength column, the one it is sorted by, is on screen.
        strength = browser.find_element(By.CSS_SELECTOR, "#league-table thead th:nth-child(3)")
        assert strength.text.startswith("strength")
        assert browser.execute_script("return arguments[0].getBoundingClientRect().right",
                                      strength) <= 390
        open_page(browser, report / "games" / "5.html")
        events = len(stored_records(league)[5]["events"])
        for control in ("#btn-first", "#btn-prev", "#btn-play", "#btn-next", "#btn-last",
                        "#step-slider", "#step-position"):
            assert in_view(browser, control), f"{control} is off the screen"
        for casino in browser.find_elements(By.CSS_SELECTOR, "#board .casino"):
            assert browser.execute_script("return arguments[0].getBoundingClientRect().right",
                                          casino) <= 390
        for seat in browser.find_elements(By.CSS_SELECTOR, "#seats .seat"):
            assert browser.execute_script("return arguments[0].getBoundingClientRect().right",
                                          seat) <= 390
        # Tapped, not keyed: the buttons and the slider answer (a covered one would raise).
        browser.find_element(By.ID, "btn-next").click()
        assert texts(browser, "#step-position") == [f"event 2 / {events}"]
        browser.find_element(By.ID, "btn-prev").click()
        assert texts(browser, "#step-position") == [f"event 1 / {events}"]
        browser.find_element(By.ID, "step-slider").click()   # its middle
        middle = int(texts(browser, "#step-position")[0].split()[1])
        assert events // 4 < middle < 3 * events // 4
        for _ in range(7):   # into the round: dice on the board for the screenshot
            browser.find_element(By.ID, "btn-next").click()
        assert texts(browser, "#step-position") == [f"event {middle + 7} / {events}"]
        phone_shot(browser, "report-phone-replay.png", tmp_path)
        browser.find_element(By.ID, "btn-last").click()
        assert texts(browser, "#step-position") == [f"event {events} / {events}"]
        assert in_view(browser, "#standings")
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def test_one_marker_convention_and_sorting_the_useful_way_first(
        league: Path, browser) -> None:  # noqa: ANN001
    from selenium.webdriver.common.by import By

    table = json.loads(LeagueFolder(league).table_json.read_text())
    open_page(browser, LeagueFolder(league).report / "index.html")
    marks = {row.get_attribute("data-bot"): row.find_elements(By.CSS_SELECTOR, ".sep")
             for row in browser.find_elements(By.CSS_SELECTOR, "#league-table tr.bot-row")}
    for row in table["table"]:
        # As the terminal: "~" where the bot is not separated from the next row, else nothing.
        shown = [mark.text for mark in marks[row["bot"]]]
        assert shown == (["~"] if row["separated_from_next"] is False else []), row
    assert "▲" not in browser.find_element(By.ID, "league-table").text
    # The strength at each table size, written as the terminal's 'by size' column writes it.
    by_size = texts(browser, "#league-table tbody td.by-size")
    sizes = [sorted(row["strength_by_size"].items()) for row in table["table"]]
    assert by_size == [" · ".join(f"{k}p {v:+.0f}" for k, v in row) for row in sizes]
    assert len(table["table"][0]["strength_by_size"]) == 3   # the league has tables of 2-4
    # The table comes sorted by strength, highest first, and says so with an arrow.
    head = browser.find_element(By.CSS_SELECTOR, "#league-table thead th:nth-child(3)")
    assert head.get_attribute("data-dir") == "desc"
    # One click on wins sorts the most wins first; on avg place, the best place first.
    heads = {th.text: th
             for th in browser.find_elements(By.CSS_SELECTOR, "#league-table thead th")}
    column = list(heads).index("wins") + 1
    heads["wins"].click()
    wins = [int(t) for t in texts(browser, f"#league-table tbody td:nth-child({column})")]
    assert wins == sorted(wins, reverse=True) and heads["wins"].get_attribute("data-dir") == "desc"
    column = list(heads).index("avg place") + 1
    heads["avg place"].click()
    places = [float(t) for t in texts(browser, f"#league-table tbody td:nth-child({column})")]
    assert places == sorted(places) and heads["avg place"].get_attribute("data-dir") == "asc"
    heads["avg place"].click()
    places = [float(t) for t in texts(browser, f"#league-table tbody td:nth-child({column})")]
    assert places == sorted(places, reverse=True)


def test_settings_are_shown_as_the_league_file_a_user_writes(league: Path, browser) -> None:  # noqa: ANN001
    from selenium.webdriver.common.by import By

    store = LeagueFolder(league).open_store()
    try:
        settings = store.settings()
    finally:
        store.close()
    open_page(browser, LeagueFolder(league).report / "index.html")
    shown = browser.find_element(By.ID, "settings-toml").text
    assert shown.strip() == league_file_text(settings).strip()
    parsed = tomllib.loads(shown)
    assert parsed["players"] == "2-4" and parsed["games"] == 12
    assert parsed["rules"]["preset"] == "classic" and parsed["rules"]["slot"] is False
    assert parsed["ratings"]["sigma"] == 8.333
    settings_card = browser.find_element(By.CSS_SELECTOR, "#settings-toml").find_element(
        By.XPATH, "..").text
    for python_value in ("False", "True", "2–4", "None"):
        assert python_value not in settings_card


def test_a_bot_page_has_its_record_against_each_opponent_a_chart_and_filters(
        league: Path, browser) -> None:  # noqa: ANN001
    from selenium.webdriver.common.by import By

    table = json.loads(LeagueFolder(league).table_json.read_text())
    bot = table["table"][0]["bot"]
    open_page(browser, LeagueFolder(league).report / "index.html")
    browser.find_element(By.LINK_TEXT, bot).click()
    ahead = {h["b"]: (h["games"], h["a_ahead"], h["b_ahead"])
             for h in table["head_to_head"] if h["a"] == bot}
    ahead.update({h["a"]: (h["games"], h["b_ahead"], h["a_ahead"])
                  for h in table["head_to_head"] if h["b"] == bot})
    rows = browser.find_elements(By.CSS_SELECTOR, "#bot-opponents tbody tr")
    shown = {r.get_attribute("data-bot"): tuple(int(c.text) for c in
                                                r.find_elements(By.TAG_NAME, "td")[1:4])
             for r in rows}
    assert shown == {b: cell for b, cell in ahead.items() if cell[0]}
    assert len(browser.find_elements(By.CSS_SELECTOR, "#rating-chart polyline.line")) == 1
    # The game list: every game, then its losses only, then the games it was struck in.
    games = [(r["places"][[b["name"] for b in r["bots"]].index(bot)],
              sum(1 for d in r["decisions"] if d.get("strike")
                  and r["bots"][d["seat"]]["name"] == bot))
             for r in stored_records(league) if bot in [b["name"] for b in r["bots"]]]
    visible = lambda: [r for r in browser.find_elements(By.CSS_SELECTOR, "#bot-games tbody tr")  # noqa: E731
                       if r.is_displayed()]
    assert len(visible()) == len(games)
    browser.find_element(By.ID, "filter-losses").click()
    assert len(visible()) == sum(1 for place, _ in games if place != 1)
    assert {r.find_elements(By.TAG_NAME, "td")[4].text for r in visible()} <= {"2", "3", "4"}
    browser.find_element(By.ID, "filter-losses").click()
    browser.find_element(By.ID, "filter-bot-strikes").click()
    assert len(visible()) == sum(1 for _, struck in games if struck)
    assert console_errors(browser) == []


def test_a_bot_added_later_is_charted_from_its_first_game(tmp_path: Path, browser) -> None:  # noqa: ANN001
    from selenium.webdriver.common.by import By

    out = play_league(tmp_path / "league")
    referee("league", "--out", out, "--add", ROOT / "tests" / "bots" / "noter.toml", "--quiet")
    open_page(browser, LeagueFolder(out).report / "index.html")
    data = json.loads(browser.find_element(By.ID, "rating-data").get_attribute("textContent"))
    n = data["bots"].index("noter")
    first = data["series"][n][0][0]
    assert first >= 12   # its games come after the league's 12
    width = browser.execute_script(
        "return document.querySelector('#rating-chart svg').viewBox.baseVal.width")
    x = lambda i: 40 + (width - 50) * (i + 1) / data["games"]  # noqa: E731  (report.js's axis)
    lines = browser.find_elements(By.CSS_SELECTOR, "#rating-chart polyline.line")
    for polyline, points in zip(lines, data["series"], strict=True):
        start = float(polyline.get_attribute("points").split()[0].split(",")[0])
        assert abs(start - x(points[0][0] - 1)) < 0.2   # each line from its bot's first game
    bands = browser.find_elements(By.CSS_SELECTOR, "#rating-chart polygon.band")
    band_x = [float(p.split(",")[0]) for p in bands[n].get_attribute("points").split()]
    assert min(band_x) >= x(first - 1) - 0.2
    assert console_errors(browser) == []


def test_on_a_phone_a_bot_with_a_long_name_widens_no_page(tmp_path: Path, browser) -> None:  # noqa: ANN001
    import shutil

    bots = ROOT / "tests" / "bots"
    shutil.copytree(bots / "honest", tmp_path / "honest")
    shutil.copy(bots / "botlib.py", tmp_path / "botlib.py")
    long_name = "a-bot-name-of-sixty-four-letters-and-no-space-" + "x" * 18
    spec = tmp_path / "long.toml"
    spec.write_text((bots / "honest.toml").read_text().replace('name = "honest"',
                                                               f'name = "{long_name}"'))
    out = tmp_path / "league"
    referee("league", spec, *SAMPLE_BOTS, "--games", "3", "--players", "3", "--seed", "5",
            "--out", out, "--quiet", "--no-sandbox")   # trusted test bots in a private tmp
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", PHONE)
    try:
        for page in ("index.html", "games.html", "bots/bot-0.html", "bots/bot-1.html",
                     "games/0.html"):
            open_page(browser, LeagueFolder(out).report / page)
            assert long_name in browser.page_source
            width = browser.execute_script("return document.documentElement.scrollWidth")
            assert width <= 390, f"{page} is {width} px wide on a 390 px phone"
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
