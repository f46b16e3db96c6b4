"""The season says what it is, and its size is chosen: `referee serve` as a real process
writes the season file on its first start (every key, each explained, loading back to the
defaults), the season page shows every setting, the organiser's form changes the pace, the
limits and the house bots (a bad value is one line and changes nothing), and the runner holds
the next round back at the season's pace, applying a changed pace between rounds in one line."""

from __future__ import annotations

import os
import re
import signal
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
from proc_support import descendants, runs_module
from runner_support import Club, write_season
from server_support import ServerProcess, WebClient
from wait_support import wait_for

from referee.league.store import LeagueStore
from referee.server.shared.clubfolder import ClubFolder


@pytest.fixture(scope="module")
def first_start(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """A club server's first start on an empty data folder (no season file)."""
    data = tmp_path_factory.mktemp("season") / "data"
    server = ServerProcess(data)
    try:
        yield server
    finally:
        assert server.stop(signal.SIGTERM) == 0, server.output()


def organiser(server: ServerProcess) -> WebClient:
    client = WebClient(server.url)
    client.sign_in("organiser", server.organiser_password())
    return client


def test_the_first_start_writes_every_key_explained_and_it_loads_back_identical(
        first_start: ServerProcess, monkeypatch: pytest.MonkeyPatch) -> None:
    from referee.server.shared.seasonfile import KEYS, runner_values
    from referee.server.shared.seasonkeys import RunnerSettings, load_runner_settings

    path = first_start.data / "season.toml"
    lines = [line for line in first_start.output().splitlines() if "wrote the season file" in line]
    assert len(lines) == 1 and str(path) in lines[0], first_start.output()
    text = path.read_text()
    data = tomllib.loads(text)
    for key in KEYS:   # each key: its comment, then its value or a commented-out example
        table = data.get(key.table, {}) if key.table else data
        shown = re.search(rf"^# [^\n]+\n(# )?{key.name} = ", text, re.M)
        assert shown, key.name
        assert (key.name in table) == key.written, key.name
    assert data["games_per_bot_per_hour"] == 60
    assert runner_values(load_runner_settings(path)) == runner_values(RunnerSettings())
    from server_support import club_django

    club_django()
    monkeypatch.setenv("REFEREE_SEASON_FILE", str(path))
    from referee.server.shared.seasonkeys import ServerLimits
    from referee.server.shared.seasonread import public_leaderboard, server_limits

    assert server_limits() == ServerLimits() and public_leaderboard() is False
    assert path.stat().st_mode & 0o077 == 0   # owner-only, as the rest of the data folder


def test_every_key_the_server_reads_is_in_the_one_table() -> None:
    """The written file cannot miss a key: the runner's and the web's keys are all in KEYS,
    and every key of KEYS is one the season file accepts."""
    from referee.league.config import LEAGUE_KEYS
    from referee.server.shared.seasonfile import KEYS
    from referee.server.shared.seasonkeys import RUNNER_KEYS, WEB_KEYS

    top = {key.name for key in KEYS if not key.table}
    assert top >= RUNNER_KEYS | WEB_KEYS
    assert top <= RUNNER_KEYS | WEB_KEYS | LEAGUE_KEYS
    assert {key.table for key in KEYS} == {"", "limits", "ratings"}


def test_the_season_page_shows_each_setting(first_start: ServerProcess) -> None:
    client = organiser(first_start)
    assert 'href="/season/"' in client.get("/leaderboard/").text   # in the nav
    page = client.get("/season/")
    assert page.status == 200, page.text[:300]
    text = re.sub(r"<[^>]+>", "", page.text)
    for shown in ("the classic rules", "Tables of 4 players", "after 3 strikes",
                  "A version that forfeits 5 season games in a row",
                  "time per decision (ms)", "at most 5000 (the bot's own if lower)",
                  "Pace: about 60 games per bot per hour: a round starts at most every 4.0 "
                  "minutes", "every active bot 4 games", "round after round until the season "
                  "is closed", "up to 40 games", "drawn when the season first started",
                  "The season file names random, greedy, montecarlo",
                  "They are in the final tables", "games recorded", "on disk"):
        assert shown in text, (shown, text)
    # Like the leaderboard: spectators only while `public_leaderboard` is on.
    answer = WebClient(first_start.url).get("/season/")
    assert answer.status == 302 and "/login/" in answer.headers["Location"]


@pytest.mark.parametrize(("field", "value", "said"), [
    ("games_per_bot_per_hour", "-3", "pace (games per bot per hour): expected a whole "
                                     "number, got '-3'"),
    ("decision_ms", "0", "season.toml: key 'limits': decision_ms must be a whole number of "
                         "at least 1 ms, got 0"),
    ("house_bots", "random, nosuchbot", "season.toml: key 'house_bots': 'nosuchbot' is "
                                        "neither a sample bot"),
])
def test_a_bad_value_from_the_organiser_is_one_line_and_changes_nothing(
        first_start: ServerProcess, field: str, value: str, said: str) -> None:
    path = first_start.data / "season.toml"
    before = path.read_bytes()
    client = organiser(first_start)
    form = {"games_per_bot_per_hour": "60", "house_bots": "random, greedy, montecarlo",
            "house_in_final_table": "on", field: value}
    answer = client.post_form("/organiser/settings", form)
    assert answer.status == 302, answer.text[:300]
    page = client.get("/organiser/").text
    errors = re.findall(r'<li class="error">([^<]*)</li>', page)
    assert len(errors) == 1 and errors[0].startswith("not changed: ") and \
        said in errors[0].replace("&#x27;", "'"), errors
    assert path.read_bytes() == before
    assert not list(path.parent.glob(".season.toml.*"))   # no trial file left


def test_the_organiser_changes_the_limits_and_the_house_bots(first_start: ServerProcess) -> None:
    """The runner applies the form's new ceiling and house bots between rounds (once the house
    bots' checks are done) and says so in one line: the left-out house bot is disabled with
    its games kept, the ceiling is the season's from its next game on."""
    # The runner must have read the file before the form changes it: else it starts on the
    # changed file and has no change to tell (this test can come within a second of the start).
    wait_for("the runner's start", lambda: log_lines(first_start, ": started on "), first_start)
    client = organiser(first_start)
    form = {"games_per_bot_per_hour": "60", "house_bots": "random, greedy",
            "house_in_final_table": "on", "decision_ms": "500"}
    assert client.post_form("/organiser/settings", form).status == 302
    shown = re.findall(r'<li class="success">([^<]*)</li>', client.get("/organiser/").text)
    assert shown == ["season file changed: house bots: -montecarlo; limits: decision_ms 5000 "
                     "-&gt; 500 (the runner applies it between rounds)"], shown
    text = (first_start.data / "season.toml").read_text()
    assert "# the pace: rounds start no faster" in text   # the comments stay

    def said() -> list[str]:
        running(first_start)
        return log_lines(first_start, "season file changed")

    line = wait_for("the runner's line", said)
    assert len(line) == 1 and line[0].endswith(
        "season file changed: house bots: -montecarlo; limits: decision_ms 5000 -> 500"), line
    store = LeagueStore.open_readonly(ClubFolder(first_start.data).season_league.store_path)
    try:
        from referee.server.shared.seasonkeys import CEILINGS

        # The keys the form left blank are the server's default ceilings.
        assert store.settings()["limits"] == {**CEILINGS, "decision_ms": 500}
    finally:
        store.close()
    page = re.sub(r"<[^>]+>", "", client.get("/season/").text)
    assert "at most 500 (the bot's own if lower)" in page
    assert "house-montecarlo (out: no longer a house bot of the season file)" in page, page


def log_lines(server: ServerProcess, text: str) -> list[str]:
    return [line for line in server.output().splitlines() if text in line]


def running(server: ServerProcess) -> None:
    assert server.proc.poll() is None, server.output()


def rounds_and_games(db: Path) -> tuple[int, int, int]:
    """(rounds appended, games scheduled, games recorded) of the season's store."""
    store = LeagueStore.open_readonly(db)
    try:
        return store.settings()["season_rounds"], len(store.schedule()), store.count()
    finally:
        store.close()


def test_the_pace_holds_the_next_round_back_and_the_organiser_changes_it(
        tmp_path: Path) -> None:
    """At 1 game per bot per hour a round of 2 games per bot waits 2 hours for the next: the
    runner says so once the round is played, and nothing more is scheduled. The organiser's
    new pace is applied between rounds, said in one line on the page and in the runner's log;
    a bad value written into the file by hand is one line and changes nothing; pace 0 starts
    the next round at once."""
    data = tmp_path / "data"
    club = Club(data)
    write_season(data, """
        seed = 5
        players = 2
        round_games = 2
        games_per_bot_per_hour = 1
    """)
    club.ann_and_ben_passed()
    club.close()
    db = ClubFolder(data).season_league.store_path
    server = ServerProcess(data)
    try:
        def said(text: str) -> list[str]:
            running(server)
            return log_lines(server, text)

        waits = wait_for("the pace's wait", lambda: said("pace: round 1 done"))
        # Round 1: 2 bots, 2 games each at tables of 2 = 2 games; the next starts in 2 hours.
        assert "round 2 starts at" in waits[0] and "about 1 game per bot per hour" in waits[0]
        assert re.search(r"in (7[01]\d\d) s", waits[0]), waits[0]
        assert rounds_and_games(db) == (1, 2, 2)
        # A runner killed and started again keeps the pace: the round's start is stored.
        (runner,) = [pid for pid, line in descendants(server.proc.pid).items()
                     if runs_module(line, "referee.server.runner")]
        os.kill(runner, signal.SIGKILL)
        wait_for("the new runner's wait", lambda: len(said("pace: round 1 done")) == 2)
        assert rounds_and_games(db) == (1, 2, 2)

        client = organiser(server)
        form = {"games_per_bot_per_hour": "2", "house_bots": "", "house_in_final_table": "on"}
        assert client.post_form("/organiser/settings", form).status == 302
        shown = re.findall(r'<li class="success">([^<]*)</li>', client.get("/organiser/").text)
        assert shown == ["season file changed: pace: 1 -&gt; 2 games per bot per hour (the "
                         "runner applies it between rounds)"], shown
        line = wait_for("the runner's line", lambda: said("season file changed"))
        assert len(line) == 1 and line[0].endswith(
            "season file changed: pace: 1 -> 2 games per bot per hour"), line
        assert rounds_and_games(db) == (1, 2, 2)   # 2 per hour: round 2 waits an hour still

        path = data / "season.toml"
        path.write_text(path.read_text().replace("games_per_bot_per_hour = 2",
                                                 "games_per_bot_per_hour = -1"))
        refused = wait_for("the refusal", lambda: said("season file not applied"))
        assert len(refused) == 1 and refused[0].endswith(
            "key 'games_per_bot_per_hour': expected a whole number of at least 0, got -1"), \
            refused
        assert rounds_and_games(db) == (1, 2, 2)
        page = re.sub(r"<[^>]+>", "", client.get("/season/").text)
        assert "cannot be used as it is" in page and "2 games recorded" in page, page

        form["games_per_bot_per_hour"] = "0"
        assert client.post_form("/organiser/settings", form).status == 302
        wait_for("round 2", lambda: said("season file changed: pace: 2 -> 0 games per bot "
                                         "per hour"))
        wait_for("round 2's games", lambda: rounds_and_games(db)[2] >= 4)
        assert len(said("pace: round 1 done")) == 2
    finally:
        assert server.stop(signal.SIGTERM) == 0, server.output()
