"""The club server on the open internet: what all share, numbers from people, a broken season
file (docs/security.md, "The club server on the open internet"). One real `referee serve`
(its web workers and season runner, the real SQLite, the house bot in the real sandbox) for
the module; every client is plain HTTP with its own cookies.

- No student holds what all share: a fifth live stream of one student is refused (429, one
  line) while another student's opens; a second game in the browser of one student is
  refused while another student's starts; a game whose player does not answer ends by the
  season file's `human_idle_seconds` as a forfeit of the player's seat; the organiser's page
  lists who holds what.
- A superscript two in a number of a request is a 400 (or the stale move's 409), never 500.
- A season file broken while the server runs: every page still answers 200 with the last good
  season, the organiser's page shows the problem in one line, no one else sees its path.
"""

from __future__ import annotations

import http.client
import json
import re
import signal
from collections.abc import Iterator

import pytest
from server_support import (
    PASSWORD,
    ServerProcess,
    WebClient,
    make_student,
    signed_in_organiser,
    signed_in_student,
)
from wait_support import wait_for

from referee.server.shared.clubfolder import ClubFolder

pytestmark = pytest.mark.slow

IDLE_S = 15      # the season file's human_idle_seconds here (the default is 180)
SEASON = ('name = "share season"\nround_games = 1\nmax_rounds = 1\n'
          'games_per_bot_per_hour = 0\nhouse_bots = ["random"]\npublic_leaderboard = true\n'
          f"human_idle_seconds = {IDLE_S}\n")
SUPER_TWO = "\u00b2"
QUOTED_TWO = "%C2%B2"   # ² in a URL


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    root = tmp_path_factory.mktemp("share")
    (root / "data").mkdir()
    (root / "data" / "season.toml").write_text(SEASON)
    process = ServerProcess(root / "data")
    try:
        yield process
    finally:
        assert process.stop(signal.SIGTERM) == 0, process.output()



def house_id(client: WebClient, server: ServerProcess) -> str:
    """The house random bot's version id as the Play page offers it (once it is checked)."""
    def offered() -> str | None:
        found = re.search(r'value="(\d+)"[^>]*>house-random\.v1 \(house\)',
                          client.get("/play/").text)
        return found.group(1) if found else None

    return wait_for("the house bot offered", offered, server, every=2, timeout=600)


def start_game(client: WebClient, server: ServerProcess) -> tuple[int, int]:
    """POST a new game in the browser against the house bot; (status, game id or 0)."""
    answer = client.post_form("/play/", {"opponents": house_id(client, server)})
    if answer.status != 302:
        return answer.status, 0
    return 302, int(answer.headers["Location"].rstrip("/").split("/")[-1])


def state(client: WebClient, game: int) -> dict:
    return client.get(f"/play/{game}/state").json()


def open_stream(client: WebClient, path: str, headers: dict[str, str] | None = None
                ) -> tuple[http.client.HTTPConnection, http.client.HTTPResponse]:
    """A GET whose answer stays open (a live stream): the connection and its answer, whose
    status and headers are read and whose body is not."""
    host, port = client.url.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=120)
    cookies = "; ".join(f"{c.name}={c.value}" for c in client.cookies)
    connection.request("GET", path, headers={"Cookie": cookies, **(headers or {})})
    return connection, connection.getresponse()


def test_a_number_that_is_no_plain_number_is_refused_not_a_500(server: ServerProcess) -> None:
    """`²` passes str.isdigit() and fails int(): each place a number comes from a request
    answers it with one line (400, or the stale move's 409), not 500 and a traceback."""
    nina = signed_in_student(server, "nina")
    status, game = start_game(nina, server)
    assert status == 302
    question = wait_for("a question for the player", lambda: state(nina, game)["question"],
                        server)
    accept = {"Accept": "application/json"}

    def answer(fields: dict[str, str]):  # noqa: ANN202
        from urllib.parse import urlencode

        body = urlencode({"csrfmiddlewaretoken": nina.csrf(), **fields}).encode()
        return nina.request("POST", f"/play/{game}/answer", body, {
            "Content-Type": "application/x-www-form-urlencoded", **accept})

    for fields, status in (({"number": str(question["number"]), "choice": SUPER_TWO}, 400),
                           ({"number": SUPER_TWO, "choice": "0"}, 409),
                           ({"number": str(question["number"]), "choice": "\u0661"}, 400)):
        refused = answer(fields)
        assert refused.status == status, (fields, refused.status, refused.text)
        assert "\n" not in refused.json()["message"]
    for path, said in ((f"/play/{game}/state?since={QUOTED_TWO}", "since must be"),
                       (f"/games/999999/watch?tries={QUOTED_TWO}", "tries must be"),
                       (f"/games/{QUOTED_TWO}/watch", "")):
        got = nina.get(path)
        assert got.status in (400, 404), (path, got.status, got.text[:300])
        assert said in got.text and "Traceback" not in got.text
    for path, last in (("/games/live", f"1.{SUPER_TWO}"), ("/games/live", SUPER_TWO),
                       ("/games/999999/live", SUPER_TWO)):
        connection, got = open_stream(nina, path, {"Last-Event-ID": last})
        try:
            assert got.status == 400, (path, last, got.status)
            assert b"Last-Event-ID" in got.read()
        finally:
            connection.close()
    assert "Traceback" not in server.output()


def test_one_student_never_holds_every_stream(server: ServerProcess) -> None:
    """streams_per_student (4 by default): the fifth stream of one student is refused with
    one line while another student's opens, and the organiser's page says who holds what."""
    sam, tess = signed_in_student(server, "sam"), signed_in_student(server, "tess")
    opened = [open_stream(sam, "/games/live") for _ in range(4)]
    others = []
    try:
        assert [answer.status for _, answer in opened] == [200] * 4
        connection, fifth = open_stream(sam, "/games/live")
        others.append((connection, fifth))
        assert fifth.status == 429
        said = fifth.read().decode()
        assert said.count("\n") == 1 and "you have 4 live games open already" in said, said
        others.append(open_stream(tess, "/games/live"))
        assert others[-1][1].status == 200
        page = signed_in_organiser(server).get("/organiser/").text
        usage = page[page.index('id="usage"'):]
        assert re.search(r"<td>sam</td><td>4</td>", usage), usage[:1000]
        assert re.search(r"<td>tess</td><td>1</td>", usage), usage[:1000]
    finally:
        for connection, _ in opened + others:
            connection.close()
    # Closed streams give their slots back: sam opens one again.
    again = wait_for("sam's slots given back", lambda: open_stream(sam, "/games/live"),
                     server)
    try:
        assert again[1].status == 200
    finally:
        again[0].close()


def test_one_browser_game_per_student_and_an_idle_one_ends(server: ServerProcess) -> None:
    """A student's second game in the browser is refused while theirs goes on, another
    student's starts; nobody answers the first, and it ends after human_idle_seconds as a
    forfeit of the player's seat (the defaults would hold it about 45 minutes)."""
    uma, vic = signed_in_student(server, "uma"), signed_in_student(server, "vic")
    status, first = start_game(uma, server)
    assert status == 302
    wait_for("uma's game running", lambda: state(uma, first)["state"] == "running", server)
    second, _ = start_game(uma, server)
    assert second == 429
    refused = uma.post_form("/play/", {"opponents": house_id(uma, server)})
    assert f"your game {first} in the browser is still going" in refused.text
    status, theirs = start_game(vic, server)
    assert status == 302
    wait_for("vic's game running", lambda: state(vic, theirs)["state"] == "running", server)
    page = signed_in_organiser(server).get("/organiser/").text
    usage = page[page.index('id="usage"'):]
    assert re.search(r"<td>uma</td><td>0</td><td>1</td>", usage), usage[:1000]
    assert re.search(r"<td>vic</td><td>0</td><td>1</td>", usage), usage[:1000]
    # Nobody answers uma's game: it ends by the idle time, far inside the limits' 35 minutes.
    wait_for("uma's idle game over", lambda: state(uma, first)["state"] == "done", server,
             timeout=600)
    steps = state(uma, first)["steps"]
    assert any(f"no answer for {IDLE_S} s: the player has left" in line for line in steps)
    record = json.loads((server.data / ClubFolder.human_game_record(first)).read_text())
    assert [f["seat"] for f in record.get("forfeits", [])] == [0], record.get("forfeits")
    # Over: uma may start another.
    assert start_game(uma, server)[0] == 302


def test_a_broken_season_file_keeps_the_last_good_season(server: ServerProcess) -> None:
    """The season file made no TOML while the server runs: sign-in, /, /play/, /season/ and
    the leaderboard answer 200 with the last good season; the organiser's page says why in
    one line; no page for anyone else, signed in or not, shows the file's path."""
    season_file = server.data / "season.toml"
    good = season_file.read_text()
    wendy = signed_in_student(server, "wendy")
    assert "share season" in wendy.get("/season/").text
    try:
        season_file.write_text(good + "\nthis is = = not toml\n")
        make_student(server.data, "xavi")
        xavi = WebClient(server.url)
        xavi.sign_in("xavi", PASSWORD)   # asserts the 302 of a sign-in
        anonymous = WebClient(server.url)
        for client, paths in ((wendy, ("/", "/play/", "/season/", "/leaderboard/")),
                              (xavi, ("/", "/season/")),
                              (anonymous, ("/login/", "/season/", "/leaderboard/"))):
            for path in paths:
                page = client.get(path)
                assert page.status == 200, (path, page.status, page.text[:300])
                assert str(server.data) not in page.text and "season.toml" not in page.text
        assert "share season" in anonymous.get("/season/").text   # the last good one
        page = signed_in_organiser(server).get("/organiser/").text
        line = re.search(r'<p class="bad" id="settings-problem">(.*?)</p>', page)
        assert line and "invalid TOML" in line.group(1) and "\n" not in line.group(1), page
        assert "keeps the last good season" in line.group(1)
    finally:
        season_file.write_text(good)
    page = signed_in_organiser(server).get("/organiser/").text
    assert 'id="settings-problem"' not in page
