"""A bot that starts but forfeits game after game, on a real `referee serve`: its version is
taken out of the season after `forfeits_to_take_out` forfeits in a row, whoever owns it (a
student's upload, a house bot), with the reason on its owner's My bots and its page; it is no
longer scheduled nor ranked; the organiser's word puts it back (and it is counted afresh), a
new upload of the bot comes back. An honest bot that forfeits now and then among finished
games stays."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from runner_support import Club, season_rows, write_season
from server_support import (
    PASSWORD,
    ServerProcess,
    WebClient,
    make_student,
    signed_in_organiser,
    student_bot,
    web_upload,
    zip_of,
)
from wait_support import wait_for

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[1]
BOTLIB = ROOT / "tests" / "bots" / "botlib.py"

# An answer that is well formed but illegal (a face not rolled), as tests/bots/illegal does;
# three of them in a game and the bot forfeits it.
ILLEGAL = '''
def illegal(request, start, n):
    legal = {(a.value, a.slot) for a in request.legal}
    for slot in (False, True):
        for value in range(1, 7):
            if (value, slot) not in legal:
                return [botlib.answer(request, value, slot)]
    return botlib.honest(request, start, n)
'''

# Plays honestly in its check (its opponents there are named by their specs) and illegally in
# every season game (its opponents there are versions: `name.vN`): a bot built and checked
# fine that fails in the season, as every JavaScript bot did once the machine had a sandbox.
SEASON_FORFEITER = f'''import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import botlib  # noqa: E402
{ILLEGAL}

def decide(request, start, n):
    if any(re.search(r"\\.v[0-9]+$", seat.bot_name) for seat in start.seats):
        return illegal(request, start, n)
    return botlib.honest(request, start, n)


botlib.run("flaky", decide)
'''

# Forfeits its 1st, 4th, 7th... game (counted in this process), plays the others honestly.
NOW_AND_THEN = f'''import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import botlib  # noqa: E402
{ILLEGAL}
games = {{}}


def decide(request, start, n):
    number = games.setdefault(start.game_id, len(games) + 1)
    if number % 3 == 1:
        return illegal(request, start, n)
    return botlib.honest(request, start, n)


botlib.run("oft", decide)
'''

SPEC = 'name = "{0}"\ncommand = ["{{python}}", "{0}/main.py"]\nworkdir = "."\n'


def bot_folder(folder: Path, name: str, source: str) -> Path:
    """A bot folder: its spec `bot.toml`, `name`/main.py and the test bots' botlib.py."""
    (folder / name).mkdir(parents=True)
    (folder / name / "main.py").write_text(source)
    (folder / "botlib.py").write_text(BOTLIB.read_text())
    (folder / "bot.toml").write_text(SPEC.format(name))
    return folder


def games_of(data: Path, name: str) -> list[tuple[int, bool]]:
    """(index, forfeited) of the stored games `name` sat at, in schedule order."""
    found = []
    for idx, bots, out in season_rows(data, "SELECT idx, bots, forfeited FROM games ORDER BY idx"):
        names = json.loads(bots)
        if name in names:
            found.append((idx, json.loads(out)[names.index(name)]))
    return found


def taken_out(club: Club, league_name: str) -> bool:
    return club.value(f"BotVersion.objects.filter(league_name={league_name!r}, taken_out=True, "
                      f"season_state='disabled').exists()")


def board_with(web: WebClient, league_name: str) -> dict | None:
    """The leaderboard's JSON once its fit has a row for `league_name` (ranked or not)."""
    board = web.get("/leaderboard.json").json()
    rows = board["rows"] + board["retired"]
    return board if any(row["table"]["bot"] == league_name for row in rows) else None


def test_a_bot_that_forfeits_every_game_is_taken_out_told_and_comes_back(
        tmp_path: Path) -> None:
    data = tmp_path / "club"
    club = Club(data)
    house = bot_folder(tmp_path / "house", "flaky", SEASON_FORFEITER)
    # forfeits_to_take_out left out: its default, 5.
    write_season(data, f"""
        house_bots = ["{house / 'bot.toml'}"]
        seed = 8
        players = 2
        round_games = 2
        refit_seconds = 1
    """)
    club.ann_and_ben_passed()
    server = ServerProcess(data)
    try:
        make_student(data, "mal")
        upload = zip_of(bot_folder(tmp_path / "mal", "flaky", SEASON_FORFEITER),
                        tmp_path / "mal.zip")
        version, page = web_upload(server.url, "mal", upload, bot="mal-bot")
        assert version is not None, page
        # Both pass their real checks, enter and forfeit: 5 in a row and they are out.
        # (Or 20 games each: a runner that never takes them out fails here, not at a timeout.)
        for name in ("mal-bot.v1", "house-flaky.v1"):
            wait_for(f"{name} taken out, or 20 of its games", lambda name=name: taken_out(
                club, name) or len(games_of(data, name)) >= 20, server, timeout=1200)
            assert taken_out(club, name), (name, games_of(data, name))
        mal_error = club.value("BotVersion.objects.get(league_name='mal-bot.v1').error")
        house_error = club.value("BotVersion.objects.get(league_name='house-flaky.v1').error")
        mal_games = games_of(data, "mal-bot.v1")
        # No longer scheduled: the others play a round more, it plays no game more.
        ann_before = len(games_of(data, "ann-bot.v1"))
        wait_for("the others play on", lambda: len(games_of(data, "ann-bot.v1"))
                 >= ann_before + 4, server, timeout=900)
        assert games_of(data, "mal-bot.v1") == mal_games
        # Its owner reads why on My bots and on its page; the leaderboard ranks it no more.
        mal = WebClient(server.url)
        mal.sign_in("mal", PASSWORD)
        mal_pages = [mal.get("/").text, mal.get("/bots/mal-bot/").text]
        board = wait_for("a table fitted on its games", lambda: board_with(mal, "mal-bot.v1"),
                         server, timeout=600)
        # The organiser reads the house bot's reason, and puts it back from its page.
        organiser = signed_in_organiser(server)
        house_page = organiser.get("/bots/house-flaky/").text
        organiser_page = organiser.get("/organiser/").text
        house_id = club.value("BotVersion.objects.get(league_name='house-flaky.v1').pk")
        house_games = games_of(data, "house-flaky.v1")
        answer = organiser.post_form(f"/organiser/versions/{house_id}/put-back",
                                     {"back": "bot"})
        assert answer.status == 302 and answer.headers["Location"] == "/bots/house-flaky/", \
            answer.status
        wait_for("house-flaky.v1 playing again", lambda: len(games_of(
            data, "house-flaky.v1")) > len(house_games), server, timeout=900)
        # ... counted afresh: five forfeits more, and it is out again.
        wait_for("house-flaky.v1 taken out again", lambda: taken_out(club, "house-flaky.v1"),
                 server, timeout=900)
        again = games_of(data, "house-flaky.v1")[len(house_games):]
        # A new upload of mal's bot, an honest one, comes back.
        honest = student_bot(tmp_path / "mal2", "fixed", "fixed-bot")
        version2, page = web_upload(server.url, "mal", zip_of(honest, tmp_path / "fixed.zip"),
                                    bot="mal-bot")
        assert version2 is not None, page
        wait_for("mal-bot v2 playing", lambda: games_of(data, "mal-bot.v2"), server,
                 timeout=1200)
        states = club.value("dict(BotVersion.objects.values_list('league_name', "
                            "'season_state'))")
        notices = club.value("list(Notice.objects.values_list('text', flat=True))")
    finally:
        server.stop()
        club.close()
    reason = re.compile(r"taken out of the season: it forfeited 5 season games in a row; the "
                        r"last, game (\d+): 3 strikes; the last: illegal")
    for error in (mal_error, house_error):
        assert reason.match(error), error
    found = reason.match(mal_error)
    assert found is not None
    # It forfeited every game it played (the games in flight when it was taken out finished),
    # the one its reason names among them.
    assert len(mal_games) >= 5 and all(out for _, out in mal_games), mal_games
    assert int(found.group(1)) in {index for index, _ in mal_games}, (mal_games, mal_error)
    for page in mal_pages:
        assert "it forfeited 5 season games in a row" in page, page
    assert "mal-bot.v1" not in {row["table"]["bot"] for row in board["rows"]}, board
    assert {row["table"]["bot"]: row["state"] for row in board["retired"]}.get(
        "mal-bot.v1") == "disabled", board
    assert "it forfeited 5 season games in a row" in house_page
    assert f"/organiser/versions/{house_id}/put-back" in house_page
    assert f"/organiser/versions/{house_id}/put-back" in organiser_page
    assert "house-flaky v1 is put back into the season by the organiser" in " ".join(notices)
    assert len(again) >= 5 and all(out for _, out in again[-5:]), again
    assert states["mal-bot.v1"] == "disabled" and states["mal-bot.v2"] == "active"
    assert states["house-flaky.v1"] == "disabled"


def test_an_honest_bot_that_forfeits_now_and_then_stays(tmp_path: Path) -> None:
    """Three forfeits in a row would take it out here; it forfeits one game in three, more
    than three games in all, never two in a row, and plays on."""
    data = tmp_path / "club"
    club = Club(data)
    write_season(data, """
        seed = 9
        players = 2
        round_games = 3
        concurrency = 1
        forfeits_to_take_out = 3
    """)
    club.ann_and_ben_passed()
    folder = bot_folder(tmp_path / "oft", "oft", NOW_AND_THEN)
    club.version(club.student("oli"), "oft-bot", folder / "oft" / "main.py", passed=True,
                 spec_text=SPEC.format("oft"),
                 files={"oft/main.py": folder / "oft" / "main.py",
                        "botlib.py": folder / "botlib.py"})
    server = ServerProcess(data)
    try:
        wait_for("four forfeits of oft-bot, or oft-bot taken out", lambda: sum(
            out for _, out in games_of(data, "oft-bot.v1")) >= 4 or club.value(
            "BotVersion.objects.get(league_name='oft-bot.v1').season_state == 'disabled'"),
            server, timeout=1200)
        state = club.value("BotVersion.objects.get(league_name='oft-bot.v1').season_state")
        error = club.value("BotVersion.objects.get(league_name='oft-bot.v1').error")
        played = games_of(data, "oft-bot.v1")
    finally:
        server.stop()
        club.close()
    assert state == "active", (state, error)
    assert "taken out" not in error
    assert any(not out for _, out in played), played
