"""Sign-in against a real `referee serve`, from several loopback addresses (127.0.0.2, ...:
each a machine of its own to the server): guessing is bounded per address, per name and
address, and per name, on the club's and the admin's sign-in forms alike, with the name as it
is looked up; and no stranger can keep the owner out."""

from __future__ import annotations

import http.client
import re
import urllib.parse
from collections.abc import Iterator

import pytest
from server_support import ServerProcess, make_student

# Small limits for a short test (the defaults are 10, 30 and 50): failed sign-ins an hour.
PAIR_FAILURES = 3         # for one name from one address
ADDRESS_FAILURES = 8      # from one address
ACCOUNT_FAILURES = 6      # for one name from browsers that never signed in as it
PASSWORD = "a-long-club-password-7"   # make_student's


class Browser:
    """A client at one loopback address, keeping its cookies."""

    def __init__(self, server: ServerProcess, address: str) -> None:
        self.server, self.address = server, address
        self.cookies: dict[str, str] = {}

    def request(self, method: str, path: str, form: dict[str, str] | None = None
                ) -> tuple[int, str]:
        conn = http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=120,
                                          source_address=(self.address, 0))
        headers = {"Host": "127.0.0.1",
                   "Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items())}
        body = None
        if form is not None:
            body = urllib.parse.urlencode(form)
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        try:
            conn.request(method, path, body=body, headers=headers)
            answer = conn.getresponse()
            for name, value in answer.getheaders():
                if name.lower() == "set-cookie":
                    key, _, rest = value.partition("=")
                    self.cookies[key] = rest.split(";", 1)[0]
            return answer.status, answer.read().decode()
        finally:
            conn.close()

    def sign_in(self, name: str, password: str, path: str = "/login/") -> tuple[int, str]:
        """The sign-in form at `path`, filled in and posted: (status, text)."""
        self.cookies.pop("sessionid", None)
        status, page = self.request("GET", path)
        assert status == 200, (status, page[:300])
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
        return self.request("POST", path, {"csrfmiddlewaretoken": token, "username": name,
                                           "password": password, "next": "/"})


def guesses(browser: Browser, names: list[str], count: int, path: str = "/login/") -> None:
    """`count` wrong passwords for `names` in turn: each one an honest failure (the form
    again, 200), none refused."""
    for i in range(count):
        status, page = browser.sign_in(names[i % len(names)], f"wrong-guess-{i}", path)
        assert status == 200, (i, status, page[:300])


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    data = tmp_path_factory.mktemp("signin") / "data"
    data.mkdir()
    (data / "season.toml").write_text(
        f"sign_in_failures_per_name_and_address = {PAIR_FAILURES}\n"
        f"sign_in_failures_per_address = {ADDRESS_FAILURES}\n"
        f"sign_in_failures_per_name = {ACCOUNT_FAILURES}\n")
    process = ServerProcess(data)
    try:
        for name in ("alice", "bob", "dave"):
            make_student(process.data, name)
        yield process
    finally:
        assert process.stop() == 0, process.output()


def test_a_stranger_cannot_keep_the_owner_out(server: ServerProcess) -> None:
    stranger = Browser(server, "127.0.0.2")
    guesses(stranger, ["alice"], PAIR_FAILURES)
    # The stranger is held: even the right password is not checked for them any more.
    status, text = stranger.sign_in("alice", PASSWORD)
    assert status == 429 and text.count("\n") == 1, (status, text)
    # The owner, from their own address, gets in with the right password.
    assert Browser(server, "127.0.0.3").sign_in("alice", PASSWORD)[0] == 302
    assert "for this name from your address" in text


def test_a_name_padded_or_in_full_width_letters_is_the_same_name(server: ServerProcess) -> None:
    stranger = Browser(server, "127.0.0.4")
    guesses(stranger, [" bob", "BOB ", "ｂｏｂ", "\tBob\n"], PAIR_FAILURES)
    for name in ("bob", "ｂｏｂ", "Bob  "):
        status, text = stranger.sign_in(name, PASSWORD)
        assert status == 429, (name, status, text[:200])
    # Each spelling signs the owner in to the one account.
    owner = Browser(server, "127.0.0.5")
    assert owner.sign_in("ｂｏｂ ", PASSWORD)[0] == 302
    assert owner.request("GET", "/tokens/")[0] == 200   # signed in


def test_the_admin_sign_in_is_limited_too(server: ServerProcess) -> None:
    stranger = Browser(server, "127.0.0.6")
    guesses(stranger, ["organiser"], PAIR_FAILURES, "/admin/login/")
    status, text = stranger.sign_in("organiser", server.organiser_password(), "/admin/login/")
    assert status == 429 and text.count("\n") == 1, (status, text)
    # The two forms are one scheme: the club's form is closed to that pair too...
    assert stranger.sign_in("ORGANISER", "wrong", "/login/")[0] == 429
    # ... and the organiser, elsewhere, signs in to the admin.
    organiser = Browser(server, "127.0.0.7")
    status, _ = organiser.sign_in("organiser", server.organiser_password(), "/admin/login/")
    assert status == 302
    assert organiser.request("GET", "/admin/")[0] == 200


def test_one_address_guessing_many_names_is_held(server: ServerProcess) -> None:
    stranger = Browser(server, "127.0.0.8")
    names = [f"nobody-{i}" for i in range(ADDRESS_FAILURES)]
    guesses(stranger, names, ADDRESS_FAILURES)
    status, text = stranger.sign_in("someone-else", "wrong")
    assert status == 429 and "from your address" in text, (status, text)
    # Another address is not held by it.
    assert Browser(server, "127.0.0.9").sign_in("nobody-x", "wrong")[0] == 200


def test_many_addresses_guessing_one_name_are_held_but_not_its_owners_browser(
        server: ServerProcess) -> None:
    owner = Browser(server, "127.0.1.1")
    assert owner.sign_in("dave", PASSWORD)[0] == 302    # this browser is dave's now
    per_address = PAIR_FAILURES
    for i in range(ACCOUNT_FAILURES // per_address):
        guesses(Browser(server, f"127.0.2.{i + 1}"), ["dave"], per_address)
    # A new browser, at an address that never failed, is held by the name's bucket...
    status, text = Browser(server, "127.0.3.1").sign_in("dave", PASSWORD)
    assert status == 429 and "from new browsers" in text, (status, text)
    # ... but the owner's own browser gets in, even from another address.
    travelling = Browser(server, "127.0.3.2")
    travelling.cookies["club_device"] = owner.cookies["club_device"]
    assert travelling.sign_in("dave", PASSWORD)[0] == 302
    # A device cookie made up by a stranger is no such browser.
    forged = Browser(server, "127.0.3.3")
    forged.cookies["club_device"] = owner.cookies["club_device"][:-2] + "xx"
    assert forged.sign_in("dave", PASSWORD)[0] == 429
