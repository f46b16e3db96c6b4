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

from referee.server.shared.clubfolder import ClubFolder

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


MARK = "window.notReloaded = 'still here'"


def not_reloaded(browser) -> bool:  # noqa: ANN001
    """The page of this window is the one the test marked (MARK): never loaded again."""
    return browser.execute_script("return window.notReloaded") == "still here"


def listed_games(browser) -> list[str]:  # noqa: ANN001
    """The games the page's list of games in play shows, at one instant."""
    return browser.execute_script(
        "return Array.from(document.querySelectorAll('#in-play-list li'), li => li.innerText)")


def shown_test_game_state(browser) -> str:  # noqa: ANN001
    """The test game's state as its page shows it, once its replay is there; else "" (read
    in one script call: the page swaps its part in as it polls)."""
    return browser.execute_script(
        "const state = document.querySelector('#testgame-state');"
        "return state && document.querySelector('iframe#replay') ? state.innerText : '';")


@pytest.mark.sandbox
def test_pages_follow_the_games_in_play_and_the_idle_big_screen_replays_the_newest(
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
        first = club.test_game
        wait_for("the test game in play", lambda: any(
            (ClubFolder(club.data).test_games / "live" / str(first)).glob("*.jsonl")), server,
            timeout=WAIT_S)
        # A second test game waits in the queue: the runner plays one at a time.
        second = club.club("""
            game = TestGame.objects.create(
                requester=User.objects.get(username="gat"),
                version=BotVersion.objects.get(league_name="gate-bot.v1"))
            game.opponents.add(BotVersion.objects.get(league_name="ann-bot.v1"))
            result = game.pk
        """)
        browser = browser_at(tmp_path, "follow")
        sign_in(browser, server.url, "organiser", password)

        # The leaderboard lists the game in play; watching the season is one click away.
        browser.get(f"{server.url}/leaderboard/")
        board = browser.current_window_handle
        browser.execute_script(MARK)
        assert any(item.startswith(f"Game {index}:") for item in listed_games(browser))
        assert browser.find_elements("css selector", "#watch-link a[href='/games/live/watch']")
        # The test game in play: its page shows it live; the queued one says it waits.
        browser.switch_to.new_window("window")
        browser.get(f"{server.url}/testgames/{first}/")
        playing = browser.current_window_handle
        browser.execute_script(MARK)
        wait_for("the test game's live viewer", lambda: events_shown(browser, "#live") > 0,
                 server)
        browser.switch_to.new_window("window")
        browser.get(f"{server.url}/testgames/{second}/")
        queued = browser.current_window_handle
        browser.execute_script(MARK)
        assert text_of(browser, "#testgame-state") == "queued"
        assert "follows it" in text_of(browser, "#game-waiting")

        club.gate.write_text("")
        # Each page follows its games, none reloaded: the list drops the game that ended, and
        # each test game's page ends on its replay.
        browser.switch_to.window(board)
        wait_for(f"game {index} gone from the list", lambda: not any(
            item.startswith(f"Game {index}:") for item in listed_games(browser)), server,
            timeout=WAIT_S)
        assert not_reloaded(browser)
        for window in (playing, queued):
            browser.switch_to.window(window)
            assert wait_for("the test game's replay", lambda: shown_test_game_state(browser),
                            server, timeout=WAIT_S) == "done"
            assert "Bot output" in text_of(browser, "#outputs")
            assert not_reloaded(browser)

        # The season paused: no game in play. The list empties by itself, and the big screen
        # replays the newest finished game, move by move.
        club.club.season_state("paused")
        wait_for("no game in play", lambda: not in_play(organiser), server, timeout=WAIT_S)
        browser.switch_to.window(board)
        wait_for("the list hidden", lambda: not browser.find_element(
            "css selector", "#in-play").is_displayed(), server)
        assert not_reloaded(browser)
        browser.set_window_size(1920, 1080)
        browser.get(f"{server.url}/organiser/screen/")
        assert browser.find_elements("css selector", "#watch-link[href='/games/live/watch']")
        screen_game = "#screen-slot-0 iframe"
        title = wait_for("a finished game replayed", lambda: re.match(
            r"Replay of game (\d+):", in_frame(browser, screen_game, "#live-title")), server,
            timeout=WAIT_S)
        assert int(title.group(1)) >= index
        wait_for("its moves replayed", lambda: "move" in in_frame(
            browser, screen_game, "#live-status") and events_shown(browser, screen_game) > 0,
            server)
        for target in [tmp_path / "server-big-screen-idle.png"] + (
                [ROOT / "docs" / "server-big-screen-idle.png"] if DOCS_SHOTS else []):
            browser.save_screenshot(str(target))
        # A game starts: the screen leaves the replay for it.
        club.club.season_state("running")
        wait_for("a game in play on the big screen",
                 lambda: shown_game(browser, screen_game) >= 0, server, timeout=WAIT_S)
    finally:
        if browser is not None:
            browser.quit()
        club.close()
