"""Playing in the browser on the club server (issue "Play and watch", item 3): a real `referee
serve` (web process and season runner), a real headless Chromium (Debian's), the house bots
as opponents in the real sandbox over gRPC, the club's real SQLite.

A student plays a whole game against two bots at desktop size, reloads the page in the
middle (the game so far is drawn again and play goes on), finishes it on a phone's screen by
touch, and sees its replay; the record verifies and the season never stores (so never rates)
it. Every answer the page may post is checked: a made-up or stale choice is refused with one
line, another student sees nothing. A game left alone ends by the human seat's time limit
(a season file with a short one), its timeouts recorded. With REFEREE_DOCS_SCREENSHOTS=1 the
tests write the screenshots docs/play.md shows.
"""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_support import referee
from report_support import chromium_missing, start_browser
from server_support import PASSWORD, ROOT, ServerProcess, WebClient, make_student
from test_server_browser import PHONE, csp_refusals, sign_in, text_of
from wait_support import wait_for

from referee.server.shared.clubfolder import ClubFolder

MISSING = chromium_missing()
if MISSING and os.environ.get("REFEREE_REQUIRE_BROWSER"):
    raise RuntimeError(f"the browser tests must run here: {MISSING}")
pytestmark = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")
DOCS_SHOTS = bool(os.environ.get("REFEREE_DOCS_SCREENSHOTS"))
# One short round of the house bots' own games: the machine is for the game in the browser.
QUIET_SEASON = ('name = "play season"\nround_games = 1\nmax_rounds = 1\n'
                'games_per_bot_per_hour = 0\n')
OPPONENTS = ["house-greedy.v1", "house-random.v1"]


def start_server(root: Path, extra: str = "", house: str = '["greedy", "random"]'
                 ) -> ServerProcess:
    (root / "data").mkdir(parents=True)
    (root / "data" / "season.toml").write_text(f"{QUIET_SEASON}house_bots = {house}\n{extra}")
    return ServerProcess(root / "data")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    process = start_server(tmp_path_factory.mktemp("play"))
    try:
        yield process
    finally:
        assert process.stop(signal.SIGTERM) == 0, process.output()


def shot(browser, name: str, tmp: Path) -> None:  # noqa: ANN001
    """Keep a screenshot (in docs/ too when REFEREE_DOCS_SCREENSHOTS=1)."""
    for target in [tmp / name] + ([ROOT / "docs" / name] if DOCS_SHOTS else []):
        browser.save_screenshot(str(target))


def start_game(browser, url: str, opponents: list[str], watched: ServerProcess) -> str:  # noqa: ANN001
    """Choose the opponents on the Play page (once the house bots are in the season) and
    start; the game page's URL."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    def offered() -> bool:
        browser.get(f"{url}/play/")
        assert "Play in the browser" in browser.page_source, browser.page_source[:300]
        text = text_of(browser, "select[name=opponents]")
        return all(name in text for name in opponents)

    wait_for("the house bots offered as opponents", offered, watched, every=2)
    chooser = Select(browser.find_element(By.NAME, "opponents"))
    for name in opponents:
        chooser.select_by_visible_text(f"{name} (house)")
    browser.find_element(By.CSS_SELECTOR, "#start-game").click()
    return wait_for("the game's page", lambda: browser.current_url.rstrip("/").split("/")[-2]
                    == "play" and browser.current_url, timeout=60)


# A page still being parsed has no #play yet: that is not the game's end (a loaded browser is
# often caught there right after the game's URL opens).
PAGE_NOW = """
if (document.readyState === 'loading') return '';
if (document.getElementById('replay') || !document.getElementById('play')) return 'over';
const open = document.querySelectorAll('#choice-buttons button:not([disabled])');
return open.length ? 'move' : '';
"""


ASKED = "return document.querySelector('#choices input[name=number]')?.value || '';"


def wait_turn(browser, watched: ServerProcess) -> str:  # noqa: ANN001
    """'move' once the page offers choices, 'over' once it shows the game's end."""
    return wait_for("the player's turn or the game's end",
                    lambda: browser.execute_script(PAGE_NOW), watched, every=0.3)


def tap(browser, selector: str, index: int) -> None:  # noqa: ANN001
    """Touch the index-th element `selector` matches, as a finger does (touch events through
    Chromium's input pipeline, which makes the click)."""
    x, y = browser.execute_script(
        "const b = document.querySelectorAll(arguments[0])[arguments[1]];"
        "b.scrollIntoView({block: 'center'}); const r = b.getBoundingClientRect();"
        "return [r.left + r.width / 2, r.top + r.height / 2];", selector, index)
    point = [{"x": x, "y": y}]
    browser.execute_cdp_cmd("Input.dispatchTouchEvent", {"type": "touchStart",
                                                          "touchPoints": point})
    browser.execute_cdp_cmd("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})


def move_count(browser) -> int:  # noqa: ANN001
    return browser.execute_script("return document.querySelectorAll('#steps li').length")


def record_of(server: ServerProcess, url: str) -> tuple[int, Path]:
    """The game's id from its page's URL and its record file in the data folder."""
    game = int(url.rstrip("/").split("/")[-1])
    return game, server.data / ClubFolder.human_game_record(game)


def test_a_whole_game_in_the_browser_with_a_reload_and_a_phone(
        server: ServerProcess, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    make_student(server.data, "dana")
    browser = start_browser(tmp_path / "profile", width=1300, height=1000)
    try:
        sign_in(browser, server.url, "dana", PASSWORD)
        page = start_game(browser, server.url, OPPONENTS, server)
        moves, reloaded, phone = 0, 0, False
        while wait_turn(browser, server) == "move":
            # The roll as dice, a button per legal choice, the board and the steps so far.
            assert text_of(browser, "#roll").startswith("Your roll:")
            assert "casino" in text_of(browser, "#casinos")
            # The player's seat is named as a person reads it: their name, "(you)" to them.
            assert "dana (you)" in text_of(browser, "#seats-now")
            assert "human-" not in text_of(browser, "#seats-now")
            # The opponents with their owners, house bots as such.
            assert text_of(browser, "#play-opponents") == ", ".join(
                f"{name} (house)" for name in OPPONENTS)
            if moves == 1:
                shot(browser, "play-browser-desktop.png", tmp_path)
            if moves == 3:
                # A reload: the page draws the game so far again and play goes on.
                before = move_count(browser)
                browser.refresh()
                assert wait_turn(browser, server) == "move"
                wait_for("the steps drawn again",
                         lambda before=before: move_count(browser) >= before, timeout=60)
                assert "Round 1" in text_of(browser, "#steps")
                reloaded += 1
            if moves == 5:
                # From here on a phone: its width, and a finger's taps.
                browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", PHONE)
                browser.execute_cdp_cmd("Emulation.setTouchEmulationEnabled",
                                        {"enabled": True, "maxTouchPoints": 5})
                phone = True
                width = browser.execute_script(
                    "return [document.documentElement.scrollWidth, window.innerWidth]")
                assert width[1] == 390 and width[0] <= 390, width
                shot(browser, "play-browser-phone.png", tmp_path)
            number = browser.execute_script(ASKED)
            count = len(browser.find_elements(By.CSS_SELECTOR, "#choice-buttons button"))
            if phone:
                tap(browser, "#choice-buttons button", moves % count)
            else:
                browser.find_elements(By.CSS_SELECTOR, "#choice-buttons button")[
                    moves % count].click()
            # Taken: the page waits for the others, or shows the next question or the end.
            wait_for("the move taken", lambda number=number: browser.execute_script(
                PAGE_NOW) == "over" or browser.execute_script(ASKED) != number or
                "your move is in" in text_of(browser, "#play-message"), server)
            assert "bad" not in browser.execute_script(
                "return document.getElementById('play-message')?.className || ''")
            moves += 1
        assert reloaded == 1 and phone and moves >= 8, moves
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
        # The end: who won and what decided it, then the replay, under the server's policy.
        assert text_of(browser, "#play-state") == "done"
        verdict = text_of(browser, "#play-verdict")
        assert verdict.startswith(("You won", "You finished")), verdict
        table = text_of(browser, "#result-table")
        assert "dana (you)" in table and all(name in table for name in OPPONENTS), table
        assert "human-" not in table and "human-" not in text_of(browser, "#play-decided")
        assert text_of(browser, "#play-decided"), "no word of what decided the places"
        browser.switch_to.frame(browser.find_element(By.CSS_SELECTOR, "#replay"))
        wait_for("the replay viewer", lambda: browser.find_elements(
            By.CSS_SELECTOR, "#viewer button"), timeout=60)
        viewer = text_of(browser, "#viewer")
        assert "dana (you)" in viewer and "human-" not in viewer, viewer[:500]
        browser.switch_to.default_content()
        browser.set_window_size(1300, 1300)
        shot(browser, "play-browser-replay.png", tmp_path)
        assert not csp_refusals(browser)
        browser.get(f"{server.url}/play/")   # the list of her games names the opponents
        assert text_of(browser, "#play-games .opponents") == ", ".join(
            f"{name} (house)" for name in OPPONENTS)
    finally:
        browser.quit()

    # The record: the human seat marked, every move the player's (no timeout strike), and
    # `referee verify` replays it to the same end.
    game, path = record_of(server, page)
    record = json.loads(path.read_text())
    bots = record["bots"]
    assert [b["name"] for b in bots] == ["dana", *OPPONENTS]
    assert bots[0]["human"] is True and not any(b.get("human") for b in bots[1:])
    assert record["human_game"] == {"id": game, "unrated": True,
                                    "seats": ["dana", *OPPONENTS]}
    assert not any(d.get("strike") for d in record["decisions"] if d.get("seat") == 0)
    end = next(e for e in record["events"] if e["type"] == "end")
    assert verdict.startswith("You won") == (end["places"][0] == 1), (verdict, end)
    verified = referee("verify", path)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    # Never rated: the season's store (whose games every fit rates) holds no human seat.
    from referee.league.store import LeagueStore

    store = LeagueStore.open_readonly(ClubFolder(server.data).season_league.store_path)
    try:
        assert not any(any(b.get("name") == "dana" or b.get("human") for b in r["bots"])
                       for r in store.records())
    finally:
        store.close()


def open_question(client: WebClient, game: int, server: ServerProcess) -> dict:
    """The question the runner asks the player of `game`, once it asks one."""
    return wait_for("a question for the player", lambda: client.get(
        f"/play/{game}/state").json()["question"], server)


def test_every_answer_is_checked_and_only_the_player_sees_the_game(
        server: ServerProcess) -> None:
    make_student(server.data, "erin")
    make_student(server.data, "fred")
    erin, fred = WebClient(server.url), WebClient(server.url)
    erin.sign_in("erin", PASSWORD)
    fred.sign_in("fred", PASSWORD)

    def house_ids() -> list[str]:
        import re

        answer = erin.get("/play/")
        assert answer.status == 200, answer.status
        page = answer.text
        return [value for value, name in re.findall(r'value="(\d+)"[^>]*>([^<]+) \(house\)',
                                                    page) if name in OPPONENTS]

    ids = wait_for("the house bots offered", house_ids, server, every=2)
    started = erin.post_form("/play/", {"opponents": ids[0]})
    assert started.status == 302, started.text[:300]
    game = int(started.headers["Location"].rstrip("/").split("/")[-1])
    question = open_question(erin, game, server)
    count = len(question["choices"])
    accept = {"Accept": "application/json"}

    def answer(client: WebClient, fields: dict[str, str]):  # noqa: ANN202
        from urllib.parse import urlencode

        body = urlencode({"csrfmiddlewaretoken": client.csrf(), **fields}).encode()
        return client.request("POST", f"/play/{game}/answer", body, {
            "Content-Type": "application/x-www-form-urlencoded", **accept})

    number = str(question["number"])
    legal = f"choose one of the {count} moves the buttons offer"
    for fields, status, said in (
            ({"number": number, "choice": str(count)}, 400, legal),
            ({"number": number, "choice": "-1"}, 400, legal),
            ({"number": number, "choice": "9" * 5000}, 400, legal),
            ({"number": number}, 400, legal),
            ({"number": str(question["number"] + 1), "choice": "0"}, 409, "no longer asked"),
            ({"number": "9" * 5000, "choice": "0"}, 409, "no longer asked"),
            ({"choice": "0"}, 409, "no longer asked")):
        refused = answer(erin, fields)
        assert refused.status == status and said in refused.json()["message"], refused.text
    # Another student: no game there, to see or to answer; the same for anyone signed out.
    assert fred.get(f"/play/{game}/").status == 404
    assert fred.get(f"/play/{game}/state").status == 404
    assert answer(fred, {"number": number, "choice": "0"}).status == 404
    assert WebClient(server.url).get(f"/play/{game}/state").status == 302
    # Without the CSRF token the answer is refused before it is read.
    forged = erin.request("POST", f"/play/{game}/answer", b"number=1&choice=0", {
        "Content-Type": "application/x-www-form-urlencoded"})
    assert forged.status == 403
    # The right answer is taken once; a second click on the same question is refused.
    taken = answer(erin, {"number": number, "choice": "0"})
    assert taken.status == 200 and taken.json() == {"ok": True, "message": "your move is in"}
    again = answer(erin, {"number": number, "choice": "0"})
    assert again.status == 409 and "no move is asked of you now" in again.json()["message"] \
        or "no longer asked" in again.json()["message"], again.text
    # A plain form (no script) gets its line as a message on the game's page.
    plain = erin.post_form(f"/play/{game}/answer", {"number": "0", "choice": "0"})
    assert plain.status == 302 and plain.headers["Location"] == f"/play/{game}/"


def test_a_game_left_alone_ends_by_the_human_seats_time_limit(tmp_path: Path) -> None:
    """Fifteen seconds per move and fifteen of bank: three timeouts, each the substitute's move,
    and the seat forfeits; the bots play the game to its end, and the record says so. (The
    limits are the browser's allowance to show the first question: half a minute, which a
    loaded browser beside three other test workers needed more than the ten seconds once
    given.)"""
    from selenium.webdriver.common.by import By

    process = start_server(tmp_path, "human_move_seconds = 15\nhuman_bank_seconds = 15\n",
                           house='["random"]')
    browser = start_browser(tmp_path / "profile", width=1300, height=1000)
    try:
        make_student(process.data, "gina")
        sign_in(browser, process.url, "gina", PASSWORD)
        page = start_game(browser, process.url, ["house-random.v1"], process)
        first = wait_turn(browser, process)
        # The page's own words if the game ended before its first question was shown.
        assert first == "move", (browser.find_element(By.TAG_NAME, "main").text[:600],
                                 process.output()[-3000:])
        assert "Your time: 15 s per move, 15 s bank." in text_of(browser, "#play-limits")
        shot(browser, "play-browser-question.png", tmp_path)
        # Nobody answers: the page shows the end once the runner has finished the game.
        wait_for("the replay", lambda: browser.find_elements(By.CSS_SELECTOR, "#replay"),
                 process, timeout=300)
        assert text_of(browser, "#play-state") == "done"
    finally:
        browser.quit()
        assert process.stop(signal.SIGTERM) == 0, process.output()
    _, path = record_of(process, page)
    record = json.loads(path.read_text())
    mine = [d for d in record["decisions"] if d.get("seat") == 0]
    assert [d.get("strike") for d in mine if d.get("strike")] == ["timeout"] * 3, mine
    assert [f.get("seat") for f in record.get("forfeits", [])] == [0], record.get("forfeits")
    verified = referee("verify", path)
    assert verified.returncode == 0, verified.stdout + verified.stderr
