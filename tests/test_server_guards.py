"""The club server's small guards against hostile students, each against a real `referee serve`
(web process and season runner) over HTTP, with a real season of real bots:

- /join/ says nothing about display names without a good join code;
- /api/submit takes personal tokens only, never a signed-in session;
- a new password (the student's page or the organiser's admin) revokes the user's API tokens;
- an id too long for the database is 404 on every route, with no traceback in the log;
- every answer carries a strict Content-Security-Policy, and the replay viewer runs under it;
- a replay shows a student their own bots' notes and values, never another student's.
"""

from __future__ import annotations

import re
import signal
import sqlite3
from collections.abc import Iterator

import pytest
from runner_support import Club, write_season
from server_support import ServerProcess, WebClient, make_student
from wait_support import wait_for

from referee.league.store import games_stored, unpack_record
from referee.server.shared.clubfolder import ClubFolder

PASSWORD = "a long password 1"          # runner_support.Club.student's
NEW_PASSWORD = "another-long-password-9"
LONG_ID = "9" * 20                       # past SQLite's 64-bit integers
JUNK = b"not an archive"                 # an upload the server reads and refuses: 400

# A bot that sends notes with each move: a text and a value, both naming their bot.
NOTE_BOT = """
import random

from referee.engine.policies import random_policy
from referee.sdk import Bot, run


class Noter(Bot):
    name = "noter"

    def choose(self, view):
        self.note("NOTE-OF-{mark}", **{{"value_of_{mark}": 1.5}})
        return random_policy(view, random.Random(self.request.request_id))


run(Noter())
"""


class Season:
    """The running server, its data folder and the club's database helper."""

    def __init__(self, server: ServerProcess, club: Club, ids: dict[str, int]) -> None:
        self.server, self.club, self.ids = server, club, ids

    def signed_in(self, name: str, password: str = PASSWORD) -> WebClient:
        client = WebClient(self.server.url)
        client.sign_in(name, password)
        return client

    def organiser(self) -> WebClient:
        return self.signed_in("organiser", self.server.organiser_password())

    def join_code(self, uses: int = 1) -> str:
        return self.club("from referee.server.club.people import make_join_code\n"
                         f"result = make_join_code('guards', {uses}).code")


@pytest.fixture(scope="module")
def season(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Season]:
    root = tmp_path_factory.mktemp("guards")
    data = root / "data"
    club = Club(data)
    write_season(data, """
        seed = 11
        players = 2
        round_games = 2
        refit_seconds = 1
    """)
    ids = {}
    for name in ("ann", "ben"):
        ids[name] = club.student(name)
        source = root / f"{name}.py"
        source.write_text(NOTE_BOT.format(mark=name.upper()))
        club.version(ids[name], f"{name}-bot", source, passed=True)
    server = ServerProcess(data)
    try:
        yield Season(server, club, ids)
    finally:
        club.close()
        assert server.stop(signal.SIGTERM) == 0, server.output()
        assert "Traceback" not in server.output(), server.output()


# ------------------------------------------------------------------------- join

def test_join_checks_the_code_before_it_says_a_name_is_taken(season: Season) -> None:
    web = WebClient(season.server.url)
    fields = {"display_name": "ann", "password": NEW_PASSWORD, "password_again": NEW_PASSWORD}
    # No good code: the answer is the same whether the name is taken or not.
    for name in ("ann", "nobody-has-this"):
        answer = web.post_form("/join/", {**fields, "code": "abcd-efgh-jkmn",
                                          "display_name": name})
        assert answer.status == 200
        assert "that join code is unknown, used up or withdrawn" in answer.text
        assert "is taken" not in answer.text
    # A good code with a taken name says so, and the refused join does not use the code up.
    code = season.join_code(uses=1)
    answer = web.post_form("/join/", {**fields, "code": code})
    assert answer.status == 200 and "the display name &#x27;ann&#x27; is taken" in answer.text
    answer = web.post_form("/join/", {**fields, "code": code, "display_name": "cleo"})
    assert answer.status == 302, answer.text[:500]


# ------------------------------------------------------------------------- tokens

def submit(web: WebClient, headers: dict[str, str]) -> int:
    """POST a junk upload to /api/submit; the status."""
    return web.request("POST", "/api/submit?bot=junk&filename=b.zip", JUNK,
                       {"Content-Type": "application/octet-stream", **headers}).status


def test_submit_takes_tokens_only_never_the_session(season: Season) -> None:
    token = make_student(season.server.data, "dina")
    web = season.signed_in("ann")                      # a session cookie on every request
    assert web.get("/tokens/").status == 200           # (a good one)
    for header in ({}, {"Authorization": "Basic YW5uOmFubg=="}, {"Authorization": "Token x"},
                   {"Authorization": "Bearer rt_not-a-token"}):
        assert submit(web, header) == 401, header
    # The API's answer to the session without a token is one JSON line.
    answer = web.request("POST", "/api/submit?bot=junk", JUNK,
                         {"Authorization": "Basic YW5uOmFubg=="})
    assert answer.status == 401 and "no valid token" in answer.json()["error"]
    # A token alone goes through (the junk is then refused for what it is).
    assert submit(WebClient(season.server.url), {"Authorization": f"Bearer {token}"}) == 400
    # Reading a version's state keeps working with the session (the version page polls it),
    # but a header that is not a good token is never taken for the session.
    version = season.club.value("BotVersion.objects.get(league_name='ann-bot.v1').pk")
    assert web.get(f"/api/versions/{version}").status == 200
    assert web.request("GET", f"/api/versions/{version}",
                       headers={"Authorization": "Basic YW5uOmFubg=="}).status == 401


def test_a_new_password_revokes_the_users_tokens(season: Season) -> None:
    bearer = {}
    for name in ("erin", "finn"):
        bearer[name] = {"Authorization": f"Bearer {make_student(season.server.data, name)}"}
        assert submit(WebClient(season.server.url), bearer[name]) == 400   # the token works
    # Erin changes her own password: the page says her token is revoked, and it is.
    erin = season.signed_in("erin", "a-long-club-password-7")
    answer = erin.post_form("/password/", {"old_password": "a-long-club-password-7",
                                           "new_password1": NEW_PASSWORD,
                                           "new_password2": NEW_PASSWORD})
    assert answer.status == 302, answer.text[:500]
    assert submit(WebClient(season.server.url), bearer["erin"]) == 401
    assert "Your 1 API token is revoked" in erin.get(answer.headers["Location"]).text
    assert "revokes your API tokens" in erin.get("/password/").text
    assert "revoked" in erin.get("/tokens/").text
    # The organiser resets Finn's password in the admin: Finn's token is revoked too.
    finn = season.club.value("User.objects.get(username='finn').pk")
    answer = season.organiser().post_form(f"/admin/auth/user/{finn}/password/", {
        "password1": NEW_PASSWORD, "password2": NEW_PASSWORD, "usable_password": "true"})
    assert answer.status == 302, answer.text[:2000]
    assert submit(WebClient(season.server.url), bearer["finn"]) == 401
    # Finn's new password signs in; a token made now works.
    finn_web = season.signed_in("finn", NEW_PASSWORD)
    token = re.search(r'<pre id="new-token">(rt_[A-Za-z0-9_-]+)</pre>',
                      finn_web.post_form("/tokens/new", {}).text).group(1)
    assert submit(WebClient(season.server.url), {"Authorization": f"Bearer {token}"}) == 400


# ------------------------------------------------------------------------- ids in URLs

def test_an_id_too_long_for_the_database_is_404_on_every_route(season: Season) -> None:
    student, boss = season.signed_in("ann"), season.organiser()
    before = season.server.output()
    gets = [f"/games/{LONG_ID}/", f"/games/{LONG_ID}/viewer", f"/versions/{LONG_ID}/",
            f"/versions/{LONG_ID}/download", f"/testgames/{LONG_ID}/",
            f"/testgames/{LONG_ID}/viewer", f"/api/versions/{LONG_ID}"]
    posts = [f"/tokens/{LONG_ID}/revoke", f"/organiser/codes/{LONG_ID}/withdraw",
             f"/organiser/bots/{LONG_ID}/disable"]
    for web in (student, boss):
        for path in gets:
            assert web.get(path).status == 404, path
        for path in posts:
            assert web.post_form(path, {}).status == 404, path
    for path in (f"/admin/auth/user/{LONG_ID}/change/", f"/admin/club/bot/{LONG_ID}/change/"):
        assert boss.get(path).status in (302, 404), path   # the admin: "does not exist"
    assert season.server.output().count("Traceback") == before.count("Traceback") == 0


# ------------------------------------------------------------------------- CSP

def policy(answer) -> dict[str, str]:  # noqa: ANN001
    header = answer.headers.get("Content-Security-Policy", "")
    return {part.split()[0]: " ".join(part.split()[1:])
            for part in header.split(";") if part.strip()}


STRICT = {"default-src": "'self'", "script-src": "'self'", "style-src": "'self'",
          "object-src": "'none'", "base-uri": "'none'", "form-action": "'self'"}


def test_every_answer_carries_a_strict_content_security_policy(season: Season) -> None:
    student, boss, anyone = season.signed_in("ann"), season.organiser(), \
        WebClient(season.server.url)
    answers = {"sign-in page": anyone.get("/login/"), "join page": anyone.get("/join/"),
               "a 404": anyone.get("/no-such-page"), "a static file":
               anyone.get("/static/club/club.css"), "the admin": boss.get("/admin/"),
               "the leaderboard": student.get("/leaderboard/"), "my bots": student.get("/"),
               "the organiser's page": boss.get("/organiser/"),
               "the API": student.get(f"/api/versions/{LONG_ID[:5]}"),
               "a refusal": anyone.request("POST", "/api/submit", JUNK)}
    for what, answer in answers.items():
        found = policy(answer)
        assert found.items() >= STRICT.items(), (what, found)
        assert found["frame-ancestors"] == "'none'", what
        assert "unsafe-inline" not in str(found) and "unsafe-eval" not in str(found), what


# ------------------------------------------------------------------------- replays

def first_game(season: Season) -> int:
    db = ClubFolder(season.server.data).season_league.store_path
    wait_for("a season game", lambda: games_stored(db) >= 1)
    store = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        index, blob = store.execute("SELECT idx, record FROM games ORDER BY idx").fetchone()
    finally:
        store.close()
    raw = unpack_record(blob).decode()
    assert "NOTE-OF-ANN" in raw and "NOTE-OF-BEN" in raw and "value_of_BEN" in raw
    return index


def test_a_replay_shows_only_the_students_own_notes_and_values(season: Season) -> None:
    index = first_game(season)
    for name, own, other in (("ann", "ANN", "BEN"), ("ben", "BEN", "ANN")):
        web = season.signed_in(name)
        viewer, page = web.get(f"/games/{index}/viewer"), web.get(f"/games/{index}/")
        assert viewer.status == page.status == 200
        assert f"NOTE-OF-{own}" in viewer.text and f"value_of_{own}" in viewer.text
        for text in (viewer.text, page.text):
            assert f"NOTE-OF-{other}" not in text and f"value_of_{other}" not in text
    # The organiser sees every seat's notes.
    viewer = season.organiser().get(f"/games/{index}/viewer").text
    assert "NOTE-OF-ANN" in viewer and "NOTE-OF-BEN" in viewer


def test_the_replay_viewer_runs_under_the_policy(season: Season) -> None:
    index = first_game(season)
    web = season.signed_in("ann")
    viewer = web.get(f"/games/{index}/viewer")
    found = policy(viewer)
    assert found.items() >= STRICT.items()
    assert found["frame-ancestors"] == "'self'"      # its game page frames it
    assert viewer.headers["X-Frame-Options"] == "SAMEORIGIN"
    # No inline script or style: the viewer's own files, linked from /static/report/.
    scripts = re.findall(r"<script([^>]*)>(.*?)</script>", viewer.text, re.S)
    assert all("src=" in attrs or 'type="application/json"' in attrs for attrs, _ in scripts)
    assert all(not body.strip() for attrs, body in scripts if "src=" in attrs)
    assert "<style" not in viewer.text
    for asset in re.findall(r'(?:src|href)="(/static/report/[^"]+)"', viewer.text):
        assert web.get(asset).status == 200, asset
    assert {"/static/report/viewer.js", "/static/report/report.css"} <= set(
        re.findall(r'(?:src|href)="(/static/report/[^"]+)"', viewer.text))
    assert policy(web.get(f"/games/{index}/"))["frame-ancestors"] == "'none'"
