"""Every rate limit of a real `referee serve` (several web workers, one SQLite database) holds
when a hundred requests meet it at once from loopback threads, and holds for its whole hour
however many other clients are counted meanwhile; a classroom behind one address is not locked
out by one student; API tokens end (disabled account, 90 days) and are rate-limited.

Each parallel test sends its hundred requests behind one barrier and counts the answers that
were not 429: exactly the limit, never more (the counters were read, then written, in Django's
file cache, and 100 sign-ins met a limit of 30, 40 uploads one of 30...)."""

from __future__ import annotations

import http.client
import re
import threading
import time
import urllib.parse
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
from runner_support import Club
from server_support import ServerProcess, make_student
from test_server_signin import Browser

pytestmark = pytest.mark.slow

PASSWORD = "a-long-club-password-7"   # make_student's
AT_ONCE = 100
API_PER_HOUR = 120                    # the season file's api_requests_per_hour here
# The defaults (limits.py), which this server keeps.
ADDRESS, PAIR, NAME, UPLOADS, JOINS, TEST_GAMES = 30, 10, 50, 30, 20, 10


def clear_of_the_hour() -> None:
    """Wait (at most two minutes) while the full hour is less than two minutes away: one
    test's requests then all fall in one hour's window."""
    left = 3600 - time.time() % 3600
    if left < 120:
        time.sleep(left + 1)


def at_once(count: int, send: Callable[[int], int]) -> Counter[int]:
    """`send(i)` for i in range(count) on as many threads, released together by a barrier;
    how many of each status came back."""
    clear_of_the_hour()
    gate = threading.Barrier(count)

    def one(i: int) -> int:
        gate.wait(timeout=120)
        return send(i)

    with ThreadPoolExecutor(count) as pool:
        return Counter(pool.map(one, range(count)))


def let_through(statuses: Counter[int]) -> int:
    """The requests not refused by a rate limit (any answer but 429), after checking that
    every answer was an honest one."""
    assert set(statuses) <= {200, 201, 302, 400, 401, 403, 404, 413, 429}, statuses
    return sum(n for status, n in statuses.items() if status != 429)


def post(server: ServerProcess, path: str, body: bytes, headers: dict[str, str],
         address: str = "127.0.0.1", method: str = "POST") -> int:
    """One request on a connection of its own from `address`; its status."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=300,
                                      source_address=(address, 0))
    try:
        conn.request(method, path, body=body, headers={"Host": "127.0.0.1", **headers})
        answer = conn.getresponse()
        answer.read()
        return answer.status
    finally:
        conn.close()


def form(browser: Browser, path: str, fields: dict[str, str]) -> tuple[bytes, dict[str, str]]:
    """A form as `browser` posts it at `path` (its CSRF token from the page, its cookies)."""
    status, page = browser.request("GET", path)
    assert status == 200, (status, page[:300])
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    body = urllib.parse.urlencode({"csrfmiddlewaretoken": token, **fields}).encode()
    return body, {"Content-Type": "application/x-www-form-urlencoded",
                  "Cookie": "; ".join(f"{k}={v}" for k, v in browser.cookies.items())}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    data = tmp_path_factory.mktemp("limits") / "data"
    data.mkdir()
    (data / "season.toml").write_text(f"api_requests_per_hour = {API_PER_HOUR}\n")
    process = ServerProcess(data)
    try:
        yield process
    finally:
        assert process.stop() == 0, process.output()


@pytest.fixture(scope="module")
def tokens(server: ServerProcess) -> dict[str, str]:
    """Students of this server and their API tokens."""
    return {name: make_student(server.data, name)
            for name in ("ann", "bea", "cid", "dan", "eve", "fay", "gus", "hal", "ida", "jo",
                         "kim")}


# -- Item 2: every limit holds under parallel requests ---------------------------------------

def test_parallel_wrong_sign_ins_from_one_address_meet_its_limit(server: ServerProcess) -> None:
    body, headers = form(Browser(server, "127.0.10.1"), "/login/",
                         {"username": "nobody-0", "password": "wrong"})
    statuses = at_once(AT_ONCE, lambda i: post(server, "/login/", body.replace(
        b"nobody-0", f"nobody-{i}".encode()), headers, "127.0.10.1"))
    assert let_through(statuses) == ADDRESS, statuses


@pytest.mark.parametrize("path", ["/login/", "/admin/login/"])
def test_parallel_wrong_passwords_for_one_name_meet_its_limit(
        server: ServerProcess, tokens: dict[str, str], path: str) -> None:
    address = "127.0.10.2" if path == "/login/" else "127.0.10.3"
    body, headers = form(Browser(server, address), path,
                         {"username": "ann", "password": "wrong-guess", "next": "/"})
    statuses = at_once(AT_ONCE, lambda _i: post(server, path, body, headers, address))
    assert let_through(statuses) == PAIR, statuses


def test_parallel_wrong_passwords_for_one_name_from_many_addresses_meet_its_limit(
        server: ServerProcess, tokens: dict[str, str]) -> None:
    body, headers = form(Browser(server, "127.0.11.200"), "/login/",
                         {"username": "bea", "password": "wrong-guess"})
    statuses = at_once(AT_ONCE, lambda i: post(server, "/login/", body, headers,
                                               f"127.0.11.{i + 1}"))
    assert let_through(statuses) == NAME, statuses


def test_parallel_joins_from_one_address_meet_their_limit(server: ServerProcess) -> None:
    body, headers = form(Browser(server, "127.0.10.4"), "/join/", {
        "code": "no-such-code", "display_name": "newcomer", "password": PASSWORD,
        "password_again": PASSWORD})
    statuses = at_once(AT_ONCE, lambda _i: post(server, "/join/", body, headers,
                                                "127.0.10.4"))
    assert let_through(statuses) == JOINS, statuses


def signed_in(server: ServerProcess, name: str, address: str) -> Browser:
    browser = Browser(server, address)
    assert browser.sign_in(name, PASSWORD)[0] == 302
    return browser


def test_parallel_uploads_meet_their_limit(server: ServerProcess,
                                           tokens: dict[str, str]) -> None:
    # `referee submit`'s request; no archive in it (each is refused once counted). The web
    # form's uploads are counted by the same function (`services.check_upload`).
    headers = {"Authorization": f"Bearer {tokens['cid']}", "Content-Type": "application/zip"}
    statuses = at_once(AT_ONCE, lambda _i: post(server, "/api/submit?bot=x&filename=x.zip",
                                                b"not a zip", headers))
    assert let_through(statuses) == UPLOADS, statuses


@pytest.mark.parametrize("path", ["/testgames/", "/play/"])
def test_parallel_game_requests_meet_their_limit(server: ServerProcess, tokens: dict[str, str],
                                                 path: str) -> None:
    name = "dan" if path == "/testgames/" else "eve"
    body, headers = form(signed_in(server, name, "127.0.10.6"), path, {})   # no game chosen
    statuses = at_once(AT_ONCE, lambda _i: post(server, path, body, headers, "127.0.10.6"))
    assert let_through(statuses) == TEST_GAMES, statuses


def test_parallel_requests_with_one_token_meet_its_limit(server: ServerProcess,
                                                         tokens: dict[str, str]) -> None:
    headers = {"Authorization": f"Bearer {tokens['fay']}"}
    statuses = at_once(2 * AT_ONCE, lambda _i: post(server, "/api/leaderboard", b"", headers,
                                                method="GET"))
    assert let_through(statuses) == API_PER_HOUR, statuses
    # Another token is counted apart.
    other = {"Authorization": f"Bearer {tokens['gus']}"}
    assert post(server, "/api/leaderboard", b"", other, method="GET") == 200


# -- Item 2: and over time -------------------------------------------------------------------

def test_many_other_clients_never_reset_a_counter(server: ServerProcess) -> None:
    guesser = Browser(server, "127.0.12.1")
    clear_of_the_hour()
    for i in range(ADDRESS):
        assert guesser.sign_in(f"ghost-{i}", "wrong")[0] == 200
    assert guesser.sign_in("ghost-x", "wrong")[0] == 429
    # 1,500 other clients counted: a join each from an address of its own.
    body, headers = form(Browser(server, "127.1.0.1"), "/join/", {
        "code": "no-such-code", "display_name": "newcomer", "password": PASSWORD,
        "password_again": PASSWORD})
    with ThreadPoolExecutor(16) as pool:
        statuses = Counter(pool.map(lambda i: post(
            server, "/join/", body, headers, f"127.1.{i // 250 + 1}.{i % 250 + 1}"),
            range(1500)))
    assert statuses == Counter({200: 1500}), statuses
    # The guesser's address is still held, for the rest of its hour.
    assert guesser.sign_in("ghost-y", "wrong")[0] == 429


def test_a_counter_is_deleted_only_after_its_window_ended(tmp_path) -> None:  # noqa: ANN001
    club = Club(tmp_path / "data")
    try:
        counts = club("""
            from referee.server.club import ratecount
            from referee.server.club.models import RateCounter
            hour = ratecount.Bucket(ratecount.key("t", "a"), 5)
            now = 7 * 3600 + 10
            ratecount.bump(hour, now=now)
            ratecount.bump(hour, now=now + 3000)             # same window
            other = ratecount.Bucket(ratecount.key("t", "b"), 5)
            ratecount.bump(other, now=now + 3000)            # a new counter: prunes ended ones
            kept = RateCounter.objects.filter(key=hour.key).count()
            later = ratecount.bump(other, now=now + 3600)    # the next hour: the old ones go
            result = [kept, later, sorted(RateCounter.objects.values_list("key", flat=True))]
        """)
    finally:
        club.close()
    assert counts[0] == 1 and counts[1] == 1, counts
    assert counts[2] == [f"t:{__import__('hashlib').sha256(b'b').hexdigest()[:40]}"], counts


# -- Item 3: a classroom behind one address --------------------------------------------------

def test_one_student_guessing_from_the_rooms_address_keeps_nobody_out(
        server: ServerProcess, tokens: dict[str, str]) -> None:
    room = "127.0.20.1"
    organiser_password = server.organiser_password()
    organiser = Browser(server, room)
    assert organiser.sign_in("organiser", organiser_password)[0] == 302
    classmate = signed_in(server, "hal", room)
    # One student guesses from the room's address: the organiser's, a classmate's and
    # another's passwords, until the address is held (its pairs with those names are too).
    guesser = Browser(server, room)
    statuses = [guesser.sign_in(["organiser", "hal", "ida"][i % 3], f"guess-{i}")[0]
                for i in range(ADDRESS + 10)]
    assert statuses == [200] * ADDRESS + [429] * 10, statuses
    # The organiser and the classmate, from the browsers they signed in on before, get in.
    assert organiser.sign_in("organiser", organiser_password)[0] == 302
    assert organiser.request("GET", "/admin/")[0] == 200
    assert classmate.sign_in("hal", PASSWORD)[0] == 302
    # A browser new to its name, at the held address, waits for the hour (docs/security.md).
    status, text = Browser(server, room).sign_in("ida", PASSWORD)
    assert status == 429 and "from your address" in text, (status, text)
    # Guessing stays bounded: from a known browser, its own failures for its name are held...
    statuses = [classmate.sign_in("hal", f"guess-{i}")[0] for i in range(PAIR + 2)]
    assert statuses == [200] * PAIR + [429] * 2, statuses
    # ... and the guesser's browser is held whatever name it tries.
    assert guesser.sign_in("hal", PASSWORD)[0] == 429


# -- Item 8: tokens end ----------------------------------------------------------------------

def api_status(server: ServerProcess, token: str) -> int:
    return post(server, "/api/leaderboard", b"", {"Authorization": f"Bearer {token}"},
                method="GET")


def test_a_disabled_accounts_tokens_stay_dead_when_it_is_enabled_again(
        server: ServerProcess, tokens: dict[str, str]) -> None:
    assert api_status(server, tokens["jo"]) == 200
    club = Club(server.data)
    try:
        for active in (False, True):   # as the admin's form saves the account
            club(f"user = User.objects.get(username='jo'); user.is_active = {active}; "
                 f"user.save()")
            assert api_status(server, tokens["jo"]) == 401, active
        revoked = club("result = ApiToken.objects.filter(user__username='jo', "
                       "revoked_at__isnull=False).count()")
    finally:
        club.close()
    assert revoked == 1


def test_a_token_expires_after_90_days_and_the_tokens_page_says_when(
        server: ServerProcess, tokens: dict[str, str]) -> None:
    assert api_status(server, tokens["kim"]) == 200
    browser = signed_in(server, "kim", "127.0.21.1")
    club = Club(server.data)
    try:
        made = club("""
            from datetime import timedelta
            from django.utils import timezone
            from referee.server.club.people import new_token
            user = User.objects.get(username='kim')
            ApiToken.objects.filter(user=user).update(
                created_at=timezone.now() - timedelta(days=90, minutes=1))
            token, row = new_token(user)
            ApiToken.objects.filter(pk=row.pk).update(
                created_at=timezone.now() - timedelta(days=89))
            result = token
        """)
    finally:
        club.close()
    assert api_status(server, tokens["kim"]) == 401    # 90 days and a minute old
    assert api_status(server, made) == 200             # 89 days old
    status, page = browser.request("GET", "/tokens/")
    assert status == 200
    assert "works for 90 days" in page, page
    expiry = re.findall(r'<td class="expires">(.*?)</td>', page)
    assert len(expiry) == 2 and expiry[1].startswith("expired "), expiry
    assert not expiry[0].startswith("expired"), expiry
