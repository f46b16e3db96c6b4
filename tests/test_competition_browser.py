"""A competition in a real headless Chromium against a real `referee serve`: the organiser
opens it with the Organiser page's form, a student enters her bot with the Enter button on
its page, and the competition's leaderboard at its slug fills with its own table without a
reload (its house bot beside the students' bots). With REFEREE_DOCS_SCREENSHOTS=1 it writes
the screenshot docs/server.md shows (server-competition.png)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from report_support import chromium_missing, start_browser
from runner_support import Club, write_season
from server_support import ROOT, ServerProcess, WebClient
from wait_support import wait_for

MISSING = chromium_missing()
if MISSING and os.environ.get("REFEREE_REQUIRE_BROWSER"):
    raise RuntimeError(f"the browser tests must run here: {MISSING}")
pytestmark = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")
DOCS_SHOTS = bool(os.environ.get("REFEREE_DOCS_SCREENSHOTS"))
PASSWORD = "a long password 1"   # runner_support.Club's students'


def text_of(browser, selector: str) -> str:  # noqa: ANN001
    return browser.execute_script(
        "const found = document.querySelector(arguments[0]);"
        "return found ? found.innerText : '';", selector)


def sign_in(browser, url: str, name: str, password: str) -> None:  # noqa: ANN001
    from selenium.webdriver.common.by import By

    browser.get(f"{url}/login/")
    for field, value in (("username", name), ("password", password)):
        browser.find_element(By.NAME, field).send_keys(value)
    browser.find_element(By.CSS_SELECTOR, "#sign-in").click()
    wait_for("signed in", lambda: "Sign out" in browser.page_source, timeout=60)


def test_a_competitions_board_in_a_real_browser(tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    data = tmp_path / "club"
    club = Club(data)
    write_season(data, "seed = 9\nplayers = 2\nround_games = 2\nrefit_seconds = 1\n")
    club.ann_and_ben_passed()
    club.close()
    server = ServerProcess(data)
    organiser = start_browser(tmp_path / "profile-organiser", width=1300, height=900)
    student = start_browser(tmp_path / "profile-ann", width=1300, height=900)
    try:
        url = server.url
        sign_in(organiser, url, "organiser", server.organiser_password())
        organiser.get(f"{url}/organiser/")
        for field, value in (("name", "Biggy month"), ("slug", "biggy"), ("players", "3"),
                             ("games_per_bot_per_hour", "0"), ("round_games", "2"),
                             ("house_bots", "greedy")):
            box = organiser.find_element(By.CSS_SELECTOR, f"#new-competition [name={field}]")
            box.clear()
            box.send_keys(value)
        Select(organiser.find_element(By.ID, "competition-rules-choice")).select_by_value(
            "biggy-slot")
        organiser.find_element(By.ID, "open-competition").click()
        wait_for("the competition opened", lambda: "Biggy month is open" in
                 organiser.page_source, timeout=60)
        assert "Biggy month" in text_of(organiser, "#competition-list")

        sign_in(student, url, "ann", PASSWORD)
        student.get(f"{url}/bots/ann-bot/")
        row = 'tr[data-slug="biggy"]'
        assert "not entered" in text_of(student, f"#bot-competitions {row}")
        student.find_element(By.CSS_SELECTOR, f"#bot-competitions {row} button.enter").click()
        wait_for("entered", lambda: "ann-bot is entered in Biggy month" in
                 student.page_source, timeout=60)
        assert text_of(student, f"#bot-competitions {row} .entered") == "entered"
        ben = WebClient(url)
        ben.sign_in("ben", PASSWORD)
        found = re.search(r"/bots/ben-bot/enter/(\d+)", ben.get("/bots/ben-bot/").text)
        assert found and ben.post_form(found.group(0), {}).status == 302

        # The board at its slug fills with its three bots without a reload.
        student.get(f"{url}/c/biggy/")
        student.execute_script("window.stillTheSamePage = true;")
        assert text_of(student, "h1") == "Biggy month"
        wait_for("Biggy month's table", lambda: all(
            name in text_of(student, "#leaderboard tbody")
            for name in ("ann-bot", "ben-bot", "house-greedy")), server, timeout=900)
        assert student.execute_script("return window.stillTheSamePage === true;")
        ranks = student.execute_script(
            "return Array.from(document.querySelectorAll('#leaderboard tbody tr'),"
            " row => row.querySelector('td').innerText);")
        assert ranks == ["1", "2", "3"]
        for target in [tmp_path / "server-competition.png"] + (
                [ROOT / "docs" / "server-competition.png"] if DOCS_SHOTS else []):
            student.save_screenshot(str(target))
        student.find_element(By.LINK_TEXT, "what it plays").click()
        wait_for("its season page", lambda: "biggy-slot" in text_of(
            student, "#competition-rules"), timeout=60)
    finally:
        organiser.quit()
        student.quit()
        assert server.stop() == 0, server.output()
