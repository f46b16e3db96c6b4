"""Helpers for the club server's tests: a Django set up on a data folder of its own, student
bots made from the sample random bot, and a real `referee serve` process on a free port."""

from __future__ import annotations

import contextlib
import http.cookiejar
import os
import re
import signal
import subprocess
import sys
import tempfile
import urllib.parse
import urllib.request
import uuid
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from cli_support import REFEREE, free_port, referee
from orphans import stops_with_pytest
from runner_support import Club, write_season
from wait_support import wait_for

from referee.league.store import games_stored
from referee.server.shared.clubfolder import ClubFolder

ROOT = Path(__file__).resolve().parents[1]
PASSWORD = "a-long-club-password-7"   # every student make_student makes
_DATA: Path | None = None


def club_django() -> Path:
    """Set Django up once per test process on a fresh data folder (migrated); its path."""
    global _DATA
    if _DATA is not None:
        return _DATA
    _DATA = Path(tempfile.mkdtemp(prefix="club-tests-"))
    os.environ["REFEREE_SERVER_DATA"] = str(_DATA)
    os.environ["DJANGO_SETTINGS_MODULE"] = "referee.server.settings"
    os.environ["REFEREE_ALLOWED_HOSTS"] = "testserver,127.0.0.1,localhost"
    os.environ["REFEREE_SEASON_FILE"] = str(_DATA / "season.toml")
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0, interactive=False)
    return _DATA


def student_bot(folder: Path, name: str, marker: str, noting: bool = False) -> Path:
    """A copy of the sample random bot in its own folder, with its spec `bot.toml`, that
    writes `marker` to stderr at each decision (and, `noting`, sends `marker`-NOTE as its
    note with a value `marked`); the folder."""
    folder.mkdir(parents=True)
    (folder / "randbot.py").write_text((ROOT / "sample_bots/random/main.py").read_text())
    (folder / "main.py").write_text(
        "import sys\n\nfrom randbot import RandomBot\nfrom referee.sdk import run\n\n\n"
        f"class Speaker(RandomBot):\n    name = {name!r}\n\n"
        "    def choose(self, view):\n"
        f"        print({marker!r}, file=sys.stderr, flush=True)\n"
        + (f"        self.note({marker + '-NOTE'!r}, marked=7)\n" if noting else "") +
        "        return super().choose(view)\n\n\nrun(Speaker())\n")
    (folder / "bot.toml").write_text(
        f'name = "{name}"\ncommand = ["{{python}}", "main.py"]\nworkdir = "."\n'
        "[limits]\ndecision_ms = 2000\ngame_bank_ms = 30000\n")
    return folder


class ServerProcess:
    """A real `referee serve` on a free loopback port, in a data folder: this checkout's, or
    that of `program` (another installation's `referee` command, run in `cwd` with `env`)."""

    def __init__(self, data: Path, *extra: str, port: int | None = None,
                 program: tuple[str, ...] = REFEREE,
                 cwd: Path | None = None, env: dict[str, str] | None = None) -> None:
        self.data = data
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = data.parent / f"{data.name}-serve-{self.port}.log"
        handle = self.log.open("w")
        self.proc = subprocess.Popen(
            [*program, "serve", "--data", str(data), "--port", str(self.port), *extra],
            stdout=handle, stderr=subprocess.STDOUT, text=True, start_new_session=True,
            preexec_fn=stops_with_pytest, cwd=cwd, env=env)
        self.wait_ready()

    def output(self) -> str:
        return self.log.read_text()

    def alive(self) -> None:
        """AssertionError with the server's output once it has stopped."""
        if self.proc.poll() is not None:
            raise AssertionError(f"referee serve stopped ({self.proc.returncode}):\n"
                                 f"{self.output()}")

    def answers(self) -> bool:
        """True when the sign-in page answers."""
        try:
            with urllib.request.urlopen(f"{self.url}/login/", timeout=10) as answer:
                return answer.status == 200
        except OSError:
            return False

    def wait_ready(self, timeout: float = 180) -> None:
        wait_for(f"referee serve to answer at {self.url}", self.answers, self, timeout=timeout)

    def organiser_password(self) -> str:
        found = re.search(r"as 'organiser' with password (\S+)", self.output())
        assert found, self.output()
        return found.group(1)

    def stop(self, signum: int = signal.SIGTERM, timeout: float = 300) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signum)
        return self.proc.wait(timeout=timeout)


def play_season(data: Path, bots: dict[str, str], games: int = 4) -> Path:
    """A real league of student bots (league name -> stderr marker) in DATA/season, as the
    runner would have stored it; the season folder."""
    specs = [student_bot(data / "bots-src" / name, name, marker) / "bot.toml"
             for name, marker in bots.items()]
    referee("league", *specs, "--games", str(games), "--players", "2", "--out",
            ClubFolder(data).season, "--quiet", timeout=600)
    return ClubFolder(data).season


def zip_of(folder: Path, out: Path) -> Path:
    """A zip of a bot folder, made as `referee submit` makes it: its files at the top of the
    archive, links and caches left out (the client's own walk of a folder)."""
    from referee.server.client import _add_tree

    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        count = _add_tree(archive, folder, "")
    assert count, f"{folder}: no files to send"
    return out


def web_upload(url: str, name: str, archive: Path, bot: str = "") -> tuple[int | None, str]:
    """Sign in as the student `name` (made by make_student) and upload `archive` with the form
    of My bots, as a browser posts it; (the new version's id, or None when the upload was
    refused, and the text of the page the server led to)."""
    opener = urllib.request.build_opener(
        urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))

    def page(path: str, data: bytes | None = None, kind: str = "") -> tuple[str, str]:
        headers = {"Referer": f"{url}{path}", **({"Content-Type": kind} if kind else {})}
        with opener.open(urllib.request.Request(f"{url}{path}", data=data, headers=headers),
                         timeout=120) as answer:
            return answer.geturl(), answer.read().decode()

    def csrf(text: str) -> str:
        found = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', text)
        assert found, text
        return found.group(1)

    login = urllib.parse.urlencode({"csrfmiddlewaretoken": csrf(page("/login/")[1]),
                                    "username": name, "password": PASSWORD}).encode()
    page("/login/", login)
    boundary = uuid.uuid4().hex
    parts = [f'--{boundary}\r\nContent-Disposition: form-data; name="{key}"\r\n\r\n'
             f"{value}\r\n".encode()
             for key, value in (("csrfmiddlewaretoken", csrf(page("/")[1])), ("bot", bot))]
    parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="archive"; '
                 f'filename="{archive.name}"\r\nContent-Type: application/octet-stream'
                 f"\r\n\r\n".encode() + archive.read_bytes() + f"\r\n--{boundary}--\r\n".encode())
    landed, text = page("/upload", b"".join(parts), f"multipart/form-data; boundary={boundary}")
    found = re.search(r"/versions/(\d+)/$", landed)
    return (int(found.group(1)) if found else None), text


def make_student(data: Path, name: str = "carol") -> str:
    """A student in the server's database, made as the join page makes them; their token."""
    code = ("import django; django.setup()\n"
            "from referee.server.club.people import make_join_code, join, new_token\n"
            f"user = join(make_join_code().code, {name!r}, {PASSWORD!r}, 3)\n"
            "print(new_token(user)[0])\n")
    env = {**os.environ, "REFEREE_SERVER_DATA": str(data),
           "DJANGO_SETTINGS_MODULE": "referee.server.settings"}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


class Answer:
    """One HTTP answer: its status, headers and body as text."""

    def __init__(self, status: int, headers: dict[str, str], body: bytes) -> None:
        self.status, self.headers = status, headers
        self.text = body.decode("utf-8", "replace")

    def json(self) -> dict:
        import json

        return json.loads(self.text)


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *_args, **_kwargs):  # noqa: ANN002, ANN003, ANN201
        return None   # a 302 is an answer to look at, not to follow


class WebClient:
    """A browser's part over plain HTTP to a real server: its own cookies (the session and
    the CSRF cookie), forms posted with the CSRF token, redirects not followed."""

    def __init__(self, url: str) -> None:
        import http.cookiejar

        self.url = url
        self.cookies = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(self.cookies), _NoRedirects)

    def request(self, method: str, path: str, body: bytes | None = None,
                headers: dict[str, str] | None = None) -> Answer:
        """Send one request; every status (404, 500, ...) is an Answer, not an exception."""
        import urllib.error

        request = urllib.request.Request(self.url + path, data=body, method=method,
                                         headers=headers or {})
        try:
            with self.opener.open(request, timeout=120) as answer:
                return Answer(answer.status, dict(answer.headers), answer.read())
        except urllib.error.HTTPError as exc:
            return Answer(exc.code, dict(exc.headers), exc.read())

    def get(self, path: str) -> Answer:
        return self.request("GET", path)

    def csrf(self) -> str:
        """The CSRF cookie's value (fetched with the sign-in page if there is none yet)."""
        if not any(c.name == "csrftoken" for c in self.cookies):
            self.get("/login/")
        return next(c.value for c in self.cookies if c.name == "csrftoken")

    def post_form(self, path: str, fields: dict[str, str]) -> Answer:
        """POST a form as the page would, with its CSRF token."""
        from urllib.parse import urlencode

        body = urlencode({"csrfmiddlewaretoken": self.csrf(), **fields}).encode()
        return self.request("POST", path, body,
                            {"Content-Type": "application/x-www-form-urlencoded"})

    def sign_in(self, name: str, password: str) -> None:
        answer = self.post_form("/login/", {"username": name, "password": password})
        assert answer.status == 302, (answer.status, answer.text[:500])


def signed_in_student(server: ServerProcess, name: str = "carol") -> WebClient:
    """A new student `name` of the running server, signed in."""
    make_student(server.data, name)
    client = WebClient(server.url)
    client.sign_in(name, PASSWORD)
    return client


def signed_in_organiser(server: ServerProcess) -> WebClient:
    """The organiser of the running server (its first start's password), signed in."""
    client = WebClient(server.url)
    client.sign_in("organiser", server.organiser_password())
    return client


@dataclass
class RatedClub:
    """A running club whose season played and rated one round of its students' bots."""

    server: ServerProcess
    data: Path                 # the club's data folder
    tokens: dict[str, str]     # student -> personal API token
    ids: dict[str, int]        # student -> the id of their bot (named as the student)


@contextlib.contextmanager
def rated_club(top: Path, markers: dict[str, str], *, seed: int, round_games: int = 4,
               noting: bool = False) -> Iterator[RatedClub]:
    """The server tests' common club: in `top`, a season file (two seats, one round of
    `round_games` games), one student per name of `markers` with a token and a passed bot of
    the same name (the sample random bot printing, and with `noting` noting, its marker), and a
    real `referee serve` on it, yielded once the round is played and rated on all its games.
    The server must stop cleanly (exit 0) afterwards."""
    data = top / "club-data"
    club = Club(data)
    try:
        write_season(data, f"""
            seed = {seed}
            players = 2
            round_games = {round_games}
            max_rounds = 1
            refit_seconds = 1
        """)
        tokens, ids = {}, {}
        for name, marker in markers.items():
            owner = club.student(name)
            tokens[name] = club(f"""
                from referee.server.club.people import new_token
                result = new_token(User.objects.get(pk={owner}))[0]
            """)
            source = student_bot(top / "src" / name, name, marker, noting=noting)
            club.version(owner, name, source / "main.py", passed=True,
                         files={"randbot.py": source / "randbot.py"})
            ids[name] = club.value(f"Bot.objects.get(name={name!r}).pk")
    finally:
        club.close()
    server = ServerProcess(data)
    try:
        token = next(iter(tokens.values()))
        # Every game stored, and the table refitted on all of them (each game rates two seats):
        # nothing changes after.
        wait_for("the round's games, rated",
                 lambda: games_stored(ClubFolder(data).season_league.store_path) == round_games
                 and sum(row["table"]["games"] for row in _bearer(server.url, "/api/leaderboard",
                                                                   token)
                     ["rows"]) == 2 * round_games, server, timeout=900)
        yield RatedClub(server, data, tokens, ids)
    finally:
        assert server.stop() == 0, server.output()


def _bearer(url: str, path: str, token: str) -> dict:
    answer = WebClient(url).request("GET", path, headers={"Authorization": f"Bearer {token}"})
    assert answer.status == 200, (path, answer.status, answer.text[:300])
    return answer.json()
