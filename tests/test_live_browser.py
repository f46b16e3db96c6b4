"""Watching games live in a real headless Chromium against a real `referee serve`: a game's
page follows it move by move to its end, and the organiser's big screen shows the leaderboard
beside the games in play, their moves advancing. A gated bot holds the game in play until the
test opens its gate (tests/test_live.py). With REFEREE_DOCS_SCREENSHOTS=1 the test writes the
screenshots docs/server.md shows."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from report_support import chromium_missing
from server_support import WebClient
from test_live import GatedClub, in_play
from test_server_browser import browser_at, screenshot, sign_in, text_of
from wait_support import wait_for

MISSING = chromium_missing()
if MISSING and os.environ.get("REFEREE_REQUIRE_BROWSER"):
    raise RuntimeError(f"the browser tests must run here: {MISSING}")
pytestmark = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")
ROOT = Path(__file__).resolve().parents[1]
DOCS_SHOTS = bool(os.environ.get("REFEREE_DOCS_SCREENSHOTS"))
WAIT_S = 600


def in_frame(browser, frame: str, selector: str) -> str:  # noqa: ANN001
    """The text of `selector` in the iframe `frame` (a CSS selector) of the page."""
    browser.switch_to.default_content()
    found = browser.find_elements("css selector", frame)
    if not found:
        return ""
    browser.switch_to.frame(found[0])
    try:
        return text_of(browser, selector)
    finally:
        browser.switch_to.default_content()


def events_shown(browser, frame: str) -> int:  # noqa: ANN001
    """How many events the live viewer in `frame` holds ("event K / N": N)."""
    found = re.search(r"/ (\d+)", in_frame(browser, frame, "#step-position"))
    return int(found.group(1)) if found else 0


def shown_game(browser, frame: str) -> int:  # noqa: ANN001
    """The index of the game the season's viewer in `frame` shows (-1 before one)."""
    found = re.match(r"Game (\d+):", in_frame(browser, frame, "#live-title"))
    return int(found.group(1)) if found else -1


@pytest.mark.sandbox
def test_a_live_page_follows_a_running_game_to_its_end_and_the_big_screen_shows_it(
        tmp_path: Path) -> None:
    club = GatedClub(tmp_path, watchers=50)
    browser = None
    try:
        server = club.server
        password = server.organiser_password()
        organiser = WebClient(server.url)
        organiser.sign_in("organiser", password)
        (game,) = wait_for("a game in play", lambda: in_play(organiser), server,
                           timeout=WAIT_S)
        index = game["index"]
        browser = browser_at(tmp_path, "live")
        sign_in(browser, server.url, "organiser", password)
        browser.get(f"{server.url}/leaderboard/")
        assert "watch the season" in text_of(browser, "#in-play")
        browser.get(f"{server.url}/games/{index}/")
        assert "In play now" in text_of(browser, "#live-lead")
        # The moves made before the gated bot's turn are drawn as in a replay.
        wait_for("the first moves drawn", lambda: events_shown(browser, "#live") > 0, server)
        assert "live:" in in_frame(browser, "#live", "#live-status")
        screenshot(browser, "server-live-game.png", tmp_path)
        page = browser.current_window_handle

        # The big screen, at a projector's size, in a second window.
        browser.switch_to.new_window("window")
        browser.set_window_size(1920, 1080)
        browser.get(f"{server.url}/organiser/screen/")
        wait_for("the game on the big screen",
                 lambda: events_shown(browser, "#screen-slot-0 iframe") > 0, server)
        assert "Leaderboard" in text_of(browser, ".screen-board h1")
        screen_game = "#screen-slot-0 iframe"
        assert f"Game {index}:" in in_frame(browser, screen_game, "#live-title")
        before = events_shown(browser, screen_game)
        club.gate.write_text("")
        wait_for("the moves advancing on the big screen",
                 lambda: events_shown(browser, screen_game) > before, server)
        # The screen follows the season on one stream: after the game's end it shows the
        # next game the season plays, from its start.
        wait_for("the next game on the big screen", lambda: re.match(
            r"Game (\d+):", in_frame(browser, screen_game, "#live-title")) and not in_frame(
            browser, screen_game, "#live-title").startswith(f"Game {index}:"), server,
            timeout=WAIT_S)
        wait_for("the next game's moves", lambda: events_shown(browser, screen_game) > 0,
                 server)
        # It keeps up with the season (its games take well under the screen's hold of a
        # finished board here): after a hold it shows the newest game, never a queue of games.
        newest = wait_for("a game in play", lambda: max(
            (g["index"] for g in in_play(organiser)), default=None), server, timeout=WAIT_S)
        wait_for(f"the big screen at game {newest} or later",
                 lambda: shown_game(browser, screen_game) >= newest, server, timeout=WAIT_S)
        # The leaderboard fills as the games are rated (refits every 2 s here).
        wait_for("the leaderboard's rows", lambda: text_of(browser, "#leaderboard tbody"),
                 server, timeout=WAIT_S)
        fits = browser.execute_script("return [document.documentElement.scrollWidth,"
                                      " document.documentElement.scrollHeight]")
        assert fits[0] <= 1920, fits
        for target in [tmp_path / "server-big-screen.png"] + (
                [ROOT / "docs" / "server-big-screen.png"] if DOCS_SHOTS else []):
            browser.save_screenshot(str(target))

        # The game's page followed it to its end: the whole game, and its replay's link.
        browser.switch_to.window(page)
        wait_for("the game's end on its page", lambda: "over" in in_frame(
            browser, "#live", "#live-status"), server, timeout=WAIT_S)
        assert in_frame(browser, "#live", "#headline") == "Game over"
        assert "replay" in in_frame(browser, "#live", "#live-replay")
        browser.get(f"{server.url}/games/{index}/")
        assert browser.find_elements("css selector", "iframe#replay")
    finally:
        if browser is not None:
            browser.quit()
        club.close()
