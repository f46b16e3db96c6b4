"""The competitions' service layer on the club's real SQLite database, in process
(referee.server.club.services): the organiser opens, pauses, resumes and closes competitions,
each with its own settings checked by the runner's own parser; a student enters a bot in one
and withdraws it; every request the club does not carry out is refused with one line."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from server_support import club_django

club_django()

from django.contrib.auth.models import User  # noqa: E402
from django.db import transaction  # noqa: E402

from referee.server.club import services  # noqa: E402
from referee.server.club.models import Bot, Competition, CompetitionEntry  # noqa: E402
from referee.server.club.services import Refused  # noqa: E402
from referee.server.shared.seasonkeys import competition_settings  # noqa: E402
from referee.util.config import ConfigError  # noqa: E402


@pytest.fixture(autouse=True)
def rolled_back() -> Iterator[None]:
    """Each test's rows are gone after it."""
    with transaction.atomic():
        yield
        transaction.set_rollback(True)


def student() -> User:
    return User.objects.create(username=f"s{uuid.uuid4().hex[:8]}")


def bot_of(owner: User | None) -> Bot:
    return Bot.objects.create(owner=owner, house=owner is None, name=f"b{uuid.uuid4().hex[:8]}")


def biggy(slug: str = "biggy", **entry: object) -> Competition:
    return services.open_competition("Biggy month", slug, {
        "rules": "biggy-slot", "players": [3, 5], "games_per_bot_per_hour": 0,
        "limits": {"decision_ms": 500}, "house_bots": ["greedy"]}, **entry)  # type: ignore[arg-type]


def refused(call: object, *args: object, **kwargs: object) -> Refused:
    with pytest.raises(Refused) as caught:
        call(*args, **kwargs)  # type: ignore[operator]
    assert "\n" not in caught.value.line and "Traceback" not in caught.value.line
    return caught.value


def test_a_competition_opens_with_its_own_settings_and_folder() -> None:
    made = biggy()
    assert (made.state, made.state_word, made.folder) == (
        Competition.RUNNING, "open", "competitions/biggy")
    assert not made.is_first and Competition.first().is_first
    # Its settings read by the runner's parser: its own rules, sizes, pace, limits, house bots.
    own = competition_settings({"rules": "classic", "players": [2, 2], "sandbox": False},
                               made.settings, Path("/x/season.toml"))
    assert own.league.rules.preset == "biggy-slot" and own.league.players == (3, 5)
    assert own.games_per_bot_per_hour == 0 and own.league.limits["decision_ms"] == 500
    assert [p.stem for p in own.house_bots] == ["greedy"]
    assert own.league.sandbox is False   # the club's key, from the season file


def test_a_competition_without_house_bots_has_none_and_another_preset_is_a_seed_variant(
        ) -> None:
    own = competition_settings({"house_bots": ["random"]}, {"rules": "classic-white"},
                               Path("/x/season.toml"))
    assert own.house_bots == [] and own.league.rules.preset == "classic-white"
    with pytest.raises(ConfigError, match="sets only"):
        competition_settings({}, {"sandbox": False}, Path("/x/season.toml"))


@pytest.mark.parametrize(("name", "slug", "settings", "words"), [
    ("", "x1", {}, "needs a name"),
    ("X", "Not A Slug", {}, "not lower-case letters"),
    ("X", "season", {}, "exists already"),
    ("X", "x2", {"rules": "chess"}, "unknown preset 'chess'"),
    ("X", "x3", {"players": [1, 9]}, "tables of 1-9 players do not fit rules 'classic'"),
    ("X", "x4", {"cluster": "local:2"}, "a competition sets only"),
    ("X", "x5", {"games_per_bot_per_hour": -1}, "games_per_bot_per_hour"),
])
def test_a_competition_that_cannot_be_opened_is_refused_in_one_line(
        name: str, slug: str, settings: dict, words: str) -> None:
    before = Competition.objects.count()
    why = refused(services.open_competition, name, slug, settings)
    assert words in why.line, why.line
    assert Competition.objects.count() == before


def test_the_same_short_name_twice_is_refused() -> None:
    biggy("twice")
    assert refused(biggy, "twice").status == 409


def test_the_organiser_pauses_resumes_and_closes_and_a_closed_one_stays_closed() -> None:
    made = biggy()
    assert services.move(made, "pause") == "the competition is paused now"
    assert refused(services.move, made, "pause").line == \
        "the competition cannot pause from paused"
    assert services.move(made, "resume") == "the competition is open now"
    assert services.move(made, "close") == "the competition is closed now"
    assert refused(services.move, made, "resume").line == \
        "the competition cannot resume from closed"
    made.refresh_from_db()
    assert made.state == Competition.CLOSED and made.closed_at is not None
    assert Competition.first().state == Competition.RUNNING   # the others go on
    assert "no competition action 'explode'" in refused(services.move, made, "explode").line


def test_a_student_enters_up_to_the_limit_and_withdraws() -> None:
    ann = student()
    one, two = bot_of(ann), bot_of(ann)
    made = biggy(bots_per_student=1)
    services.enter_bot(ann, one, made)
    assert list(made.entries.values_list("bot_id", flat=True)) == [one.pk]
    assert "in Biggy month already" in refused(services.enter_bot, ann, one, made).line
    assert refused(services.enter_bot, ann, two, made).line == (
        "Biggy month takes 1 bot per student, and you entered 1: withdraw one first")
    services.withdraw_bot(ann, one, made)
    services.enter_bot(ann, two, made)
    assert list(made.entries.values_list("bot_id", flat=True)) == [two.pk]
    assert refused(services.withdraw_bot, ann, one, made).line == \
        f"{one.name} is not in Biggy month"


def test_entries_that_may_not_be_made_are_refused() -> None:
    ann, bob = student(), student()
    mine, his = bot_of(ann), bot_of(bob)
    made = biggy()
    assert refused(services.enter_bot, ann, his, made).status == 403
    first = Competition.first()
    assert "every bot of the club plays in" in refused(services.enter_bot, ann, mine, first).line
    house_only = biggy("house-only", who_may_enter=Competition.HOUSE_ONLY)
    assert "plays the house bots only" in refused(services.enter_bot, ann, mine,
                                                  house_only).line
    services.move(made, "close")
    made.refresh_from_db()
    assert refused(services.enter_bot, ann, mine, made).line == "Biggy month is closed"
    mine.disabled, mine.disabled_reason = True, "copied"
    assert refused(services.enter_bot, ann, mine, biggy("other")).line == \
        f"{mine.name} is disabled: copied"
    assert not CompetitionEntry.objects.filter(bot=mine).exists()


def test_a_retired_versions_folder_another_competition_plays_is_not_pruned(
        tmp_path: Path) -> None:
    """The first competition retires a version (a newer one passed) while another competition
    still plays it: the retention rule keeps its built folder until that one retires it too."""
    from referee.server.club.models import BotVersion
    from referee.server.shared.clubfolder import ClubFolder
    from referee.server.shared.diskuse import prunable

    bot = bot_of(student())
    folder = ClubFolder(tmp_path).version_upload(bot.name, 1) / "bot"
    folder.mkdir(parents=True)
    old = BotVersion.objects.create(
        bot=bot, number=1, archive_name="a.zip", archive_sha256="0" * 64, archive_size=1,
        folder=ClubFolder.version_folder(bot.name, 1), spec="bot.toml",
        league_name=f"{bot.name}.v1", check_state="passed", season_state="retired")
    assert folder.resolve() in [path.resolve() for path in prunable(tmp_path)]
    assert folder.resolve() not in [path.resolve()
                                    for path in prunable(tmp_path, {old.league_name})]
