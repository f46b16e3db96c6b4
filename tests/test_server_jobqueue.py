"""The runner's one job queue on the club's real SQLite database, in process: checks, test
games and games in the browser claimed by one function (referee.server.runner.jobqueue) in a
fair order, a job claimed once when two claimers race for it, and `Competition.first()`."""

from __future__ import annotations

import re
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from server_support import club_django

club_django()

from django.contrib.auth.models import User  # noqa: E402
from django.db import connection, transaction  # noqa: E402

from referee.server.club.models import (  # noqa: E402
    Bot,
    BotVersion,
    CheckRun,
    Competition,
    HumanGame,
    Job,
    TestGame,
)
from referee.server.runner.jobqueue import claim  # noqa: E402
from referee.server.shared.jobsync import sync_jobs  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def student() -> User:
    return User.objects.create(username=f"s{uuid.uuid4().hex[:8]}")


def version(owner: User | None, passed: bool = False) -> BotVersion:
    """A new bot's first version (a house bot's with no owner), its check queued."""
    name = f"b{uuid.uuid4().hex[:8]}"
    bot = Bot.objects.create(owner=owner, house=owner is None, name=name)
    made = BotVersion.objects.create(
        bot=bot, number=1, archive_name="a.zip", archive_sha256="0" * 64, archive_size=1,
        folder=f"uploads/{name}/1/bot", spec="bot.toml", league_name=f"{name}.v1",
        check_state="passed" if passed else "queued")
    CheckRun.objects.create(version=made, state="passed" if passed else "queued")
    return made


def check_of(made: BotVersion) -> int:
    return CheckRun.objects.get(version=made).pk


@pytest.fixture()
def alone() -> Iterator[None]:
    """A transaction rolled back at the end, with every job other tests left taken out of the
    queue in it: the queue holds only what the test puts in."""
    with transaction.atomic():
        Job.objects.all().delete()
        yield
        transaction.set_rollback(True)


def test_checks_go_round_robin_between_students(alone: None) -> None:
    ann, bob = student(), student()
    ann1, ann2, ann3 = version(ann), version(ann), version(ann)
    bob1 = version(bob)
    house = version(None)
    # Ann queued three checks before Bob's: Bob's starts second, and the house bot's (owned
    # by nobody) third; then nobody may start another while theirs runs.
    claimed = [claim(Job.CHECK) for _ in range(4)]
    assert [job.ref if job else None for job in claimed] == [
        check_of(ann1), check_of(bob1), check_of(house), None]
    first = CheckRun.objects.get(pk=check_of(ann1))
    assert (first.state, first.attempts, first.version.check_state) == ("running", 1, "running")
    first.state = CheckRun.PASSED
    first.save()   # its verdict: Ann may start her next, the oldest she queued
    assert Job.objects.get(kind=Job.CHECK, ref=first.pk).state == Job.ENDED
    job = claim(Job.CHECK)
    assert job is not None and job.ref == check_of(ann2)
    assert claim(Job.CHECK) is None
    assert CheckRun.objects.get(pk=check_of(ann3)).state == "queued"


def test_the_student_who_started_longest_ago_goes_first(alone: None) -> None:
    ann, bob = student(), student()
    ann1 = version(ann)
    job = claim(Job.CHECK)
    assert job is not None and job.ref == check_of(ann1)
    CheckRun.objects.filter(pk=job.ref).update(state=CheckRun.FAILED)
    sync_jobs(CheckRun.objects.filter(pk=job.ref))
    ann2, bob1 = version(ann), version(bob)   # Ann's queued first, but she had her turn
    assert [getattr(claim(Job.CHECK), "ref", None) for _ in range(2)] == [
        check_of(bob1), check_of(ann2)]


def test_only_house_checks_when_uploads_may_not_run(alone: None) -> None:
    version(student())
    house = version(None)
    job = claim(Job.CHECK, house_only=True)
    assert job is not None and job.ref == check_of(house)
    assert claim(Job.CHECK, house_only=True) is None


def test_browser_games_go_round_robin_and_test_games_oldest_first(alone: None) -> None:
    ann, bob = student(), student()
    opponent = version(None, passed=True)
    browser = [HumanGame.objects.create(owner=who) for who in (ann, ann, bob)]
    tests = [TestGame.objects.create(requester=who, version=opponent) for who in (ann, ann, bob)]
    for game in [*browser, *tests]:
        game.opponents.set([opponent])
    # One browser game per student at a time, Bob's before Ann's second.
    assert [getattr(claim(Job.BROWSER_GAME), "ref", None) for _ in range(3)] == [
        browser[0].pk, browser[2].pk, None]
    assert HumanGame.objects.get(pk=browser[0].pk).state == "running"
    # Test games, one at a time anyway, are taken in the order they were asked for.
    assert [getattr(claim(Job.TEST_GAME), "ref", None) for _ in range(4)] == [
        *(game.pk for game in tests), None]
    assert set(TestGame.objects.filter(pk__in=[g.pk for g in tests])
               .values_list("state", flat=True)) == {"running"}
    # Each kind is its own queue: a check claim never takes a game.
    assert claim(Job.CHECK) is None


def test_a_job_whose_row_left_the_queue_is_not_claimed(alone: None) -> None:
    ann = student()
    opponent = version(None, passed=True)
    gone = TestGame.objects.create(requester=ann, version=opponent)
    # Changed without a save (no signal): the claim finds its row is no longer queued.
    TestGame.objects.filter(pk=gone.pk).update(state=TestGame.FAILED)
    assert claim(Job.TEST_GAME) is None
    assert Job.objects.get(kind=Job.TEST_GAME, ref=gone.pk).state == Job.ENDED


def test_two_claimers_racing_take_each_job_once() -> None:
    """Two threads, each on its own connection to the one SQLite file, claim the same queue
    at once: every job is taken by exactly one of them."""
    opponent = version(None, passed=True)
    ann = student()
    before = list(Job.objects.filter(kind=Job.TEST_GAME, state=Job.QUEUED)
                  .values_list("ref", flat=True))
    Job.objects.filter(kind=Job.TEST_GAME, ref__in=before).update(state=Job.ENDED)
    games = []
    for _ in range(40):
        game = TestGame.objects.create(requester=ann, version=opponent)
        game.opponents.set([opponent])
        games.append(game.pk)
    start = threading.Barrier(2)
    taken: list[list[int]] = [[], []]
    failed: list[BaseException] = []

    def claimer(index: int) -> None:
        try:
            start.wait()
            while (job := claim(Job.TEST_GAME)) is not None:
                taken[index].append(job.ref)
        except BaseException as exc:  # noqa: BLE001 - told to the test below
            failed.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=claimer, args=(i,)) for i in range(2)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sync_jobs(TestGame.objects.filter(pk__in=before))   # the other tests' jobs as they were
    assert not failed, failed
    assert not set(taken[0]) & set(taken[1])
    assert sorted(taken[0] + taken[1]) == games
    assert set(TestGame.objects.filter(pk__in=games).values_list("state", flat=True)) == {
        "running"}


def test_season_current_is_the_one_row(alone: None) -> None:
    season = Competition.first()
    assert season.pk == Competition.FIRST and Competition.objects.filter(slug="season").count() == 1
    Competition.first_row().update(state=Competition.PAUSED)
    assert Competition.first().state == Competition.PAUSED
    Competition.objects.all().delete()
    made = Competition.first()   # a database that lost it: both processes find one again
    assert (made.pk, made.state) == (Competition.FIRST, Competition.RUNNING)


def test_no_module_fetches_the_season_by_its_key() -> None:
    """Every fetch of the season row goes through Competition.first() (the migrations that made
    it aside)."""
    spelled = [f"{path.relative_to(ROOT)}:{number}"
               for path in sorted((ROOT / "referee").rglob("*.py"))
               if "migrations" not in path.parts
               for number, line in enumerate(path.read_text().splitlines(), 1)
               if re.search(r"\bpk\s*=\s*1\b", line)]
    assert spelled == []
