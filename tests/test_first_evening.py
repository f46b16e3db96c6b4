"""A club's first evening, walked in a real headless Chromium against a real `referee serve`.

The organiser starts the server and makes a join code; three students join on the join page
and follow the three guides of docs/bots/ from their own code blocks (tests/doc_support.py), on a
fresh clone with empty caches:

* Ann follows the Python guide and uploads the archive it zips on the web page; the house
  bots play her first version at once (nobody else has uploaded yet).
* Ben follows the JavaScript guide and hands in with the guide's `referee submit`.
* Cal follows the C++ guide, uploads a copy with a compile error first and reads the failed
  check, then hands in the guide's bot with `referee submit`.

Then each takes the other way in: Ben's and Cal's guide archives on the web page, Ann's second
version with her guide's `referee submit`, which replaces her first. The leaderboard ranks
current versions only, the retired one a click away; the bot page charts its rating; the
season page says the season's pace and house bots; they and a replay fit a phone and a
desktop.
With REFEREE_DOCS_SCREENSHOTS=1 it retakes the screenshots docs/server.md shows.
"""

from __future__ import annotations

import re
import shutil
import signal
import subprocess
import zipfile
from pathlib import Path

import pytest
from doc_support import clean_env, fresh_clone, guide_steps, run_step
from report_support import chromium_missing
from server_support import ServerProcess
from test_cpp_bot import _require_toolchain
from test_guides import GUIDES, assert_followed
from test_server_browser import (
    DOCS_SHOTS,
    PHONE,
    ROOT,
    assert_fits,
    browser_at,
    check_state,
    click,
    csp_refusals,
    fill,
    join,
    make_join_code,
    screenshot,
    sign_in,
    text_of,
    upload,
)
from wait_support import wait_for

MISSING = chromium_missing()
pytestmark = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")


class Student:
    """One student's clone of the project, caches and browser: what following a guide needs."""

    def __init__(self, name: str, guide: str, tmp: Path) -> None:
        self.name, self.guide = name, guide
        self.top = fresh_clone(tmp / name / "clone")
        self.env = clean_env(tmp / name / "caches")
        self.browser = browser_at(tmp, name)
        self.printed: list[str] = []

    def follow(self, url: str, token: str, server_steps: bool) -> str:
        """Every marked step of the guide, its hand-in with `referee submit` only if
        `server_steps`; what the steps printed."""
        for step in guide_steps(GUIDES / self.guide):
            if step.server and not server_steps:
                continue
            self.printed.append(run_step(step.against(url, token), self.top, self.env).stdout)
        return "\n".join(self.printed)

    def hand_in(self, url: str, token: str) -> str:
        """The guide's `referee submit` steps alone; what they printed."""
        steps = [s for s in guide_steps(GUIDES / self.guide) if s.server]
        assert steps, f"{self.guide} has no marked `referee submit` step"
        return "\n".join(run_step(s.against(url, token), self.top, self.env).stdout
                         for s in steps)

    def token(self, url: str) -> str:
        self.browser.get(f"{url}/tokens/")
        click(self.browser, "#make-token")
        return wait_for("the new token", lambda: text_of(self.browser, "#new-token"), timeout=60)


def phone_screenshot(browser, name: str, tmp: Path) -> None:  # noqa: ANN001
    """The page as a 390 px phone shows it, into tmp (and docs/ with DOCS_SHOTS)."""
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", PHONE)
    try:
        for target in [tmp / Path(name).name] + ([ROOT / "docs" / name] if DOCS_SHOTS else []):
            browser.save_screenshot(str(target))
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def rows(browser, table: str) -> list[tuple[str, str, str]]:  # noqa: ANN001
    """(rank, bot, version number) of each row of a leaderboard table, shown or folded away, read in
    one script: the live table replaces its rows as new standings arrive."""
    found = browser.execute_script(
        "return [...document.querySelectorAll(arguments[0] + ' tbody tr')].map(row => "
        "[0, 1, 3].map(i => (row.cells[i] ? row.cells[i].textContent : '').trim()));", table)
    return [(rank, bot, version.removeprefix("v")) for rank, bot, version in found]


@pytest.mark.skipif(shutil.which("npm") is None, reason="node/npm are not installed")
def test_a_clubs_first_evening(tmp_path: Path) -> None:
    _require_toolchain()
    data = tmp_path / "club"
    data.mkdir()
    # The organiser's only choice: quick refits, so that the evening's tables fill at once.
    (data / "season.toml").write_text('name = "first evening"\nrefit_games = 8\n'
                                      'refit_seconds = 2\n')
    server = ServerProcess(data)
    url = server.url
    students: list[Student] = []
    try:
        # The organiser's browser closes once the code is made: fewer browsers at once on a
        # busy machine (one's renderer was lost with four open beside two CPU burners).
        organiser = browser_at(tmp_path, "organiser")
        try:
            sign_in(organiser, url, "organiser", server.organiser_password())
            code = make_join_code(organiser, url, "first evening")
        finally:
            organiser.quit()
        students += [Student("ann", "python.md", tmp_path),
                     Student("ben", "javascript.md", tmp_path), Student("cal", "cpp.md", tmp_path)]
        ann, ben, cal = students
        for student in students:
            join(student.browser, url, code, student.name)

        # Ann: the Python guide, its archive uploaded on the web page, passes first time.
        printed = ann.follow(url, "", server_steps=False)
        assert_followed("python.md", "mine", printed, ann.top)
        first = upload(ann.browser, url, ann.top / "mybot.zip", "mine")
        assert wait_for("Ann's check", lambda: check_state(ann.browser)) == "passed", \
            text_of(ann.browser, "#check-lines")
        assert "mine conforms" in text_of(ann.browser, "#check-lines")

        # Nobody else has uploaded: the house bots play her at once, and her page says so.
        def house_games() -> bool:
            ann.browser.get(f"{url}/bots/mine/")
            return "house-" in text_of(ann.browser, "#recent")

        wait_for("Ann's first games, against the house bots", house_games, every=2)
        screenshot(ann.browser, "server-evening-first-games.png", tmp_path)

        # Ben: the JavaScript guide word for word, handed in with `referee submit`.
        printed = ben.follow(url, ben.token(url), server_steps=True)
        assert_followed("javascript.md", "mine-js", printed, ben.top)
        assert "uploaded mine-js v1 as mine-js.v1" in printed and "check passed" in printed

        # Cal: the C++ guide; a copy with a compile error first, on the web page.
        cal.follow(url, "", server_steps=False)
        broken = tmp_path / "cal" / "broken"
        shutil.copytree(cal.top / "mybot-cpp", broken / "mybot-cpp",
                        ignore=shutil.ignore_patterns("target"))
        main = broken / "mybot-cpp" / "main.cpp"
        main.write_text(main.read_text() + "\nint this_line_does_not_compile = ;\n")
        subprocess.run(["zip", "-qr", "broken.zip", "mybot-cpp"], cwd=broken, check=True)
        upload(cal.browser, url, broken / "broken.zip", "mine-cpp")
        assert wait_for("Cal's failed check", lambda: check_state(cal.browser)) == "failed"
        lines = text_of(cal.browser, "#check-lines")
        assert "FAIL" in lines and "this_line_does_not_compile" in lines, lines
        assert "build_network" not in lines, lines   # a compile error is not a network problem
        screenshot(cal.browser, "server-evening-compile-error.png", tmp_path)
        printed = cal.hand_in(url, cal.token(url))
        assert "uploaded mine-cpp v2 as mine-cpp.v2" in printed and "check passed" in printed

        # The other way in for each: Ben's and Cal's guide archives on the web page, and Ann's
        # second version with her guide's `referee submit`, which replaces her first.
        # The guide's archive as it is holds the files of the version that passed: nothing
        # new, refused in one line naming it; with a file added it is a new version.
        for student, bot, version in ((ben, "mine-js", 2), (cal, "mine-cpp", 3)):
            (archive,) = student.top.glob("*.zip")
            student.browser.get(f"{url}/")
            fill(student.browser, {"bot": bot, "archive": str(archive)})
            click(student.browser, "#upload")
            said = wait_for("the refusal", lambda s=student: "upload refused" in text_of(
                s.browser, "body") and text_of(s.browser, ".messages"), timeout=120)
            assert f"identical to {bot}.v{version - 1} (v{version - 1}, the same files), " \
                   f"nothing new" in said, said
            with zipfile.ZipFile(archive, "a") as zipped:   # beside its code, in its folder
                folder = next(n for n in zipped.namelist() if "/" in n).split("/")[0]
                zipped.writestr(f"{folder}/NOTES.txt", "what I changed this evening\n")
            upload(student.browser, url, archive, bot)
            assert wait_for(f"{student.name}'s web upload", lambda s=student: check_state(
                s.browser)) == "passed", text_of(student.browser, "#check-lines")
            assert f"{bot}.v{version}" in student.browser.page_source
        main = ann.top / "mybot" / "main.py"   # her second version: a change to her bot
        main.write_text(main.read_text() + "\n# the second version\n")
        printed = ann.hand_in(url, ann.token(url))
        assert "uploaded mine v2 as mine.v2" in printed and "check passed" in printed, printed
        second = int(re.search(r"/versions/(\d+)/", printed).group(1))
        assert second != first
        ann.browser.get(f"{url}/versions/{second}/")
        wait_for("her second version in the season",
                 lambda: text_of(ann.browser, "#season-state-of-version") == "active", every=1)

        # The leaderboard ranks the current versions: one row per bot, the retired one apart.
        def everybody_ranked() -> list[tuple[str, str, str]]:
            ann.browser.get(f"{url}/leaderboard/")
            board = rows(ann.browser, "#leaderboard")
            bots = {bot: version for _, bot, version in board}
            retired = {(bot, version) for _, bot, version in rows(ann.browser, "#retired")}
            settled = bots.get("mine") == "2" and {"mine-js", "mine-cpp"} <= set(bots) and \
                {("mine", "1"), ("mine-js", "1"), ("mine-cpp", "2")} <= retired
            return board if settled else []

        board = wait_for("every student's current bot on the leaderboard", everybody_ranked,
                         every=3)
        assert [rank for rank, _, _ in board] == [str(i) for i in range(1, len(board) + 1)]
        assert sorted(bot for _, bot, _ in board) == sorted(
            ["mine", "mine-js", "mine-cpp", "house-random", "house-greedy",
             "house-montecarlo"]), board
        screenshot(ann.browser, "server-evening-leaderboard.png", tmp_path)
        phone_screenshot(ann.browser, "server-evening-leaderboard-phone.png", tmp_path)

        # Her bot's page: its rating over the season as a chart with its interval, once a
        # refit has rated her games; then one of its replays, on a phone and a desktop.
        def chart() -> bool:
            ann.browser.get(f"{url}/bots/mine/")
            return bool(ann.browser.find_elements("css selector", "#rating svg"))

        wait_for("her bot's rating chart", chart, every=3)
        game_url = wait_for("a game on her page", lambda: [
            a.get_attribute("href") for a in ann.browser.find_elements("css selector",
                                                                       "#recent a")
            if "/games/" in (a.get_attribute("href") or "")], every=2)[0]
        screenshot(ann.browser, "server-evening-bot.png", tmp_path)
        phone_screenshot(ann.browser, "server-evening-bot-phone.png", tmp_path)
        ann.browser.get(game_url)
        wait_for("the replay", lambda: ann.browser.find_elements("css selector", "#replay"),
                 timeout=60)
        # The season page says what the season is: its pace and its house bots among the rest.
        ann.browser.get(f"{url}/season/")
        assert "60" in text_of(ann.browser, "#pace"), text_of(ann.browser, "#pace")
        houses = text_of(ann.browser, "#season-house")
        assert all(name in houses for name in ("random", "greedy", "montecarlo")), houses
        screenshot(ann.browser, "server-evening-season.png", tmp_path)
        phone_screenshot(ann.browser, "server-evening-season-phone.png", tmp_path)
        assert_fits(ann.browser, url, ["/season/", "/leaderboard/", "/bots/mine/",
                                       "/bots/mine-cpp/", game_url.removeprefix(url),
                                       f"/versions/{second}/"])
        for student in students:
            assert not csp_refusals(student.browser), student.name
    finally:
        for student in students:
            student.browser.quit()
        assert server.stop(signal.SIGTERM) == 0, server.output()
