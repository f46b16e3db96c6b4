"""Every route of the club server, checked for who may use it: anonymous, the student who owns
the objects in its URL, another student, and the organiser. The routes are enumerated from the
URL configuration, so a new route without a rule here fails the test."""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path

import pytest
from server_support import club_django, play_season

club_django()

from django.contrib.auth.models import User  # noqa: E402
from django.test import Client, override_settings  # noqa: E402
from django.urls import URLPattern, URLResolver, get_resolver  # noqa: E402

from referee.league.store import LeagueStore  # noqa: E402
from referee.server.club.models import (  # noqa: E402
    Bot,
    BotVersion,
    CheckRun,
    ClubMessage,
    Competition,
    HumanGame,
    JoinCode,
    TestGame,
)
from referee.server.club.people import join, make_join_code, new_token  # noqa: E402
from referee.server.shared.clubfolder import ClubFolder  # noqa: E402

# OWNER: the owner and the organiser; SELF: the owner alone (a personal token; the organiser
# revokes tokens in the admin); BOARD: signed in, or anyone while the season file's
# `public_leaderboard` is on.
PUBLIC, SIGNED_IN, OWNER, SELF, TOKEN, ORGANISER, ADMIN, BOARD = (
    "public", "signed in", "owner", "self", "token", "organiser", "admin", "board")
# route name -> (who may use it, HTTP method)
RULES = {
    "club:home": (SIGNED_IN, "GET"),
    "club:join": (PUBLIC, "GET"),
    "club:login": (PUBLIC, "GET"),
    "club:logout": (PUBLIC, "POST"),
    "club:password": (SIGNED_IN, "GET"),
    "club:tokens": (SIGNED_IN, "GET"),
    "club:token-new": (SIGNED_IN, "POST"),
    "club:token-revoke": (SELF, "POST"),
    "club:upload": (SIGNED_IN, "POST"),
    "club:leaderboard": (BOARD, "GET"),
    "club:leaderboard-json": (BOARD, "GET"),
    "club:season": (BOARD, "GET"),
    "club:competition": (BOARD, "GET"),
    "club:competition-json": (BOARD, "GET"),
    "club:competition-season": (BOARD, "GET"),
    "club:competition-report": (ORGANISER, "GET"),
    "club:competition-report-file": (ORGANISER, "GET"),
    "club:bot-enter": (SELF, "POST"),       # only the bot's owner enters it, or withdraws it
    "club:bot-withdraw": (SELF, "POST"),
    "club:bot": (SIGNED_IN, "GET"),
    "club:version": (OWNER, "GET"),
    "club:download": (OWNER, "GET"),
    "club:game": (SIGNED_IN, "GET"),
    "club:game-viewer": (SIGNED_IN, "GET"),
    "club:game-live": (SIGNED_IN, "GET"),
    "club:game-watch": (SIGNED_IN, "GET"),
    "club:games-live": (BOARD, "GET"),   # the leaderboard's list of games in play
    "club:games-newest": (SIGNED_IN, "GET"),
    "club:season-live": (SIGNED_IN, "GET"),
    "club:season-watch": (SIGNED_IN, "GET"),
    "club:testgames": (SIGNED_IN, "GET"),
    "club:testgame": (OWNER, "GET"),
    "club:testgame-part": (OWNER, "GET"),
    "club:testgame-viewer": (OWNER, "GET"),
    "club:testgame-live": (OWNER, "GET"),
    "club:testgame-watch": (OWNER, "GET"),
    "club:play": (SIGNED_IN, "GET"),
    "club:play-game": (OWNER, "GET"),
    "club:play-state": (OWNER, "GET"),
    "club:play-answer": (SELF, "POST"),   # only the player answers, the organiser watches
    "club:play-viewer": (OWNER, "GET"),
    "club:api-submit": (TOKEN, "POST"),
    "club:api-version": (OWNER, "GET"),
    "club:api-leaderboard": (BOARD, "GET"),
    "club:api-bot-games": (SIGNED_IN, "GET"),
    "club:api-game": (SIGNED_IN, "GET"),
    "club:organiser": (ORGANISER, "GET"),
    "club:screen": (ORGANISER, "GET"),
    "club:season-action": (ORGANISER, "POST"),
    "club:competition-new": (ORGANISER, "POST"),
    "club:competition-action": (ORGANISER, "POST"),
    "club:season-settings": (ORGANISER, "POST"),
    "club:code-new": (ORGANISER, "POST"),
    "club:message-new": (ORGANISER, "POST"),
    "club:message-remove": (ORGANISER, "POST"),
    "club:code-withdraw": (ORGANISER, "POST"),
    "club:bot-disable": (ORGANISER, "POST"),
    "club:put-back": (ORGANISER, "POST"),
    "club:report": (ORGANISER, "GET"),
    "club:report-file": (ORGANISER, "GET"),
    "admin": (ADMIN, "GET"),
}


def routes() -> dict[str, str]:
    """route name -> URL pattern, for every route (the admin counts as one)."""
    found: dict[str, str] = {}

    def walk(patterns: list, prefix: str, namespace: str) -> None:
        for item in patterns:
            if isinstance(item, URLResolver):
                if item.app_name == "admin":
                    found["admin"] = prefix + str(item.pattern)
                    continue
                space = f"{item.namespace}:" if item.namespace else namespace
                walk(item.url_patterns, prefix + str(item.pattern), space)
            elif isinstance(item, URLPattern):
                assert item.name, f"route {prefix}{item.pattern} has no name"
                found[namespace + item.name] = prefix + str(item.pattern)

    walk(get_resolver().url_patterns, "/", "")
    return found


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("routes")
    tag = uuid.uuid4().hex[:6]
    users = {}
    for who in ("owner", "other"):
        users[who] = join(make_join_code().code, f"{who}{tag}", "a-long-club-password-7", 3)
    users["organiser"] = User.objects.create_superuser(f"org{tag}", password="x" * 12)
    bot = Bot.objects.create(owner=users["owner"], name=f"route-{tag}")
    version = BotVersion.objects.create(
        bot=bot, number=1, archive_name="a.zip", archive_sha256="0" * 64, archive_size=1,
        folder=ClubFolder.version_folder(bot.name, 1), spec="bot.toml",
        league_name=f"{bot.name}.v1",
        check_state="passed", season_state="active")
    (ClubFolder(root).bot_uploads(bot.name) / "1").mkdir(parents=True)
    (ClubFolder(root).bot_uploads(bot.name) / "1" / "archive").write_bytes(b"PK")
    CheckRun.objects.create(version=version)
    play_season(root, {version.league_name: "hi", f"x{tag}.v1": "ho"}, games=2)
    (root / "testgames").mkdir()
    store = LeagueStore.open_readonly(ClubFolder(root).season_league.store_path)
    (root / "testgames" / "1.json").write_text(json.dumps(store.record(0)))
    store.close()
    test_game = TestGame.objects.create(requester=users["owner"], version=version,
                                        state="done", record_file=ClubFolder.test_game_record("1"))
    human_game = HumanGame.objects.create(owner=users["owner"], state="done",
                                          record_file=ClubFolder.test_game_record("1"))
    (ClubFolder(root).season / "final").mkdir()
    (ClubFolder(root).season / "final" / "index.html").write_text("<p>report</p>")
    other = Competition.objects.create(name=f"routes {tag}", slug=f"routes-{tag}",
                                       folder=ClubFolder.competition_folder(f"routes-{tag}"))
    report = ClubFolder.competition_report(other.folder)   # closed, its report written
    (root / report).parent.mkdir(parents=True)
    (root / report).write_text("<p>its report</p>")
    Competition.objects.filter(pk=other.pk).update(report_path=report)
    _, token = new_token(users["owner"])
    kwargs = {"name": bot.name, "version_id": version.pk, "index": 0, "game_id": test_game.pk,
              "play_id": human_game.pk, "token_id": token.pk, "action": "resume", "bot_id": bot.pk,
              "code_id": JoinCode.objects.first().pk, "path": "index.html",
              "message_id": ClubMessage.objects.create(text="Finals on Friday").pk,
              "slug": other.slug, "competition_id": other.pk}
    return {"root": root, "users": users, "kwargs": kwargs}


def url_of(pattern: str, kwargs: dict) -> str:
    return re.sub(r"<(?:\w+:)?(\w+)>", lambda m: str(kwargs[m.group(1)]), pattern)


def client_for(world: dict, who: str) -> Client:
    client = Client()
    if who != "anonymous":
        client.force_login(world["users"][who])
    return client


def test_every_route_has_a_rule() -> None:
    assert set(routes()) == set(RULES), "give each new route a rule in RULES"


def test_every_number_in_a_route_is_a_bounded_id() -> None:
    """A number in a club URL takes the `id` converter (at most 18 digits, tests/
    test_server_guards.py shows a longer one is 404): `int` would pass any length to a query
    that cannot take it."""
    unbounded = [f"{name}: {pattern}" for name, pattern in routes().items()
                 if "<int:" in pattern]
    assert not unbounded, unbounded


@pytest.mark.parametrize("public", [False, True], ids=["private-board", "public-board"])
@pytest.mark.parametrize("who", ["anonymous", "owner", "other", "organiser"])
def test_every_route_answers_each_kind_of_user_as_its_rule_says(
        world: dict, who: str, public: bool, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """With the organiser's `public_leaderboard` off (the default) and on: the switch opens
    the leaderboard's page and JSON to anyone and nothing else."""
    season_file = tmp_path / "season.toml"
    season_file.write_text(f"public_leaderboard = {'true' if public else 'false'}\n")
    monkeypatch.setenv("REFEREE_SEASON_FILE", str(season_file))
    season = Competition.first()
    saved = (season.state, season.report_path)
    Competition.first_row().update(report_path="season/final/index.html")
    wrong = []
    try:
        with override_settings(DATA_DIR=world["root"]):
            for name, pattern in routes().items():
                rule, method = RULES[name]
                url = url_of(pattern, world["kwargs"])
                client = client_for(world, who)
                answer = client.post(url) if method == "POST" else client.get(url)
                status = answer.status_code
                expected = expect(rule, who, url, public)
                if not expected(status, answer):
                    wrong.append(f"{who} {method} {url} ({rule}): {status}")
    finally:
        Competition.first_row().update(state=saved[0], report_path=saved[1])
    assert not wrong, "\n".join(wrong)


def expect(rule: str, who: str, url: str, public: bool = False):  # noqa: ANN201
    """A test of (status, answer) for this rule and user (`public`: the season file's
    `public_leaderboard`)."""
    api = url.startswith("/api/")

    def to_login(status: int, answer) -> bool:
        if api:
            return status == 401
        return status == 302 and "login/" in answer["Location"]

    def allowed(status: int, _answer) -> bool:
        return status < 400

    def hidden(status: int, _answer) -> bool:
        return status == 404

    if rule == PUBLIC:
        return allowed
    if rule == BOARD and public:   # the board itself, not a way to the sign-in page
        return lambda status, _a: status == 200
    if rule == ADMIN:
        return allowed if who == "organiser" else to_login
    if who == "anonymous":
        return to_login
    if rule == TOKEN:   # a session is no token: the API says so
        return lambda status, _a: status == 401
    if rule in (SIGNED_IN, BOARD):
        return allowed
    if rule == OWNER:
        return hidden if who == "other" else allowed
    if rule == SELF:
        return allowed if who == "owner" else hidden
    if rule == ORGANISER:
        return allowed if who == "organiser" else hidden
    raise AssertionError(f"unknown rule {rule}")
