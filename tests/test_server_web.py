"""The club server's web side in process (Django's test client over the real app, a real
SQLite database, real uploads through the real unpacker, a real league of real bots for the
replays): accounts, tokens, cookies, CSRF, rate limits, uploads and who sees whose output."""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
import subprocess
import sys
import threading
import uuid
import zipfile
from pathlib import Path

import pytest
from server_support import club_django, play_season, student_bot, zip_of

DATA = club_django()

from django.contrib.auth.models import User  # noqa: E402
from django.test import Client, override_settings  # noqa: E402

from referee.league.folder import LeagueFolder  # noqa: E402
from referee.league.season import SeasonRow  # noqa: E402
from referee.league.tables import Row  # noqa: E402
from referee.server.club.models import (  # noqa: E402
    ApiToken,
    Bot,
    BotVersion,
    CheckLine,
    CheckRun,
    JoinCode,
    Notice,
    Standing,
    TestGame,
)
from referee.server.club.people import make_join_code  # noqa: E402
from referee.server.shared.clubfolder import ClubFolder  # noqa: E402

PASSWORD = "a-long-club-password-7"


def unique(prefix: str) -> str:
    return f"{prefix}{uuid.uuid4().hex[:6]}"


@pytest.fixture()
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """This test's data folder (uploads, season, season file); the database is shared."""
    monkeypatch.setenv("REFEREE_SEASON_FILE", str(tmp_path / "season.toml"))
    with override_settings(DATA_DIR=tmp_path):
        yield tmp_path


def student(name: str | None = None) -> User:
    from referee.server.club.people import join

    code = make_join_code("test", 5)
    return join(code.code, name or unique("stu"), PASSWORD, 3)


def signed_in(user: User, **kwargs) -> Client:
    client = Client(**kwargs)
    client.force_login(user)
    return client


def organiser() -> User:
    return User.objects.create_superuser(unique("org"), password=PASSWORD)


def db_bytes() -> bytes:
    """Every byte of the database files (main file and write-ahead log)."""
    return b"".join(p.read_bytes() for p in DATA.glob("server.sqlite3*"))


# ------------------------------------------------------------------------- accounts

@pytest.mark.slow
def test_a_student_joins_with_a_code_and_the_password_is_stored_hashed(folder: Path) -> None:
    boss = signed_in(organiser())
    answer = boss.post("/organiser/codes/new", {"note": "tuesday club", "max_uses": 1},
                       follow=True)
    code = JoinCode.objects.get(note="tuesday club")
    assert code.code in answer.content.decode()
    name = unique("ann")
    client = Client()
    answer = client.post("/join/", {"code": code.code, "display_name": name,
                                    "password": PASSWORD, "password_again": PASSWORD})
    assert answer.status_code == 302, answer.content
    user = User.objects.get(username=name)
    assert user.profile.display_name == name and user.profile.max_bots == 3
    assert user.password.startswith("pbkdf2_sha256$") and PASSWORD not in user.password
    assert PASSWORD.encode() not in db_bytes()
    # The code is used up now: the next student is told so in one line.
    answer = Client().post("/join/", {"code": code.code, "display_name": unique("ben"),
                                      "password": PASSWORD, "password_again": PASSWORD})
    assert answer.status_code == 200
    assert "that join code is unknown, used up or withdrawn" in answer.content.decode()


def test_tokens_are_shown_once_stored_as_sha256_and_revocable(folder: Path) -> None:
    user = student()
    client = signed_in(user)
    page = client.post("/tokens/new").content.decode()
    token = re.search(r'<pre id="new-token">(rt_[A-Za-z0-9_-]+)</pre>', page).group(1)
    row = ApiToken.objects.get(user=user)
    assert row.token_hash == hashlib.sha256(token.encode()).hexdigest()
    assert token.encode() not in db_bytes()
    assert token not in client.get("/tokens/").content.decode()   # shown once only
    api = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
    assert api.get("/api/versions/999999").status_code == 404      # signed in, no such version
    client.post(f"/tokens/{row.pk}/revoke")
    answer = api.get("/api/versions/999999")
    assert answer.status_code == 401 and "error" in answer.json()


def test_cookies_are_httponly_and_samesite(folder: Path) -> None:
    user = student()
    client = Client()
    client.get("/login/")
    answer = client.post("/login/", {"username": user.username, "password": PASSWORD})
    assert answer.status_code == 302
    session = answer.cookies["sessionid"]
    assert session["httponly"] and session["samesite"] == "Lax"
    csrf = client.cookies["csrftoken"]
    assert csrf["httponly"] and csrf["samesite"] == "Strict"


def test_a_post_without_its_csrf_token_is_refused(folder: Path) -> None:
    client = signed_in(student(), enforce_csrf_checks=True)
    assert client.post("/tokens/new").status_code == 403
    page = client.get("/tokens/").content.decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    assert client.post("/tokens/new", {"csrfmiddlewaretoken": token}).status_code == 200


@pytest.mark.slow
def test_logins_are_rate_limited_per_name(folder: Path) -> None:
    user = student()
    client = Client()
    for _ in range(10):
        assert client.post("/login/", {"username": user.username,
                                       "password": "wrong"}).status_code == 200
    answer = client.post("/login/", {"username": user.username, "password": PASSWORD})
    assert answer.status_code == 429
    assert answer.content.decode().count("\n") == 1   # one line


# ------------------------------------------------------------------------- uploads

def submit(client: Client, archive: Path, bot: str = "") -> object:
    return client.post(f"/api/submit?bot={bot}&filename={archive.name}",
                       data=archive.read_bytes(), content_type="application/octet-stream")


def token_client(user: User) -> Client:
    from referee.server.club.people import new_token

    token, _ = new_token(user)
    return Client(HTTP_AUTHORIZATION=f"Bearer {token}")


def test_an_upload_becomes_a_version_with_a_queued_check(folder: Path, tmp_path: Path) -> None:
    user = student()
    api = token_client(user)
    name = unique("b")
    archive = zip_of(student_bot(tmp_path / "src", "speaker", "hi"), tmp_path / "speaker.zip")
    answer = submit(api, archive, name)
    assert answer.status_code == 201, answer.content
    data = answer.json()
    assert data["league_name"] == f"{name}.v1" and data["check_state"] == "queued"
    version = BotVersion.objects.get(pk=data["version"])
    assert version.checkrun.state == CheckRun.QUEUED
    assert version.archive_sha256 == hashlib.sha256(archive.read_bytes()).hexdigest()
    bot_folder = folder / version.folder
    assert (bot_folder / version.spec).is_file() and (bot_folder / "main.py").is_file()
    assert (bot_folder.parent / "archive").read_bytes() == archive.read_bytes()
    # The same archive again, or the same files zipped again: nothing new, refused in one
    # line naming the version it repeats; a changed file is version 2.
    again = tmp_path / "again.zip"   # the same files, stored uncompressed in reverse order
    with zipfile.ZipFile(archive) as source, zipfile.ZipFile(again, "w") as copy:
        for info in reversed(source.infolist()):
            copy.writestr(info.filename, source.read(info))
    assert again.read_bytes() != archive.read_bytes()
    nested = tmp_path / "nested.zip"   # the same files in their folder, as the C++ guide zips
    with zipfile.ZipFile(archive) as source, zipfile.ZipFile(nested, "w") as copy:
        for info in source.infolist():
            copy.writestr(f"speaker/{info.filename}", source.read(info))
    for same in (archive, again, nested):
        answer = submit(api, same, name)
        assert answer.status_code == 400, answer.content
        assert answer.json()["error"] == (f"identical to {name}.v1 (v1, the same files), "
                                          f"nothing new: no version was made")
    changed = student_bot(tmp_path / "changed", "speaker", "hello")
    assert submit(api, zip_of(changed, tmp_path / "changed.zip"), name).json()[
        "league_name"] == f"{name}.v2"
    assert BotVersion.objects.filter(bot__name=name).count() == 2
    # A version whose check failed may be sent again as it was (its check tried again).
    BotVersion.objects.filter(league_name=f"{name}.v2").update(check_state=BotVersion.FAILED)
    assert submit(api, tmp_path / "changed.zip", name).json()["league_name"] == f"{name}.v3"
    # Nothing left in staging, and the raw temporary files are gone.
    assert not any((ClubFolder(folder).uploads / ".incoming").iterdir())


@pytest.mark.slow
def test_refused_uploads_say_why_in_one_line_and_leave_nothing(folder: Path,
                                                               tmp_path: Path) -> None:
    owner, other = student(), student()
    name = unique("b")
    archive = zip_of(student_bot(tmp_path / "src", "speaker", "hi"), tmp_path / "speaker.zip")
    assert submit(token_client(owner), archive, name).status_code == 201
    api = token_client(other)
    cases = {
        "belongs to another student": submit(api, archive, name),
        "not a bot name": submit(api, archive, "Bad Name!"),
    }
    junk = tmp_path / "junk.zip"
    junk.write_bytes(b"this is no archive at all" * 10)
    cases["not a zip or tar archive"] = submit(api, junk, unique("b"))
    cases["no valid token"] = submit(Client(), archive, unique("b"))
    big = api.post(f"/api/submit?bot={unique('b')}", data=b"x" * 10,
                   content_type="application/octet-stream", CONTENT_LENGTH=str(10 ** 12))
    cases["more than the limit"] = big
    for words, answer in cases.items():
        assert answer.status_code >= 400
        error = answer.json()["error"]
        assert words in error and "\n" not in error, (words, error)
    # The refusal offers a free name (the guides' `mine` for two students, say), which works.
    offered = re.search(r"e\.g\. '([a-z0-9-]+)' \(free now\)",
                        cases["belongs to another student"].json()["error"])
    assert offered and offered.group(1).startswith(name), cases
    assert not Bot.objects.filter(name=offered.group(1)).exists()
    assert BotVersion.objects.filter(bot__owner=other).count() == 0
    assert sorted(p.name for p in (ClubFolder(folder).uploads).iterdir()) == [".incoming", name]
    assert submit(api, archive, offered.group(1)).status_code == 201
    assert not any((ClubFolder(folder).uploads / ".incoming").iterdir())


def test_a_student_may_have_only_max_bots_bots(folder: Path, tmp_path: Path) -> None:
    user = student()
    user.profile.max_bots = 1
    user.profile.save()
    api = token_client(user)
    archive = zip_of(student_bot(tmp_path / "src", "speaker", "hi"), tmp_path / "speaker.zip")
    assert submit(api, archive, unique("b")).status_code == 201
    answer = submit(api, archive, unique("b"))
    assert answer.status_code == 400 and "the most you may have" in answer.json()["error"]


def test_the_upload_page_takes_a_zip(folder: Path, tmp_path: Path) -> None:
    user = student()
    client = signed_in(user)
    archive = zip_of(student_bot(tmp_path / "src", "speaker", "hi"), tmp_path / "speaker.zip")
    name = unique("w")
    with archive.open("rb") as stream:
        answer = client.post("/upload", {"bot": name, "archive": stream})
    version = BotVersion.objects.get(bot__name=name)
    assert answer.status_code == 302 and answer["Location"] == f"/versions/{version.pk}/"
    page = client.get(answer["Location"]).content.decode()
    assert f"{name}.v1" in page and "queued" in page
    # The same archive again: the page says it is identical to v1, and no version is made.
    with archive.open("rb") as stream:
        again = client.post("/upload", {"bot": name, "archive": stream}, follow=True)
    assert (f"upload refused: identical to {name}.v1 (v1, the same files), nothing new: no "
            f"version was made") in again.content.decode()
    assert BotVersion.objects.filter(bot__name=name).count() == 1


@pytest.mark.slow
def test_the_upload_page_says_what_to_upload_and_a_refusal_links_it(folder: Path,
                                                                    tmp_path: Path) -> None:
    """The page shows the guides' layout; the bot's folder alone (its spec left beside it) is
    refused with the fix and a link to that; the spec with its folder becomes a version."""
    client = signed_in(student())
    home = client.get("/").content.decode()
    assert 'id="what-to-upload"' in home and "zip -r mybot.zip mybot.toml mybot" in home
    with zipfile.ZipFile(tmp_path / "folder.zip", "w") as zipped:
        zipped.writestr("mybot/main.py", "print('hi')\n")
    with (tmp_path / "folder.zip").open("rb") as stream:
        page = client.post("/upload", {"bot": "", "archive": stream}, follow=True)
    text = page.content.decode()
    assert "upload refused: no bot spec in the archive, only the folder mybot/: put the spec " \
           "beside it in the archive (zip -r mybot.zip mybot.toml mybot" in text
    assert '<a href="/#what-to-upload" class="upload-help">what to upload</a>' in text
    src = student_bot(tmp_path / "src", "mine", "hi")
    (src / "bot.toml").unlink()
    (tmp_path / "mybot.toml").write_text('name = "mine"\ncommand = ["{python}", "main.py"]\n'
                                         'workdir = "src"\n')
    with zipfile.ZipFile(tmp_path / "both.zip", "w") as zipped:
        zipped.write(tmp_path / "mybot.toml", "mybot.toml")
        for path in src.iterdir():
            zipped.write(path, f"src/{path.name}")
    name = unique("w")
    with (tmp_path / "both.zip").open("rb") as stream:
        page = client.post("/upload", {"bot": name, "archive": stream}, follow=True)
    # The banner stays true above the check whatever its verdict turns out to be.
    assert f"{name}.v1 uploaded: its check&#x27;s verdict and report follow below" in \
        page.content.decode()
    assert "queued" not in re.search(r'<ul class="messages">.*?</ul>',
                                     page.content.decode(), re.S).group(0)
    assert BotVersion.objects.get(bot__name=name).spec == "mybot.toml"


def test_uploads_are_rate_limited(folder: Path, tmp_path: Path) -> None:
    (tmp_path / "season.toml").write_text("uploads_per_hour = 2\n")
    user = student()
    api = token_client(user)
    junk = tmp_path / "junk.zip"
    junk.write_bytes(b"no archive")
    assert submit(api, junk, unique("b")).status_code == 400
    assert submit(api, junk, unique("b")).status_code == 400
    answer = submit(api, junk, unique("b"))
    assert answer.status_code == 429
    assert "you uploaded 2 times this hour" in answer.json()["error"]


# ------------------------------------------------------------------------- what people see

def test_bot_text_is_escaped_on_every_page(folder: Path) -> None:
    user = student()
    bot = Bot.objects.create(owner=user, name=unique("x"))
    version = BotVersion.objects.create(
        bot=bot, number=1, archive_name="<b>zip</b>.zip", archive_sha256="0" * 64,
        archive_size=1, folder="f", spec="bot.toml", league_name=f"{bot.name}.v1",
        error="<script>alert(1)</script>")
    check = CheckRun.objects.create(version=version, summary="<img src=x onerror=alert(2)>")
    CheckLine.objects.create(run=check, seq=1, text="<script>alert(3)</script>")
    Notice.objects.create(user=user, text="<script>alert(4)</script>", version=version)
    Standing.objects.create(games=1, data={"rows": [{"bot": bot.name, "league_name":
                                                     version.league_name,
                                                     "version": "<i>v1</i>"}]})
    client = signed_in(user)
    for url in ("/", f"/versions/{version.pk}/", f"/bots/{bot.name}/", "/leaderboard/"):
        page = client.get(url).content.decode()
        assert "<script>alert" not in page and "<img src=x" not in page and "<i>v1" not in page
    page = client.get(f"/versions/{version.pk}/").content.decode()
    assert "&lt;script&gt;alert(3)&lt;/script&gt;" in page


def test_a_failed_version_reads_never_played_not_retired(folder: Path) -> None:
    """v1 failed its check, v2 passed and entered: v1 is not retired (it never played) and
    reads so on the student's pages."""
    from referee.server.runner import clubdb

    user = student()
    bot = Bot.objects.create(owner=user, name=unique("f"))
    made = []
    for number, state in ((1, "failed"), (2, "passed")):
        made.append(BotVersion.objects.create(
            bot=bot, number=number, archive_name="bot.zip", archive_sha256="0" * 64,
            archive_size=1, folder="f", spec="bot.toml", league_name=f"{bot.name}.v{number}",
            check_state=state))
    clubdb.mark_entered(clubdb.Entry(made[1].pk, made[1].league_name, folder, ()))
    made[0].refresh_from_db()
    assert made[0].season_state == "waiting" and made[0].retired_at is None
    client = signed_in(user)
    for url in ("/", f"/bots/{bot.name}/"):
        page = client.get(url).content.decode()
        assert "never: its check failed" in page and "retired" not in page, url


def test_the_leaderboard_is_the_newest_standing(folder: Path) -> None:
    user = student()
    bot = Bot.objects.create(owner=user, name=unique("lb"))
    Standing.objects.create(games=3, data={"rows": [], "facts": {}})
    Standing.objects.create(games=7, data={"rows": [{"bot": bot.name, "league_name":
                                                     f"{bot.name}.v1", "strength": 12.5}],
                                           "facts": {}, "head_to_head": {}})
    data = signed_in(user).get("/leaderboard.json").json()
    assert data["games"] == 7
    assert data["rows"][0]["owner"] == user.username
    assert data["rows"][0]["url"] == f"/bots/{bot.name}/"
    # The fit's moment as every other time: a <time> club/times.js shows in the reader's
    # zone, on the page and for the page's script (live.js) when a newer standing comes.
    fitted = Standing.objects.latest("id").created_at
    page = signed_in(user).get("/leaderboard/").content.decode()
    facts = re.search(r'<p class="lead" id="board-facts">.*?</p>', page, re.S).group(0)
    assert (f'(fit of <time class="local" datetime="{fitted:%Y-%m-%dT%H:%M:%SZ}">'
            f'{fitted:%Y-%m-%d %H:%M} UTC</time>).') in facts, facts
    assert data["fitted_at"] == fitted.timestamp()


@pytest.fixture(scope="module")
def season(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """A real season of two students' bots, each writing its own marker to stderr."""
    root = tmp_path_factory.mktemp("season")
    alice, bob = student(unique("alice")), student(unique("bob"))
    names = {}
    for user, marker in ((alice, "ALICE-SAYS-HI"), (bob, "BOB-SAYS-HI")):
        bot = Bot.objects.create(owner=user, name=unique("bot"))
        names[f"{bot.name}.v1"] = marker
        (ClubFolder(root).bot_uploads(bot.name) / "1").mkdir(parents=True)
        (ClubFolder(root).bot_uploads(bot.name) / "1" / "archive").write_bytes(b"PK code of " +
                                                                    marker.encode())
        version = BotVersion.objects.create(
            bot=bot, number=1, archive_name="bot.zip", archive_sha256="0" * 64,
            archive_size=1, folder=ClubFolder.version_folder(bot.name, 1), spec="bot.toml",
            league_name=f"{bot.name}.v1", check_state="passed", season_state="active")
        CheckRun.objects.create(version=version, state="passed")
    play_season(root, names)
    return {"root": root, "alice": alice, "bob": bob, "names": names}


@pytest.mark.slow
def test_a_student_sees_only_their_own_bots_output(season: dict, monkeypatch) -> None:
    with override_settings(DATA_DIR=season["root"]):
        alice, bob = signed_in(season["alice"]), signed_in(season["bob"])
        boss = signed_in(organiser())
        for url in ("/games/0/", "/games/0/viewer"):
            mine = alice.get(url).content.decode()
            assert "ALICE-SAYS-HI" in mine and "BOB-SAYS-HI" not in mine, url
            theirs = bob.get(url).content.decode()
            assert "BOB-SAYS-HI" in theirs and "ALICE-SAYS-HI" not in theirs, url
            both = boss.get(url).content.decode()
            assert "BOB-SAYS-HI" in both and "ALICE-SAYS-HI" in both, url


@pytest.mark.slow
def test_a_game_page_tells_printed_nothing_from_not_yours_to_see(season: dict) -> None:
    """A bot that printed nothing reads as that, never as access refused; a student with no bot
    in the game reads why they see no output."""
    from referee.server.club import games

    root = season["root"]
    with override_settings(DATA_DIR=root):
        alice = signed_in(season["alice"])
        page = alice.get("/games/0/").content.decode()
        assert "ALICE-SAYS-HI" in page
        assert "The other seats' output is their owners' to see." in page
        page = signed_in(student()).get("/games/0/").content.decode()
        assert "You have no bot in this game: each student sees their own bots' output " \
               "only." in page and "No output you may see" not in page
        # The same game as a test game of alice's in which her bot printed nothing.
        record, names = games.season_game(0)
        mine = BotVersion.objects.get(bot__owner=season["alice"])
        record["output"] = ["" if name == mine.league_name else "x" for name in names]
        (ClubFolder(root).test_games).mkdir(exist_ok=True)
        (ClubFolder(root).test_games / "quiet.json").write_text(json.dumps(record))
        game = TestGame.objects.create(requester=season["alice"], version=mine, state="done",
                                       record_file=ClubFolder.test_game_record("quiet"))
        try:
            page = alice.get(f"/testgames/{game.pk}/").content.decode()
        finally:
            game.delete()   # the module's other tests count alice's test games
        assert f"{mine.league_name} printed nothing in this game (neither stdout nor stderr)." \
            in page and "No output you may see" not in page


@pytest.mark.slow
def test_times_are_sent_as_moments_for_the_readers_time_zone(season: dict) -> None:
    """A bot's recent games and versions show <time> elements (UTC, ISO) that club/times.js
    turns into the reader's local time, never seconds since 1970."""
    with override_settings(DATA_DIR=season["root"]):
        alice = signed_in(season["alice"])
        version = BotVersion.objects.get(bot__owner=season["alice"])
        page = alice.get(f"/bots/{version.bot.name}/").content.decode()
        recent = re.search(r'<table id="recent">.*?</table>', page, re.S).group(0)
        moments = re.findall(r'<time class="local" datetime="(\d{4}-\d\d-\d\dT\d\d:\d\d:'
                             r'\d\dZ)">(\d{4}-\d\d-\d\d \d\d:\d\d) UTC</time>', recent)
        assert moments and all(iso[:10] == shown[:10] for iso, shown in moments), recent
        assert not re.search(r"<td>\d{10}</td>", recent), recent
        assert "club/times.js" in page


@pytest.mark.slow
def test_only_the_owner_and_the_organiser_download_code(season: dict) -> None:
    with override_settings(DATA_DIR=season["root"]):
        version = BotVersion.objects.get(bot__owner=season["alice"])
        url = f"/versions/{version.pk}/download"
        assert b"ALICE" in b"".join(signed_in(season["alice"]).get(url).streaming_content)
        assert signed_in(season["bob"]).get(url).status_code == 404
        assert b"ALICE" in b"".join(signed_in(organiser()).get(url).streaming_content)


@pytest.mark.slow
def test_bot_page_filters_losses_and_strikes(season: dict) -> None:
    with override_settings(DATA_DIR=season["root"]):
        version = BotVersion.objects.get(bot__owner=season["alice"])
        client = signed_in(season["bob"])
        page = client.get(f"/bots/{version.bot.name}/").content.decode()
        games = re.findall(r'<a href="/games/(\d+)/">', page)
        assert len(games) == 4
        losses = re.findall(r'<a href="/games/(\d+)/">',
                            client.get(f"/bots/{version.bot.name}/?show=losses")
                            .content.decode())
        # Exactly the games the store says alice's bot did not finish first in (the season's
        # seed is drawn, so how many that is varies from run to run).
        path = LeagueFolder(season['root'] / 'season').store_path
        store = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            stored = store.execute("SELECT idx, bots, places FROM games").fetchall()
        finally:
            store.close()
        lost = {str(idx) for idx, bots, places in stored
                if json.loads(places)[json.loads(bots).index(version.league_name)] != 1}
        assert set(losses) <= set(games) and len(losses) == len(set(losses))
        assert set(losses) == lost, (losses, stored)
        assert "No games of this kind yet" in client.get(
            f"/bots/{version.bot.name}/?show=strikes").content.decode()


@pytest.mark.slow
def test_test_games_are_rate_limited_per_student(season: dict) -> None:
    root = season["root"]
    with override_settings(DATA_DIR=root):
        (root / "season.toml").write_text("test_games_per_hour = 2\n")
        import os
        os.environ["REFEREE_SEASON_FILE"] = str(root / "season.toml")
        try:
            mine = BotVersion.objects.get(bot__owner=season["alice"])
            other = BotVersion.objects.get(bot__owner=season["bob"])
            client = signed_in(season["alice"])
            for _ in range(2):
                answer = client.post("/testgames/", {"version": mine.pk,
                                                     "opponents": [other.pk]})
                assert answer.status_code == 302
            answer = client.post("/testgames/", {"version": mine.pk, "opponents": [other.pk]})
            assert answer.status_code == 429
            game = TestGame.objects.filter(requester=season["alice"]).first()
            assert list(game.opponents.all()) == [other]
            assert signed_in(season["bob"]).get(f"/testgames/{game.pk}/").status_code == 404
        finally:
            os.environ["REFEREE_SEASON_FILE"] = str(DATA / "season.toml")


@pytest.mark.slow
def test_a_test_game_shows_its_replay_and_only_own_output(season: dict) -> None:
    root = season["root"]
    with override_settings(DATA_DIR=root):
        from referee.league.store import LeagueStore

        store = LeagueStore.open_readonly(ClubFolder(root).season_league.store_path)
        record = store.record(0)
        store.close()
        mine = BotVersion.objects.get(bot__owner=season["alice"])
        game = TestGame.objects.create(requester=season["alice"], version=mine, state="done",
                                       record_file=ClubFolder.test_game_record("t1"))
        (ClubFolder(root).test_games).mkdir(exist_ok=True)
        (ClubFolder(root).test_games / "t1.json").write_text(json.dumps(record))
        page = signed_in(season["alice"]).get(f"/testgames/{game.pk}/viewer").content.decode()
        assert "ALICE-SAYS-HI" in page and "BOB-SAYS-HI" not in page


def test_a_full_disk_during_an_upload_is_one_line_and_leaves_nothing(folder: Path,
                                                                     tmp_path: Path) -> None:
    """The uploads folder on a real 256 KiB file system; the bot unpacks to more than that."""
    import subprocess

    bot = student_bot(tmp_path / "src", "speaker", "hi")
    (bot / "data.bin").write_bytes(bytes(1 << 20))   # 1 MiB of zeros: a small zip
    archive = zip_of(bot, tmp_path / "big.zip")
    uploads = ClubFolder(folder).uploads
    uploads.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(uploads)],
                             capture_output=True, text=True)
    assert mounted.returncode == 0, f"this test needs root to mount a tmpfs: {mounted.stderr}"
    try:
        user = student()
        answer = submit(token_client(user), archive, unique("b"))
        assert answer.status_code == 400
        error = answer.json()["error"]
        assert "No space left on device" in error and "\n" not in error
        assert not BotVersion.objects.filter(bot__owner=user).exists()
        leftovers = [p for p in uploads.rglob("*") if p.is_file()]
        assert leftovers == []
    finally:
        subprocess.run(["umount", str(uploads)], check=True)


def test_the_admin_moves_the_season_only_by_its_actions(folder: Path) -> None:
    from referee.server.club.models import Competition

    boss = signed_in(organiser())
    saved = Competition.first().state
    try:
        Competition.first_row().update(state="running")

        def act(action: str) -> str:
            boss.post("/admin/club/competition/", {"action": action, "_selected_action": ["1"]})
            return Competition.first().state

        assert act("pause") == "paused"
        assert act("resume") == "running"
        assert act("close") == "closed"
        assert act("resume") == "closed"          # a closed season stays closed
        page = boss.get("/admin/club/competition/1/change/").content.decode()
        assert 'name="state"' not in page        # no field to type a state into
        assert 'name="settings"' not in page     # nor settings the service layer did not check
    finally:
        Competition.first_row().update(state=saved, closed_at=None)
    answer = boss.post("/admin/club/joincode/add/", {"note": "from the admin", "max_uses": 4})
    assert answer.status_code == 302
    code = JoinCode.objects.get(note="from the admin")
    assert re.fullmatch(r"[a-z2-9]{4}-[a-z2-9]{4}-[a-z2-9]{4}", code.code)


@pytest.mark.slow
def test_a_student_changes_their_password(folder: Path) -> None:
    user = student()
    client = signed_in(user)
    new = "another-long-password-9"
    answer = client.post("/password/", {"old_password": PASSWORD, "new_password1": new,
                                        "new_password2": new})
    assert answer.status_code == 302
    user.refresh_from_db()
    assert user.check_password(new) and not user.check_password(PASSWORD)


def test_a_fault_of_the_server_is_one_line(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A fault inside a page (here, reading the server's limits fails: a broken season file
    no longer does, the last good one is kept) is one line for the user, never a traceback."""
    def broken() -> None:
        raise RuntimeError("a fault of the server's own")

    monkeypatch.setattr("referee.server.club.views.pages.server_limits", broken)
    client = signed_in(student())
    client.raise_request_exception = False
    answer = client.get("/")
    assert answer.status_code == 500
    assert answer.content.decode().count("\n") == 1
    assert "the server could not answer this request" in answer.content.decode()


def board_version(bot: Bot, number: int, state: str) -> BotVersion:
    """A version of `bot` that passed its check, in season state `state`."""
    version = BotVersion.objects.create(
        bot=bot, number=number, archive_name="bot.zip", archive_sha256="0" * 64,
        archive_size=1, folder=ClubFolder.version_folder(bot.name, number), spec="bot.toml",
        league_name=f"{bot.name}.v{number}", check_state="passed", season_state=state)
    CheckRun.objects.create(version=version, state="passed")
    return version


def fit_row(version: BotVersion, lo: float, hi: float, separated: bool | None) -> dict:
    """A standing's row as the runner writes it (referee.league.season.snapshot's SeasonRow,
    with the club's bot name and version number)."""
    table = Row(rank=1, bot=version.league_name, mu=25.0, sigma=2.0, conservative=19.0,
                games=9, wins=3, win_pct=None, avg_place=None, avg_money=None,
                seat_win_pct=[], strikes={"timeout": 0}, forfeits=0, think_p50_ms=None,
                think_p95_ms=None, strength=(lo + hi) / 2, strength_low=lo, strength_high=hi,
                rank_low=1, rank_high=5, separated_from_next=separated)
    return {**SeasonRow("active", table).to_json(), "bot": version.bot.name,
            "version": version.number}


def older_fit_row(version: BotVersion, lo: float, hi: float, separated: bool | None) -> dict:
    """The same row as an older release's runner wrote it: flat, under other names."""
    return {"league_name": version.league_name, "bot": version.bot.name,
            "version": version.number, "state": "active", "strength": (lo + hi) / 2,
            "lo": lo, "hi": hi, "rank_lo": 1, "rank_hi": 5, "separated": separated,
            "mu": 25.0, "sigma": 2.0, "conservative": 19.0, "games": 9, "wins": 3,
            "strikes": 0, "strike_kinds": {"timeout": 0}}


@pytest.mark.slow
def test_the_leaderboard_ranks_only_current_versions_and_marks_by_the_rule(
        folder: Path) -> None:
    """Three bots, one with two replaced versions above its current one: three ranked rows,
    the retired two one click away with their final rows, `~` only where a row's interval
    overlaps the next shown row's (never on the last), the house bot marked."""
    ann, ben = student(), student()
    annbot = Bot.objects.create(owner=ann, name=unique("ann"))
    benbot = Bot.objects.create(owner=ben, name=unique("ben"))
    house = Bot.objects.create(owner=None, house=True, name=unique("house-"))
    old1, old2 = board_version(annbot, 1, "retired"), board_version(annbot, 2, "retired")
    current = board_version(annbot, 3, "active")
    ben1, house1 = board_version(benbot, 1, "active"), board_version(house, 1, "active")
    # In the fit's order; `separated` as the fit saw it, with the retired rows between.
    rows = [fit_row(old1, 50, 90, False), fit_row(old2, 40, 80, True),
            fit_row(ben1, 30, 60, False), fit_row(current, 20, 45, True),
            fit_row(house1, -50, 10, None)]
    Standing.objects.create(games=40, data={"rows": rows, "facts": {}, "head_to_head": {}})
    client = signed_in(ann)
    data = client.get("/leaderboard.json").json()
    ranked = [(r["table"]["bot"], r["table"]["rank"], r["table"]["separated_from_next"],
               r["owner"], r["house"]) for r in data["rows"]]
    assert ranked == [(ben1.league_name, 1, False, ben.username, False),
                      (current.league_name, 2, True, ann.username, False),
                      (house1.league_name, 3, None, "", True)]
    assert [(r["table"]["bot"], r["table"]["rank"], r["table"]["strength_low"])
            for r in data["retired"]] == [(old1.league_name, None, 50),
                                          (old2.league_name, None, 40)]
    page = client.get("/leaderboard/").content.decode()
    board = page.split('id="leaderboard"')[1].split("</table>")[0]
    shown = re.findall(r"<tr class=\"state-(\w+)\"><td>([^<]*)</td>", board)
    assert shown == [("active", "1"), ("active", "2"), ("active", "3")], board
    marks = [("~</td>" in line) for line in board.split("<tr ")[1:]]
    assert marks == [True, False, False], board
    assert '<span class="house">house</span>' in board
    retired = page.split('id="retired-versions"')[1].split("</details>")[0]
    assert old1.league_name.split(".")[0] in retired and "<summary>" in retired
    assert retired.count("<tr class=\"state-retired\">") == 2


def test_an_older_release_s_standing_shows_as_the_same_board(folder: Path) -> None:
    """A club upgraded from an older release keeps its standings until the next refit: a
    standing whose rows are flat, under the older names (lo, hi, rank_lo, ...), shows the same
    leaderboard, JSON and page, as the same rows in the table row's one shape."""
    ann = student()
    bots = [Bot.objects.create(owner=ann, name=unique(f"o{n}")) for n in range(3)]
    versions = [board_version(bot, 1, "active") for bot in bots]
    spans = [(50, 90, False), (40, 80, True), (-10, 20, None)]

    def shown(make: object) -> tuple[list, list, str]:
        rows = [make(version, *span) for version, span in zip(versions, spans, strict=True)]
        Standing.objects.create(games=40, data={"rows": rows, "facts": {}, "head_to_head": {}})
        client = signed_in(ann)
        data = client.get("/leaderboard.json").json()
        page = client.get("/leaderboard/").content.decode()
        return data["rows"], data["retired"], page.split('id="leaderboard"')[1].split(
            "<tbody>")[1].split("</table>")[0]

    older, newer = shown(older_fit_row), shown(fit_row)
    assert older == newer
    assert [row["table"]["strength_low"] for row in older[0]] == [50, 40, -10]
    assert [("~</td>" in line) for line in older[2].split("<tr ")[1:]] == [True, False, False]


def test_rank_ranges_read_as_the_tables_print_them(folder: Path) -> None:
    """A held rank reads `1`, a range `2–4`, and a version the fit has not ranked yet `-`
    (never `None–None`), on the leaderboard and on the bot page."""
    ann = student()
    bots = [Bot.objects.create(owner=ann, name=unique(f"r{n}")) for n in range(3)]
    versions = [board_version(bot, 1, "active") for bot in bots]
    rows = [fit_row(version, 50 - 40 * n, 90 - 40 * n, None) for n, version in enumerate(versions)]
    for row, (low, high) in zip(rows, [(1, 1), (2, 4), (None, None)], strict=True):
        row["table"]["rank_low"], row["table"]["rank_high"] = low, high
    Standing.objects.create(games=40, data={"rows": rows, "facts": {}, "head_to_head": {}})
    client = signed_in(ann)
    board = client.get("/leaderboard/").content.decode().split('id="leaderboard"')[1]
    assert "None" not in board
    after_interval = r"\](?: ~)?</td><td>([^<]*)</td>"   # the cell after the strength's
    assert re.findall(after_interval, board.split("</table>")[0]) == ["1", "2–4", "-"]
    for bot, shown in zip(bots, ["1", "2–4", "-"], strict=True):
        table = client.get(f"/bots/{bot.name}/").content.decode().split("In the table")[1]
        table = table.split("</table>")[0]
        assert re.findall(after_interval, table) == [shown] and "None" not in table, table


@pytest.mark.slow
def test_a_bot_page_says_what_its_bot_waits_for(folder: Path) -> None:
    """A queued check with its place in the queue, a running check, a passed version entering,
    an entered one waiting for its first game, a paused season; a house bot is marked as such
    on its page and offered for test games."""
    from referee.server.club.models import Competition

    user = student()
    client = signed_in(user)
    for _ in range(2):   # two checks queued before this student's
        other = Bot.objects.create(owner=student(), name=unique("q"))
        CheckRun.objects.create(version=BotVersion.objects.create(
            bot=other, number=1, archive_name="a.zip", archive_sha256="0" * 64,
            archive_size=1, folder="f", spec="bot.toml", league_name=f"{other.name}.v1"))
    bot = Bot.objects.create(owner=user, name=unique("wait"))
    version = BotVersion.objects.create(
        bot=bot, number=1, archive_name="a.zip", archive_sha256="0" * 64, archive_size=1,
        folder="f", spec="bot.toml", league_name=f"{bot.name}.v1")
    check = CheckRun.objects.create(version=version)

    def waiting() -> str:
        page = client.get(f"/bots/{bot.name}/").content.decode()
        return page.split('id="waiting"')[1].split("</section>")[0] \
            if 'id="waiting"' in page else ""

    queued = CheckRun.objects.filter(state="queued").count()
    assert f"v1: its check is in the queue, {queued - 1} checks before it" in waiting()
    assert "number" not in waiting()
    BotVersion.objects.filter(pk=version.pk).update(check_state="running")
    CheckRun.objects.filter(pk=check.pk).update(state="running")
    assert "v1: its check is running" in waiting()
    BotVersion.objects.filter(pk=version.pk).update(check_state="passed")
    assert "v1: it passed its check and is entering the season" in waiting()
    BotVersion.objects.filter(pk=version.pk).update(season_state="active")
    assert "v1: in the season, waiting for its first game" in waiting()
    Competition.first_row().update(state="paused")
    try:
        assert "the season is paused" in waiting()
    finally:
        Competition.first_row().update(state="running")

    house = Bot.objects.create(owner=None, house=True, name=unique("house-"))
    board_version(house, 1, "active")
    page = client.get(f"/bots/{house.name}/").content.decode()
    assert 'id="house-mark"' in page and "by None" not in page
    assert f"{house.name}.v1 (house)" in client.get("/testgames/").content.decode()


def test_no_upload_takes_a_house_bots_name(folder: Path, tmp_path: Path) -> None:
    """The house bots' names (and their prefix) are not a student's to take: one line."""
    house = Bot.objects.create(owner=None, house=True, name=unique("house-"))
    api = token_client(student())
    archive = zip_of(student_bot(tmp_path / "src", "speaker", "hi"), tmp_path / "speaker.zip")
    for name in (house.name, unique("house-")):
        answer = submit(api, archive, name)
        error = answer.json()["error"]
        assert answer.status_code == 400 and "house bots" in error and "\n" not in error
    assert not BotVersion.objects.filter(bot=house).exists()
def test_a_standing_is_decoded_once_and_only_the_newest_few_are_kept(folder: Path) -> None:
    """Pages read the newest standing's big JSON once per process (a request while it is still
    the newest reads only its id), a newer one is read when it comes, and the runner keeps
    only the newest few standings, so neither grows a page's cost with the season's age."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from referee.server.runner.clubdb import STANDINGS_KEPT, write_standing

    user = student()
    bot = Bot.objects.create(owner=user, name=unique("once"))
    BotVersion.objects.create(bot=bot, number=1, archive_name="b.zip", archive_sha256="0" * 64,
                              archive_size=1, folder="f", spec="bot.toml",
                              league_name=f"{bot.name}.v1")
    client = signed_in(user)

    def standing_reads(url: str) -> list[str]:
        with CaptureQueriesContext(connection) as seen:
            assert client.get(url).status_code == 200
        return [q["sql"] for q in seen.captured_queries
                if "club_standing" in q["sql"] and '"data"' in q["sql"]]

    for games in range(1, STANDINGS_KEPT + 4):
        write_standing(games, {"rows": [{"bot": bot.name, "league_name": f"{bot.name}.v1",
                                         "games": games}], "facts": {},
                               "head_to_head": {f"{bot.name}.v1": {}}})
    assert Standing.objects.count() == STANDINGS_KEPT
    assert len(standing_reads("/leaderboard.json")) == 1       # a new standing: read once
    for url in ("/leaderboard/", "/leaderboard.json", f"/bots/{bot.name}/"):
        assert standing_reads(url) == [], url                  # the same one: not again
    write_standing(99, {"rows": [], "facts": {}})
    assert len(standing_reads("/leaderboard.json")) == 1
    assert client.get("/leaderboard.json").json()["games"] == 99


def test_the_replay_viewer_builds_its_template_and_assets_once(monkeypatch) -> None:
    """The one-game page reuses its compiled template and inlined assets between requests."""
    import referee.report.site as site
    from referee.engine import RuleSet

    record = {"rules": RuleSet.from_dict({"preset": "classic"}).to_dict(), "players": 2,
              "seed": 1, "game_id": "g"}
    site.single_game_html(record)
    calls = {"environment": 0, "asset_text": 0}
    for name in calls:
        original = getattr(site, name)

        def counting(*args, _name=name, _original=original):  # noqa: ANN001, ANN202
            calls[_name] += 1
            return _original(*args)

        monkeypatch.setattr(site, name, counting)
    first, second = site.single_game_html(record), site.single_game_html(record)
    assert first == second and "viewer" in first
    assert calls == {"environment": 0, "asset_text": 0}


def test_the_pages_read_the_season_store_that_is_there_now(folder: Path) -> None:
    """The pages keep one read-only connection to the season's store per thread: it sees each
    game committed after it opened, and a store made anew at the same path (a new season) is
    read, not the old one's unlinked file."""
    from referee.server.club.games import season_store

    path = ClubFolder(folder).season_league.store_path
    path.parent.mkdir()

    def write(rows: list[int], fresh: bool = False) -> None:
        if fresh:
            path.unlink()
        with sqlite3.connect(path) as db:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("CREATE TABLE IF NOT EXISTS games (n INTEGER)")
            db.executemany("INSERT INTO games VALUES (?)", [(n,) for n in rows])
        db.close()

    def seen() -> list[int]:
        with season_store() as store:
            assert store is not None
            return [n for (n,) in store.db.execute("SELECT n FROM games ORDER BY n")]

    write([1])
    with season_store() as first:
        assert seen() == [1]
    write([2])
    assert seen() == [1, 2]
    with season_store() as again:
        assert again is first          # kept open across requests
    write([7], fresh=True)
    assert seen() == [7]


def test_a_warmed_web_worker_keeps_what_it_made_at_start_out_of_collections() -> None:
    """A web worker freezes what its warm-up made (Django, routes, templates, the first board):
    a full collection then scans only what requests made since, where it stood every thread of
    the worker still for tens of milliseconds. Run as a worker runs: a process of its own."""
    code = ("import gc\nfrom referee.server.web import warmed_server\n"
            "before = gc.get_freeze_count()\nwarmed_server(False)\n"
            "print(before, gc.get_freeze_count(), len(gc.get_objects()))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=600, env=os.environ, check=False)
    assert done.returncode == 0, done.stderr
    before, frozen, collectable = map(int, done.stdout.split()[-3:])
    assert before == 0 and frozen > 20_000 and collectable < frozen // 5, done.stdout


def test_a_newer_standing_being_shaped_holds_no_page(folder: Path) -> None:
    """While one request shapes a newer standing, the others are served the board in hand at
    once (the lock held here stands for that request); the next request after it reads the
    newer one."""
    from referee.server.club import board
    from referee.server.runner.clubdb import write_standing

    user = student()
    bot = Bot.objects.create(owner=user, name=unique("held"))
    client = signed_in(user)
    write_standing(5, {"rows": [{"bot": bot.name, "league_name": f"{bot.name}.v1"}],
                       "facts": {}})
    assert client.get("/leaderboard.json").json()["games"] == 5
    write_standing(6, {"rows": [], "facts": {}})
    seen: list[int] = []
    asking = threading.Thread(target=lambda: seen.append(
        client.get("/leaderboard.json").json()["games"]))
    assert board._lock.acquire(timeout=60)
    try:
        asking.start()
        asking.join(timeout=120)   # generous: it is not held at all
        assert seen == [5]         # answered while the lock is held, with the board in hand
    finally:
        board._lock.release()
        asking.join()
    assert client.get("/leaderboard.json").json()["games"] == 6


def test_framed_viewers_answer_in_their_frame_when_the_game_is_between_its_end_and_its_replay(
        folder: Path) -> None:
    """A game's page frames its live viewer; when the game ends before the frame loads, its
    record may be a moment from being stored: the frame says so and loads itself again (a
    few times at most), and every answer of a framed viewer, its 404s too, may be framed by
    the club's pages (else the browser refuses to show it: a CSP frame-ancestors error)."""
    alice = student()
    bot = Bot.objects.create(owner=alice, name=unique("bot"))
    mine = BotVersion.objects.create(
        bot=bot, number=1, archive_name="bot.zip", archive_sha256="0" * 64, archive_size=1,
        folder=ClubFolder.version_folder(bot.name, 1), spec="bot.toml",
        league_name=f"{bot.name}.v1",
        check_state="passed", season_state="active")
    running = TestGame.objects.create(requester=alice, version=mine, state="running")
    failed = TestGame.objects.create(requester=alice, version=mine, state="failed")
    client = signed_in(alice)
    try:
        for url in ("/games/7/watch", f"/testgames/{running.pk}/watch"):
            answer = client.get(url)
            assert answer.status_code == 200 and answer["X-Frame-Options"] == "SAMEORIGIN"
            text = answer.content.decode()
            assert "its replay appears here in a moment" in text
            assert f'http-equiv="refresh" content="1; url={url}?tries=1"' in text
            gone = client.get(f"{url}?tries=30")   # it never came: a 404, in its frame
            assert gone.status_code == 404 and gone["X-Frame-Options"] == "SAMEORIGIN"
        answer = client.get(f"/testgames/{failed.pk}/watch")
        assert answer.status_code == 404 and answer["X-Frame-Options"] == "SAMEORIGIN"
        assert "failed" in answer.content.decode()
        for url in ("/games/7/viewer", f"/testgames/{running.pk}/viewer"):
            answer = client.get(url)
            assert answer.status_code == 404 and answer["X-Frame-Options"] == "SAMEORIGIN"
        # Another student's test game stays a 404 for them, framed or not.
        other = signed_in(student()).get(f"/testgames/{running.pk}/watch")
        assert other.status_code == 404 and "replay" not in other.content.decode()
    finally:
        running.delete()
        failed.delete()


def test_the_organiser_lands_on_their_page_and_switches_the_public_board_there(
        folder: Path) -> None:
    """Signed in, the organiser lands on the organiser's page (a student on My bots); the
    public switch is a box there, and a spectator on the sign-in page then finds the board."""
    boss = organiser()
    landed = Client().post("/login/", {"username": boss.username, "password": PASSWORD})
    assert landed.status_code == 302 and landed["Location"] == "/organiser/"
    pupil = student()
    landed = Client().post("/login/", {"username": pupil.username, "password": PASSWORD})
    assert landed.status_code == 302 and landed["Location"] == "/"
    spectator = Client()
    assert 'id="public-board"' not in spectator.get("/login/").content.decode()
    assert spectator.get("/leaderboard/").status_code == 302
    client = signed_in(boss)
    page = client.get("/organiser/").content.decode()
    assert 'id="public-leaderboard"' in page and 'id="public-leaderboard" checked' not in page
    answer = client.post("/organiser/settings", {"games_per_bot_per_hour": "10",
                                                  "house_bots": "", "public_leaderboard": "on"})
    assert answer.status_code == 302
    assert "public_leaderboard = true" in (folder / "season.toml").read_text()
    assert 'id="public-leaderboard" checked' in client.get("/organiser/").content.decode()
    front = spectator.get("/login/").content.decode()
    assert 'id="public-board"' in front and 'href="/leaderboard/"' in front
    assert spectator.get("/leaderboard/").status_code == 200


def test_the_organiser_posts_and_removes_messages_to_the_students_on_their_page(
        folder: Path) -> None:
    boss, pupil = signed_in(organiser()), student()
    text = f"Finals on Friday at six {unique('m')}"
    assert boss.post("/organiser/messages/new", {"text": text}).status_code == 302
    assert text in boss.get("/organiser/").content.decode()
    assert text in signed_in(pupil).get("/").content.decode()
    # Only the organiser posts: for a student the address does not exist.
    assert signed_in(pupil).post("/organiser/messages/new", {"text": "x"}).status_code == 404
    from referee.server.club.models import ClubMessage

    message = ClubMessage.objects.get(text=text)
    assert boss.post(f"/organiser/messages/{message.pk}/remove").status_code == 302
    assert text not in signed_in(pupil).get("/").content.decode()


def test_a_games_result_says_the_places_and_what_decided_them() -> None:
    """R26: the most money first; equal money, the most notes; equal both, a shared place."""
    from referee.server.club.games import game_result

    def record(money: list[int], notes: list[int], places: list[int]) -> dict:
        return {"bots": [{"seat": s, "name": f"b{s}"} for s in range(len(places))],
                "events": [{"type": "round"}, {"type": "end", "money": money, "notes": notes,
                                               "places": places}]}

    rows, decided = game_result(record([50, 90, 50], [3, 1, 3], [2, 1, 2]))
    assert [(r["name"], r["place"]) for r in rows] == [("b1", 1), ("b0", 2), ("b2", 2)]
    assert decided == ["b0 and b2 share place 2: equal money and equal notes"]
    rows, decided = game_result(record([50, 90, 50], [3, 1, 5], [3, 1, 2]))
    assert [r["name"] for r in rows] == ["b1", "b2", "b0"]
    assert decided == ["b2 ahead of b0 on notes (5 to 3), the money being equal"]
    assert game_result(record([9, 1], [0, 0], [1, 2]))[1] == ["the most money won"]
    assert game_result({"events": []}) is None


def test_watching_the_season_is_one_click_from_the_leaderboard(folder: Path) -> None:
    """Whether or not a game is in play when the page is drawn (a game lasts seconds)."""
    page = signed_in(student()).get("/leaderboard/").content.decode()
    assert 'id="watch-link"' in page and 'href="/games/live/watch"' in page
    # No game in play: the list is hidden (live.js shows it when one starts), the link is
    # there all the same.
    assert re.search(r'<section [^>]*id="in-play"[^>]* hidden>', page)


def test_bots_offered_and_listed_as_opponents_name_their_owners(folder: Path) -> None:
    """Students' bots share the names the guides give them (`mine`, `mine2`...): wherever a
    page offers bots to play against or lists the games played against them, each is named
    with its owner as the leaderboard's student column tells them apart, a house bot
    `(house)`."""
    (folder / "season.toml").write_text("play_against_students = true\n")
    ann, ben = student(unique("ann")), student(unique("ben"))
    house = Bot.objects.create(owner=None, house=True, name=unique("house-"))
    versions = {}
    for bot in (Bot.objects.create(owner=ann, name=unique("mine")),
                Bot.objects.create(owner=ben, name=unique("mine")), house):
        versions[bot.name] = BotVersion.objects.create(
            bot=bot, number=1, archive_name="b.zip", archive_sha256="0" * 64, archive_size=1,
            folder="f", spec="bot.toml", league_name=f"{bot.name}.v1",
            check_state=BotVersion.PASSED, season_state=BotVersion.ACTIVE)
    ann_v, ben_v, house_v = versions.values()
    wanted = [f"{ann_v.league_name} ({ann.username})", f"{ben_v.league_name} ({ben.username})",
              f"{house_v.league_name} (house)"]
    client = signed_in(ann)
    for page in ("/testgames/", "/play/"):
        offered = re.search(r'<select name="opponents".*?</select>',
                            client.get(page).content.decode(), re.S).group(0)
        assert all(f">{label}</option>" in offered for label in wanted), (page, offered)
    # The lists of test games and games in the browser, and a game's own page.
    test_game = TestGame.objects.create(requester=ann, version=ann_v)
    test_game.opponents.set([ben_v, house_v])
    from referee.server.club.models import HumanGame

    game = HumanGame.objects.create(owner=ann)
    game.opponents.set([ben_v, house_v])
    both = f"{ben_v.league_name} ({ben.username}), {house_v.league_name} (house)"
    for page in ("/testgames/", "/play/", f"/play/{game.pk}/"):
        assert both in client.get(page).content.decode(), page
