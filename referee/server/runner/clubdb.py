"""The runner's reads and writes of the club's database (Django ORM, synchronous).

Every function here runs on the runner's one database thread (`Runner.db`), never on the event
loop that plays games: a write waiting for SQLite's lock must not hold up a bot's clock.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from referee.league.season import SeasonRow
from referee.league.tables import Row
from referee.present.text import safe_line
from referee.server.club.models import (
    Bot,
    BotVersion,
    CheckLine,
    CheckRun,
    Competition,
    Notice,
    RatingHistory,
    Standing,
    TestGame,
)
from referee.server.shared.botnames import house_name
from referee.server.shared.clubfolder import ClubFolder
from referee.server.shared.diskuse import over_budget, prunable, student_use
from referee.server.shared.ratinghistory import grown, rating_chart
from referee.server.shared.seasonkeys import ServerLimits
from referee.server.shared.seasonread import server_limits


@dataclass(frozen=True)
class Claimed:
    """A queued item the runner took: a check or a test game, with what it needs to run it."""

    id: int
    version_id: int
    league_name: str
    spec: Path                 # absolute path of the version's spec
    owner_id: int
    folder: Path               # absolute path of the version's bot folder
    uploaded: bool = True      # the folder is the upload's own, under DIR/uploads (a house
                               # bot's is the organiser's: never removed or changed)
    data: Path | None = None   # the club's data folder


def inside(path: Path, folder: Path) -> bool:
    """True when `path` lies inside `folder` (both resolved: no link leads it out)."""
    return path.resolve().is_relative_to(folder.resolve()) and path.resolve() != folder.resolve()


def spec_path(data: Path, version: BotVersion) -> Path:
    """The absolute path of a version's spec."""
    return data / version.folder / version.spec


def spec_paths(data: Path) -> dict[str, str]:
    """Where the spec of every version that entered the season lies now, by its season name."""
    versions = BotVersion.objects.exclude(league_name="")
    return {v.league_name: str(spec_path(data, v)) for v in versions}


def requeue_interrupted() -> tuple[int, int]:
    """Checks and test games left `running` by a runner that died go back to the queue (their
    check lines are dropped: the check runs again from the start). Returns the counts."""
    with transaction.atomic():
        checks = list(CheckRun.objects.filter(state=CheckRun.RUNNING))
        for check in checks:
            check.lines.all().delete()
            check.state, check.started_at = CheckRun.QUEUED, None
            check.save(update_fields=["state", "started_at"])
            BotVersion.objects.filter(pk=check.version_id).update(
                check_state=BotVersion.QUEUED)
        running = list(TestGame.objects.filter(state=TestGame.RUNNING))
        for game in running:
            game.state, game.started_at = TestGame.QUEUED, None
            game.save(update_fields=["state", "started_at"])   # its job is queued again too
    return len(checks), len(running)


def season_state() -> str:
    """running, paused or closed."""
    return Competition.first().state


# ---------------------------------------------------------------------------- checks

def claimed_check(data: Path, check_id: int) -> Claimed:
    """What the runner needs to run check `check_id`, claimed from the job queue
    (referee.server.runner.jobqueue.claim)."""
    check = CheckRun.objects.select_related("version__bot").get(pk=check_id)
    version = check.version
    folder = data / version.folder
    return Claimed(check.pk, version.pk, version.league_name, spec_path(data, version),
                   version.bot.owner_id, folder, inside(folder, ClubFolder(data).uploads), data)


def hold_upload_checks(line: str) -> int:
    """Give each queued check of an upload that says nothing yet `line` (why it waits), for
    its owner to read; the check stays queued and runs once uploads may run. The count."""
    held = CheckRun.objects.filter(state=CheckRun.QUEUED, version__bot__house=False,
                                   lines__isnull=True)
    count = 0
    for check in held:
        CheckLine.objects.create(run=check, seq=1, text=line)
        count += 1
    return count


def over_disk_budget(claimed: Claimed) -> str | None:
    """One line if the owner's uploads, this version's folder as its build left it included,
    pass their disk budget (the season file's `student_disk_mb`), else None."""
    if not claimed.uploaded or claimed.data is None:
        return None
    try:
        budget = server_limits().student_disk_mb
    except ValueError:   # a bad key: the web refuses uploads saying so; the default here
        budget = ServerLimits().student_disk_mb
    return over_budget(student_use(claimed.data, claimed.owner_id), 0, budget)


def prune_folders(data: Path, keep: Collection[str] = ()) -> list[Path]:
    """The built folders the retention rule (referee.server.shared.diskuse) removes now, but
    those of the versions named in `keep` (they play in another competition)."""
    return prunable(data, keep)


def add_check_line(check_id: int, seq: int, text: str) -> None:
    """Append one line of a check's output."""
    CheckLine.objects.create(run_id=check_id, seq=seq, text=text)


def finish_check(check_id: int, passed: bool, summary: str) -> None:
    """Set a check's verdict, and tell the version's owner."""
    summary = safe_line(summary, limit=280)
    with transaction.atomic():
        check = CheckRun.objects.select_related("version__bot").get(pk=check_id)
        check.state = CheckRun.PASSED if passed else CheckRun.FAILED
        check.finished_at, check.summary = timezone.now(), summary
        check.save(update_fields=["state", "finished_at", "summary"])
        version = check.version
        version.check_state = check.state
        if not passed:
            version.error = summary
        version.save(update_fields=["check_state", "error"])
        word = "passed its check" if passed else "failed its check"
        notify(version.bot.owner_id, f"{_label(version)} {word}: {summary}", version.pk)


# ---------------------------------------------------------------------------- the season

@dataclass(frozen=True)
class Entry:
    """A version that passed its check and waits to enter the season."""

    version_id: int
    league_name: str
    spec: Path
    retire: tuple[str, ...]    # the bot's versions active now (they become retired)


def waiting_entries(data: Path, house: Collection[str]) -> list[Entry]:
    """Versions that passed and wait, of bots and owners still allowed to play, oldest first
    (the order they enter in); only a bot's newest passed version enters. Of the house bots
    only those named `house` (the season file's: another competition's house bots play
    there only)."""
    waiting = (BotVersion.objects.select_related("bot__owner")
               .filter(Q(bot__owner__is_active=True) | Q(bot__house=True, bot__name__in=house),
                       check_state=BotVersion.PASSED, season_state=BotVersion.WAITING,
                       bot__disabled=False)
               .order_by("id"))
    newest: dict[int, BotVersion] = {}
    for version in waiting:
        newest[version.bot_id] = version
    entries = []
    for version in sorted(newest.values(), key=lambda v: v.pk):
        active = BotVersion.objects.filter(bot_id=version.bot_id, season_state=BotVersion.ACTIVE)
        entries.append(Entry(version.pk, version.league_name, spec_path(data, version),
                             tuple(v.league_name for v in active)))
    return entries


def mark_entered(entry: Entry) -> None:
    """The entry is in the season: it is active, the bot's older active versions retired."""
    now = timezone.now()
    with transaction.atomic():
        version = BotVersion.objects.select_related("bot").get(pk=entry.version_id)
        # A version that failed its check never played: it is not retired, it stays as it was.
        older = BotVersion.objects.filter(bot_id=version.bot_id, season_state__in=[
            BotVersion.ACTIVE, BotVersion.WAITING], pk__lt=version.pk).exclude(
            check_state=BotVersion.FAILED)
        for old in older.filter(season_state=BotVersion.ACTIVE):
            notify(version.bot.owner_id, f"{_label(old)} is retired: {_label(version)} takes "
                                         f"its place (its games stay on its row)", old.pk)
        older.update(season_state=BotVersion.RETIRED, retired_at=now)
        version.season_state, version.entered_at = BotVersion.ACTIVE, now
        version.save(update_fields=["season_state", "entered_at"])
        notify(version.bot.owner_id, f"{_label(version)} entered the season", version.pk)


HOUSE_REMOVED = "no longer a house bot of the season file"


def add_house_bots(specs: list[Path]) -> list[str]:
    """The house bots (owned by nobody) from their specs, each a version with its check queued
    like any upload's, unless the club has house bots already; their league names. A name a
    student's bot holds already is left out."""
    if Bot.objects.filter(house=True).exists():
        return []
    with transaction.atomic():
        named = [(spec, _house_name(spec)) for spec in specs]
        return [added for spec, name in named if name and (added := _add_house_bot(spec, name))]


def sync_house_bots(specs: list[Path]) -> tuple[list[str], list[str]]:
    """Make the club's house bots those the season file names (`specs`): one named anew is
    added (or, removed before, enabled with a new version), its check queued; one no longer
    named is disabled (its recorded games stay). (league names added, bot names removed)."""
    wanted: set[str] = set()
    added, removed = [], []
    with transaction.atomic():
        for spec in specs:
            name = _house_name(spec)
            if name is not None:
                wanted.add(name)
                league_name = _add_house_bot(spec, name)
                if league_name:
                    added.append(league_name)
        for bot in Bot.objects.filter(house=True, disabled=False).exclude(name__in=wanted):
            bot.disabled, bot.disabled_reason = True, HOUSE_REMOVED
            bot.save(update_fields=["disabled", "disabled_reason"])
            removed.append(bot.name)
    return added, removed


def house_bot_names(specs: list[Path]) -> set[str]:
    """The house bots' names of `specs` (the season file's `house_bots`); a spec that cannot
    be read names none (its notice was written when it was added)."""
    from referee.bots.spec import BotSpecError, load_spec

    names = set()
    for spec in specs:
        try:
            names.add(house_name(load_spec(spec).name))
        except (BotSpecError, OSError):
            continue
    return names


def _house_name(spec: Path) -> str | None:
    """A house bot's name from its spec (`house-NAME`); None, with a notice, for a spec that
    cannot be read."""
    from referee.bots.spec import BotSpecError, load_spec

    try:
        return house_name(load_spec(spec).name)
    except (BotSpecError, OSError) as exc:
        notify(None, f"house bot {spec} left out: its spec cannot be read: {exc}")
        return None


def _add_house_bot(spec: Path, name: str) -> str | None:
    """The house bot `name` from its spec, unless it plays already: a new bot, or a new
    version of one the season file named before; its league name (None: nothing added)."""
    bot = Bot.objects.filter(name=name).first()
    if bot is not None and not (bot.house and bot.disabled_reason == HOUSE_REMOVED):
        if not bot.house:
            notify(None, f"house bot {name} left out: a bot of that name exists")
        return None
    if bot is None:
        bot = Bot.objects.create(owner=None, house=True, name=name)
    else:   # named again: it comes back as a new version
        bot.disabled, bot.disabled_reason = False, ""
        bot.save(update_fields=["disabled", "disabled_reason"])
    number = bot.versions.count() + 1
    # The version's folder is the spec's own (absolute: DIR / it is it).
    version = BotVersion.objects.create(
        bot=bot, number=number, kind=BotVersion.FOLDER, archive_name=spec.name,
        archive_sha256="", archive_size=0, folder=str(spec.parent), spec=spec.name,
        league_name=f"{name}.v{number}")
    CheckRun.objects.create(version=version)
    return version.league_name


def to_disable() -> list[tuple[int, str, str]]:
    """Active or waiting versions of disabled bots or inactive owners: (version id, league
    name, why)."""
    found = []
    gone = BotVersion.objects.select_related("bot__owner").filter(
        Q(bot__disabled=True) | Q(bot__owner__is_active=False),
        season_state__in=[BotVersion.ACTIVE, BotVersion.WAITING])
    for version in gone:
        reason = version.bot.disabled_reason
        why = ((f"the bot is disabled: {reason}" if reason else "the bot is disabled")
               if version.bot.disabled else "its owner's account is disabled")
        found.append((version.pk, version.league_name, why))
    return found


def mark_disabled(version_id: int, why: str, was_active: bool, taken_out: bool = False) -> None:
    """A version leaves the season (its recorded games stay). `taken_out`: the runner took it
    out (the organiser may put it back), with room for the last forfeit's words in `why`."""
    with transaction.atomic():
        version = BotVersion.objects.select_related("bot").get(pk=version_id)
        version.season_state = BotVersion.DISABLED
        version.error = safe_line(why, limit=400 if taken_out else 200)
        version.taken_out = taken_out
        version.save(update_fields=["season_state", "error", "taken_out"])
        if was_active:
            notify(None, f"{_label(version)} left the season: {why}", version.pk)


def take_out(league_name: str, why: str) -> None:
    """The version named `league_name` leaves the season for `why`, told to its owner (on
    My bots and the bot's page, and in a notice; a house bot's owner is the organiser). A new
    upload of the bot, or the organiser's word (`put_back`), brings it back."""
    version = BotVersion.objects.filter(league_name=league_name).first()
    if version is not None and version.season_state != BotVersion.DISABLED:
        mark_disabled(version.pk, why, False, taken_out=True)
        notify_owner(league_name, why)


def names_by_league_name() -> dict[str, tuple[str, int, int | None]]:
    """league name -> (bot name, version number, owner id; None for a house bot) of every
    version."""
    return {v.league_name: (v.bot.name, v.number, v.bot.owner_id)
            for v in BotVersion.objects.select_related("bot")}


def house_checking(house: Collection[str]) -> bool:
    """True while the check of a house bot named `house` (a competition's) is queued or
    running: they enter the competition together, so no house bot starts with a backlog of
    catch-up games that a first student's would wait behind."""
    return BotVersion.objects.filter(bot__house=True, bot__name__in=house, check_state__in=[
        BotVersion.QUEUED, BotVersion.RUNNING]).exists()


def house_names() -> set[str]:
    """The league names of the house bots' versions."""
    return set(BotVersion.objects.filter(bot__house=True).values_list("league_name", flat=True))
STANDINGS_KEPT = 5   # pages read only the newest; a few older ones for the organiser's admin


def write_standing(games: int, data: dict, competition: int = Competition.FIRST) -> None:
    """A new snapshot of a competition's table (its leaderboard shows the newest); all but its
    newest STANDINGS_KEPT are removed, so a season's age costs no page anything. In the first
    competition each bot's rating history gains the standing's points in the same
    transaction."""
    with transaction.atomic():
        newest = Standing.objects.create(games=games, data=data, competition_id=competition)
        older = Standing.objects.filter(competition_id=competition).order_by("-pk")
        Standing.objects.filter(pk__in=list(older.values_list("pk", flat=True)
                                            [STANDINGS_KEPT:])).delete()
        if competition == Competition.FIRST:
            grow_histories(data.get("rows", []), newest.created_at.timestamp())


def grow_histories(rows: list[dict], when: float) -> None:
    """Append a standing's rows (`SeasonRow`s' JSON, each with its `bot` and `version`) to
    their bots' rating histories and draw their charts again; a bot whose rows rated no new
    games is left as it was."""
    by_bot: dict[str, list[tuple[int | None, Row]]] = {}
    for row in rows:
        if isinstance(row, dict) and isinstance(row.get("bot"), str):
            version = row.get("version")
            by_bot.setdefault(row["bot"], []).append(
                (version if isinstance(version, int) else None, SeasonRow.from_json(row).table))
    bots = Bot.objects.filter(name__in=list(by_bot)).select_related("history")
    for bot in bots:
        history = getattr(bot, "history", None) or RatingHistory(bot=bot, points=[])
        old = history.points if isinstance(history.points, list) else []
        points = grown(old, by_bot[bot.name], when)
        if points is not old:
            history.points, history.chart = points, rating_chart(points)
            history.save()


def set_report(path: str) -> None:
    """The closed season's static report is written at `path` (relative to DIR)."""
    Competition.first_row().update(report_path=path, closed_at=timezone.now())


def notify(user_id: int | None, text: str, version_id: int | None = None) -> None:
    """A notice for a student (or, with no user, for the organiser)."""
    Notice.objects.create(user_id=user_id, text=safe_line(text, limit=490), version_id=version_id)


def notify_owner(league_name: str, text: str) -> None:
    """A notice for the owner of the version named `league_name` in the season."""
    version = BotVersion.objects.select_related("bot").filter(league_name=league_name).first()
    if version is not None:
        notify(version.bot.owner_id, f"{_label(version)} {text}", version.pk)


def _label(version: BotVersion) -> str:
    return f"{version.bot.name} v{version.number}"


# ---------------------------------------------------------------------------- test games

@dataclass(frozen=True)
class TestRequest:
    """A test game to play: the requester's version and the opponents, specs by seat."""

    __test__ = False

    id: int
    requester_id: int
    seats: tuple[tuple[str, Path], ...]    # (league name, spec) per seat; the version first


def test_request(data: Path, game_id: int) -> TestRequest:
    """What the runner needs to play test game `game_id`, claimed from the job queue
    (referee.server.runner.jobqueue.claim)."""
    game = TestGame.objects.select_related("version__bot").get(pk=game_id)
    versions = [game.version, *game.opponents.select_related("bot").order_by("id")]
    return TestRequest(game.pk, game.requester_id,
                       tuple((v.league_name, spec_path(data, v)) for v in versions))


def finish_test_game(game_id: int, record_file: str, error: str) -> None:
    """A test game's end: its record file (relative to DIR), or why it could not be played."""
    with transaction.atomic():
        game = TestGame.objects.select_related("version__bot").get(pk=game_id)
        game.state = TestGame.FAILED if error else TestGame.DONE
        game.finished_at, game.record_file = timezone.now(), record_file
        game.error = safe_line(error, limit=300)
        game.save(update_fields=["state", "finished_at", "record_file", "error"])
        word = f"could not be played: {game.error}" if error else "is ready to watch"
        notify(game.requester_id, f"test game {game.pk} of {_label(game.version)} {word}",
               game.version_id)

