"""The club server end to end: a real `referee serve` (web process and season runner) on a
free loopback port, driven by a real headless Chromium (Debian's) and the real `referee submit`.

A student joins with the organiser's code, uploads a broken bot and reads its failed check,
uploads a working one and watches its check pass line by line, sees it on the leaderboard
(updated without a reload) after its games, opens a replay with its own output, and cannot open
another student's output or code; the organiser pauses, resumes and closes the season.
With REFEREE_DOCS_SCREENSHOTS=1 the test also writes the screenshots docs/server.md and
docs/bots/submitting.md show.
"""

from __future__ import annotations

import os
import re
import signal
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from cli_support import referee
from report_support import chromium_missing, start_browser
from server_support import ROOT, ServerProcess, student_bot, zip_of
from wait_support import wait_for

MISSING = chromium_missing()
if MISSING and os.environ.get("REFEREE_REQUIRE_BROWSER"):
    raise RuntimeError(f"the browser tests must run here: {MISSING}")
pytestmark = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")
DOCS_SHOTS = bool(os.environ.get("REFEREE_DOCS_SCREENSHOTS"))
WAIT_S = 900          # a busy machine: checks, games and refits take their time
PASSWORD = "a-long-club-password-7"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    root = tmp_path_factory.mktemp("club")
    (root / "data").mkdir()
    # Small unpaced rounds and frequent refits: the leaderboard fills within the test's
    # patience.
    (root / "data" / "season.toml").write_text(
        'name = "browser season"\nround_games = 4\ngames_per_bot_per_hour = 0\n'
        'refit_games = 8\nrefit_seconds = 2\n')
    process = ServerProcess(root / "data")
    try:
        yield process
    finally:
        status = process.stop(signal.SIGTERM)
        assert status == 0, process.output()


def browser_at(tmp: Path, name: str):  # noqa: ANN201
    return start_browser(tmp / f"profile-{name}", width=1300, height=900)


def screenshot(browser, name: str, tmp: Path) -> None:  # noqa: ANN001
    height = browser.execute_script("return document.documentElement.scrollHeight")
    browser.set_window_size(1300, min(max(height + 40, 700), 2200))
    for target in [tmp / Path(name).name] + ([ROOT / "docs" / name] if DOCS_SHOTS else []):
        browser.save_screenshot(str(target))
    browser.set_window_size(1300, 900)


def text_of(browser, selector: str) -> str:  # noqa: ANN001
    """The first match's text, read in one script call: live pages replace their elements
    as they poll, so an element found in one call may be gone by the next."""
    return browser.execute_script(
        "const found = document.querySelector(arguments[0]);"
        "return found ? found.innerText : '';", selector)


def cell_texts(browser, selector: str) -> list[list[str]]:  # noqa: ANN001
    """The cells' texts of the rows `selector` matches, read at one instant (see text_of)."""
    return browser.execute_script(
        "return Array.from(document.querySelectorAll(arguments[0]), row =>"
        " Array.from(row.querySelectorAll('td'), cell => cell.innerText));", selector)


def fill(browser, values: dict[str, str]) -> None:  # noqa: ANN001
    from selenium.webdriver.common.by import By

    for name, value in values.items():
        field = browser.find_element(By.NAME, name)
        field.clear()
        field.send_keys(value)


def click(browser, selector: str) -> None:  # noqa: ANN001
    from selenium.webdriver.common.by import By

    browser.find_element(By.CSS_SELECTOR, selector).click()


def sign_in(browser, url: str, name: str, password: str) -> None:  # noqa: ANN001
    browser.get(f"{url}/login/")
    fill(browser, {"username": name, "password": password})
    click(browser, "#sign-in")
    wait_for("signed in", lambda: "Sign out" in browser.page_source, timeout=60)


def make_join_code(browser, url: str, note: str) -> str:  # noqa: ANN001
    """The organiser, signed in on `browser`, makes a join code on the organiser page."""
    browser.get(f"{url}/organiser/")
    fill(browser, {"note": note, "max_uses": "30"})
    click(browser, "#make-code")
    return wait_for("a join code", lambda: re.search(r"new join code: ([a-z0-9-]+)",
                                                     browser.page_source),
                    timeout=60).group(1)


def join(browser, url: str, code: str, name: str) -> None:  # noqa: ANN001
    browser.get(f"{url}/join/")
    fill(browser, {"code": code, "display_name": name, "password": PASSWORD,
                   "password_again": PASSWORD})
    click(browser, "#join")
    wait_for("joined", lambda: "Welcome, " + name in browser.page_source, timeout=60)


def upload(browser, url: str, archive: Path, bot: str) -> int:  # noqa: ANN001
    """Upload on the web page; the new version's id (from the page it lands on)."""
    browser.get(f"{url}/")
    fill(browser, {"bot": bot, "archive": str(archive)})
    click(browser, "#upload")
    found = wait_for("the version page", lambda: re.search(r"/versions/(\d+)/$",
                                                          browser.current_url), timeout=120)
    return int(found.group(1))


def csp_refusals(browser) -> list[str]:  # noqa: ANN001
    """What the browser refused under the server's Content-Security-Policy since the last call
    (the console log is read once)."""
    return [entry["message"] for entry in browser.get_log("browser")
            if "Content Security Policy" in entry["message"]]


def check_state(browser) -> str:  # noqa: ANN001
    state = text_of(browser, "#check-state")
    return state if state in ("passed", "failed") else ""


PHONE = {"width": 390, "height": 844, "deviceScaleFactor": 1, "mobile": True}


def widths(browser, url: str, paths: list[str]) -> dict[str, tuple[int, int]]:  # noqa: ANN001
    """Each page's (document width, viewport width) as Chromium lays it out."""
    found = {}
    for path in paths:
        browser.get(url + path)
        found[path] = tuple(browser.execute_script(
            "return [document.documentElement.scrollWidth, window.innerWidth]"))
    return found


def assert_fits(browser, url: str, paths: list[str]) -> None:  # noqa: ANN001
    """Every page fits a 390 px phone and the desktop window: wide tables scroll inside their
    own box, never the page."""
    desktop = widths(browser, url, paths)
    assert all(width <= inner for width, inner in desktop.values()), desktop
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", PHONE)
    try:
        phone = widths(browser, url, paths)
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    assert all(inner == 390 and width <= 390 for width, inner in phone.values()), phone


def test_a_club_season_in_a_real_browser(server: ServerProcess, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    url = server.url
    organiser = browser_at(tmp_path, "organiser")
    student = browser_at(tmp_path, "student")
    try:
        # The organiser signs in with the first start's password and makes a join code.
        assert "first start: sign in at" in server.output()
        sign_in(organiser, url, "organiser", server.organiser_password())
        cookies = {c["name"]: c for c in organiser.get_cookies()}
        assert cookies["sessionid"]["httpOnly"] and cookies["sessionid"]["sameSite"] == "Lax"
        assert cookies["csrftoken"]["httpOnly"] and cookies["csrftoken"]["sameSite"] == "Strict"
        code = make_join_code(organiser, url, "Tuesday club")

        # Bob joins, makes a token and submits from the terminal: the check passes.
        join(student, url, code, "bob")
        student.get(f"{url}/tokens/")
        click(student, "#make-token")
        token = wait_for("the new token", lambda: text_of(student, "#new-token"), timeout=60)
        bob_bot = student_bot(tmp_path / "bob" / "bobbot", "bobbot", "BOB-WAS-HERE")
        done = referee("submit", bob_bot, "--server", url, env={"REFEREE_TOKEN": token},
                       timeout=WAIT_S, check=False)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "uploaded bobbot v1 as bobbot.v1" in done.stdout
        assert "check passed" in done.stdout and "PASS  start" in done.stdout
        bob_version = int(re.search(r"/versions/(\d+)/", done.stdout).group(1))
        student.find_element(By.CSS_SELECTOR, "header form button").click()   # sign out
        wait_for("signed out", lambda: "Sign in" in student.page_source, timeout=60)

        # Alice joins; her first upload cannot start, and its check says why.
        join(student, url, code, "alice")
        broken = student_bot(tmp_path / "alice" / "broken", "alicebot", "x")
        (broken / "main.py").write_text("import a_module_that_is_not_there\n")
        upload(student, url, zip_of(broken, tmp_path / "alicebot-broken.zip"), "alicebot")
        assert wait_for("the failed check", lambda: check_state(student)) == "failed"
        lines = text_of(student, "#check-lines")
        assert "FAIL  start" in lines and "a_module_that_is_not_there" in lines
        screenshot(student, "bots/submitting-failed-check.png", tmp_path)

        # Her fixed version passes, line by line as the page polls.
        good = student_bot(tmp_path / "alice" / "alicebot", "alicebot", "ALICE-WAS-HERE")
        alice_version = upload(student, url, zip_of(good, tmp_path / "alicebot.zip"),
                               "alicebot")
        assert wait_for("the passed check", lambda: check_state(student)) == "passed"
        assert "alicebot conforms" in text_of(student, "#check-lines")
        wait_for("the version in the season",
                 lambda: text_of(student, "#season-state-of-version") == "active")
        screenshot(student, "bots/submitting-check.png", tmp_path)
        student.get(f"{url}/")
        screenshot(student, "bots/submitting-my-bots.png", tmp_path)

        # The leaderboard shows her bot after its games, without a reload.
        student.get(f"{url}/leaderboard/")
        student.execute_script("window.stillTheSamePage = true;")
        wait_for("alicebot on the leaderboard", lambda: "alicebot" in text_of(
            student, "#leaderboard tbody") and "bobbot" in text_of(student,
                                                                   "#leaderboard tbody"))
        assert student.execute_script("return window.stillTheSamePage === true;")
        # Ranked 1, 2, 3... with one row per bot; the last row never carries the `~`.
        cells = cell_texts(student, "#leaderboard tbody tr")
        assert [c[0] for c in cells] == [str(i) for i in range(1, len(cells) + 1)]
        assert len({c[1] for c in cells}) == len(cells)
        assert not cells[-1][4].endswith("~"), cells[-1][4]
        screenshot(student, "server-leaderboard.png", tmp_path)

        # Her bot's page lists its games; a replay shows her own output and not Bob's.
        def a_game() -> str:
            """A game of hers, once a fit has rated her games (her record against each
            opponent comes from the fit, a refit after the game is stored)."""
            student.get(f"{url}/bots/alicebot/")
            links = student.find_elements(By.CSS_SELECTOR, "#recent a")
            rated = bool(text_of(student, "#opponents"))
            return links[0].get_attribute("href") if links and rated else ""

        game_url = wait_for("a recorded game", a_game, every=3)
        assert "opponents" in student.page_source and text_of(student, "#opponents")
        student.get(game_url)
        outputs = text_of(student, "#outputs")
        assert "ALICE-WAS-HERE" in outputs and "BOB-WAS-HERE" not in outputs
        frame = student.find_element(By.CSS_SELECTOR, "#replay")
        student.switch_to.frame(frame)
        wait_for("the replay viewer", lambda: student.find_elements(
            By.CSS_SELECTOR, "#viewer .seat-output, #viewer button"), timeout=60)
        viewer = student.page_source
        assert "ALICE-WAS-HERE" in viewer and "BOB-WAS-HERE" not in viewer
        assert not csp_refusals(student)   # the viewer runs under the policy, framed
        student.switch_to.default_content()
        screenshot(student, "bots/submitting-replay.png", tmp_path)

        # A test game against Bob's bot: played soon, not rated; its replay, her output only.
        from selenium.webdriver.support.ui import Select

        student.get(f"{url}/testgames/")
        Select(student.find_element(By.NAME, "version")).select_by_visible_text("alicebot.v2")
        # Opponents are named with their owners, as the leaderboard's student column does.
        Select(student.find_element(By.NAME, "opponents")).select_by_visible_text(
            "bobbot.v1 (bob)")
        click(student, "#ask-test-game")
        test_url = wait_for("the test game's page", lambda: re.search(
            r"/testgames/\d+/$", student.current_url) and student.current_url, timeout=60)

        def played() -> str:
            student.get(test_url)
            return text_of(student, "#testgame-state") in ("done", "failed") and \
                text_of(student, "#testgame-state")

        assert wait_for("the test game played", played, every=2) == "done", student.page_source
        outputs = text_of(student, "#outputs")
        assert "ALICE-WAS-HERE" in outputs and "BOB-WAS-HERE" not in outputs
        assert student.find_elements(By.CSS_SELECTOR, "#replay")
        assert "bobbot.v1 (bob)" in text_of(student, "#seats")
        student.get(f"{url}/testgames/")
        assert "bobbot.v1 (bob)" in text_of(student, "#testgames .opponents")

        # The house bots (the season file names none: the Python sample bots) are marked as
        # such on the leaderboard and offered for test games.
        student.get(f"{url}/leaderboard/")
        wait_for("a house bot on the leaderboard", lambda: "house" in text_of(
            student, "#leaderboard tbody"))
        # The fit's moment in the browser's zone like every other time (no "UTC" left).
        facts = text_of(student, "#board-facts")
        assert "(fit of " in facts and "UTC" not in facts, facts
        student.get(f"{url}/testgames/")
        assert "house-random.v1 (house)" in text_of(student, "select[name=opponents]")

        # Every page she sees fits a phone: wide tables scroll in their own box.
        assert_fits(student, url, [
            "/", "/leaderboard/", "/bots/alicebot/", "/bots/house-random/",
            game_url.removeprefix(url), test_url.removeprefix(url), "/testgames/",
            f"/versions/{alice_version}/", "/tokens/", "/password/", "/login/", "/join/"])

        # Bob's check report and code are not hers to open.
        for path in (f"/versions/{bob_version}/", f"/versions/{bob_version}/download",
                     f"/api/versions/{bob_version}"):
            student.get(url + path)
            assert "BOB" not in student.page_source
            assert "Not Found" in student.page_source or "no such" in student.page_source
        student.get(f"{url}/versions/{alice_version}/")
        assert "alicebot.v2" in student.page_source

        # The organiser pauses, resumes and closes the season; the runner writes its report.
        organiser.get(f"{url}/organiser/")
        for button, state in (("#pause", "paused"), ("#resume", "running"),
                              ("#close", "closed")):
            click(organiser, button)
            wait_for(f"the season {state}",
                     lambda state=state: text_of(organiser, "#organiser-season-state") == state,
                     timeout=60)
        screenshot(organiser, "server-organiser.png", tmp_path)
        assert_fits(organiser, url, ["/organiser/", "/leaderboard/", "/season/"])

        def report_link() -> bool:
            organiser.get(f"{url}/organiser/")
            return bool(organiser.find_elements(By.CSS_SELECTOR, "#season-report"))

        wait_for("the season's report", report_link, every=3)
        click(organiser, "#season-report")
        wait_for("the report's table", lambda: "alicebot" in organiser.page_source, timeout=60)
        # The report's pages, a replay in it and the admin work under the policy.
        organiser.get(f"{url}/organiser/report/games.html")
        wait_for("the report's game list", lambda: organiser.find_elements(
            By.CSS_SELECTOR, "#game-list tbody tr"), timeout=60)
        organiser.find_element(By.CSS_SELECTOR, "#game-list tbody tr a").click()
        wait_for("the report's replay", lambda: organiser.find_elements(
            By.CSS_SELECTOR, "#viewer button"), timeout=60)
        organiser.get(f"{url}/admin/auth/user/")
        wait_for("the admin's user list", lambda: "alice" in organiser.page_source, timeout=60)
        assert not csp_refusals(organiser) and not csp_refusals(student)
        student.get(f"{url}/organiser/report/")
        assert "Not Found" in student.page_source
    finally:
        organiser.quit()
        student.quit()


def test_times_show_in_the_readers_time_zone(tmp_path: Path) -> None:
    """club/times.js, as the pages load it, rewrites a UTC moment into the browser's own zone
    (Kathmandu: +05:45), and leaves a moment it cannot read as the server wrote it."""
    script = ROOT / "referee" / "server" / "club" / "static" / "club" / "times.js"
    page = tmp_path / "times.html"
    page.write_text(f'<!doctype html><html><head><script src="{script.as_uri()}" defer>'
                    '</script></head><body>'
                    '<time class="local" id="a" datetime="2026-12-03T07:15:00Z">'
                    '2026-12-03 07:15 UTC</time>'
                    '<time class="local" id="b" datetime="soon">soon UTC</time></body></html>')
    browser = browser_at(tmp_path, "times")
    try:
        browser.execute_cdp_cmd("Emulation.setTimezoneOverride",
                                {"timezoneId": "Asia/Kathmandu"})
        browser.get(page.as_uri())
        wait_for("the local time", lambda: text_of(browser, "#a") == "2026-12-03 13:00", timeout=60)
        assert text_of(browser, "#b") == "soon UTC"
    finally:
        browser.quit()


def test_a_rating_charts_time_axis_reads_in_the_readers_time_zone(tmp_path: Path) -> None:
    """A bot page's rating chart has a time axis: its first, middle and last moments, drawn in
    UTC by the runner and rewritten by club/times.js into the browser's zone (Kathmandu,
    +05:45), shorter than a page's times; the chart's labels stay inside it."""
    from referee.server.shared.ratinghistory import HEIGHT, WIDTH, chart_svg

    start = datetime(2026, 12, 3, 7, 15, tzinfo=UTC).timestamp()
    svg = chart_svg([[start, 1, 5, 10.0, -20.0, 40.0], [start + 7200, 1, 9, 15.0, -10.0, 30.0]])
    script = ROOT / "referee" / "server" / "club" / "static" / "club" / "times.js"
    css = ROOT / "referee" / "server" / "club" / "static" / "club" / "club.css"
    page = tmp_path / "chart.html"
    page.write_text(f'<!doctype html><html><head><link rel="stylesheet" href="{css.as_uri()}">'
                    f'<script src="{script.as_uri()}" defer></script></head><body>'
                    f'<div id="rating">{svg}</div></body></html>')
    browser = browser_at(tmp_path, "chart")
    try:
        browser.execute_cdp_cmd("Emulation.setTimezoneOverride",
                                {"timezoneId": "Asia/Kathmandu"})
        browser.get(page.as_uri())
        labels = "return [...document.querySelectorAll('#rating text.local')]" \
                 ".map((t) => t.textContent);"
        wait_for("the axis in local time", lambda: browser.execute_script(labels) == [
            "12-03 13:00", "12-03 14:00", "12-03 15:00"], timeout=60)
        # Every label inside the chart's box, none over another.
        boxes = browser.execute_script(
            "return [...document.querySelectorAll('#rating text.local')].map((t) => {"
            "const b = t.getBBox(); return [b.x, b.x + b.width, b.y, b.y + b.height]; });")
        assert all(x0 >= 0 and x1 <= WIDTH and y0 >= 0 and y1 <= HEIGHT
                   for x0, x1, y0, y1 in boxes), boxes
        assert all(a[1] < b[0] for a, b in zip(boxes, boxes[1:], strict=False)), boxes
    finally:
        browser.quit()


def test_ctrl_c_stops_the_server_with_status_130(tmp_path: Path) -> None:
    process = ServerProcess(tmp_path / "data")
    password = process.organiser_password()
    assert process.stop(signal.SIGINT) == 130, process.output()
    again = ServerProcess(tmp_path / "data")   # a second start keeps the organiser
    try:
        assert "first start" not in again.output()
        assert password not in again.output()
    finally:
        assert again.stop(signal.SIGTERM) == 0, again.output()
