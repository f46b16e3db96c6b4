"""What a competition's loop reads and writes in the club's database: its book.

The season loop (seasonloop.SeasonLoop) plays one competition; which versions enter it, which
leave, its state and its report are kept differently by the two kinds of competition:

* the first competition (the club's season before there were several) keeps each version's
  place on the version itself (BotVersion.season_state), and every bot of the club plays in
  it: `FirstBook`, the runner's database layer of before (clubdb);
* another competition plays the bots entered in it (CompetitionEntry), each with its newest
  version that passed its check; which of them are active, retired or disabled there its
  own store keeps (referee.league.season): `EntryBook`.

Every method is synchronous ORM work, run on the runner's one database thread (`Db`).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from django.db.models import Q
from django.utils import timezone

from referee.league.stored import ACTIVE
from referee.server.club.models import Bot, BotVersion, Competition, CompetitionEntry
from referee.server.runner import clubdb
from referee.server.runner.clubdb import Entry
from referee.server.shared.clubfolder import ClubFolder


@dataclass(frozen=True)
class FirstBook:
    """The first competition's book: the versions' own season states (clubdb)."""

    id: int = Competition.FIRST
    name: str = "the season"

    def state(self) -> str:
        return clubdb.season_state()

    def waiting(self, data: Path, states: dict[str, str], house: Collection[str]
                ) -> list[Entry]:
        return clubdb.waiting_entries(data, house)

    def mark_entered(self, entry: Entry) -> None:
        clubdb.mark_entered(entry)

    def to_disable(self, states: dict[str, str]) -> list[tuple[int, str, str]]:
        return clubdb.to_disable()

    def mark_disabled(self, version_id: int, why: str, was_active: bool) -> None:
        clubdb.mark_disabled(version_id, why, was_active)

    def take_out(self, league_name: str, why: str) -> None:
        clubdb.take_out(league_name, why)

    def notify(self, text: str) -> None:
        """A notice for the organiser."""
        clubdb.notify(None, text)

    def notify_owner(self, league_name: str, text: str) -> None:
        clubdb.notify_owner(league_name, text)

    def report_written(self) -> bool:
        return bool(Competition.first().report_path)

    def set_report(self, data: Path) -> str:
        """Record the report written in the competition's folder; its path relative to DIR."""
        report = ClubFolder(data).season_report
        clubdb.set_report(report)
        return report


@dataclass(frozen=True)
class EntryBook:
    """Another competition's book: its entries, and its store's states of their versions."""

    id: int
    name: str
    folder: str   # relative to DIR

    def state(self) -> str:
        found = Competition.objects.filter(pk=self.id).values_list("state", flat=True).first()
        return found or Competition.CLOSED   # a competition deleted in the admin plays nothing

    def waiting(self, data: Path, states: dict[str, str], house: Collection[str] = ()
                ) -> list[Entry]:
        """Each entered bot's newest version that passed its check, where it is not in the
        competition yet (oldest first): it enters, retiring the bot's versions active there.
        Bots that may not play (disabled, or their owner's account) are left out."""
        entries = []
        bots = (Bot.objects.filter(entries__competition_id=self.id, disabled=False)
                .filter(Q(owner__is_active=True) | Q(house=True)))
        for bot in bots:
            newest = (bot.versions.filter(check_state=BotVersion.PASSED).order_by("-number")
                      .first())
            if newest is None or newest.league_name in states:
                continue
            older = tuple(v.league_name for v in bot.versions.exclude(pk=newest.pk)
                          if states.get(v.league_name) == ACTIVE)
            entries.append(Entry(newest.pk, newest.league_name,
                                 clubdb.spec_path(data, newest), older))
        return sorted(entries, key=lambda entry: entry.version_id)

    def mark_entered(self, entry: Entry) -> None:
        self.notify_owner(entry.league_name, "entered")

    def to_disable(self, states: dict[str, str]) -> list[tuple[int, str, str]]:
        """The versions active here whose bot may no longer play here: withdrawn, disabled,
        or its owner's account disabled: (version id, league name, why)."""
        active = [name for name, state in states.items() if state == ACTIVE]
        entered = set(CompetitionEntry.objects.filter(competition_id=self.id)
                      .values_list("bot_id", flat=True))
        found = []
        for version in BotVersion.objects.select_related("bot__owner").filter(
                league_name__in=active):
            bot = version.bot
            if bot.disabled:
                why = f"the bot is disabled: {bot.disabled_reason}" if bot.disabled_reason \
                    else "the bot is disabled"
            elif bot.owner is not None and not bot.owner.is_active:
                why = "its owner's account is disabled"
            elif bot.pk not in entered:
                why = f"withdrawn from {self.name}"
            else:
                continue
            found.append((version.pk, version.league_name, why))
        return found

    def mark_disabled(self, version_id: int, why: str, was_active: bool) -> None:
        if was_active:
            version = BotVersion.objects.select_related("bot").get(pk=version_id)
            self.notify(f"{version.bot.name} v{version.number} left {self.name}: {why}")

    def take_out(self, league_name: str, why: str) -> None:
        self.notify_owner(league_name, why.replace("the season", self.name))

    def notify(self, text: str) -> None:
        clubdb.notify(None, f"{self.name}: {text}")

    def notify_owner(self, league_name: str, text: str) -> None:
        clubdb.notify_owner(league_name, f"{text} ({self.name})")

    def report_written(self) -> bool:
        return bool(Competition.objects.filter(pk=self.id).exclude(report_path="").exists())

    def set_report(self, data: Path) -> str:
        report = ClubFolder.competition_report(self.folder)
        Competition.objects.filter(pk=self.id).update(report_path=report,
                                                      closed_at=timezone.now())
        return report


Book = FirstBook | EntryBook


def open_books(data: Path) -> list[EntryBook]:
    """The books of the competitions other than the first that are not closed, or closed
    without their report yet after games (their loop writes it): one closed before its
    first game has nothing to write."""
    from referee.league.store import games_stored

    rows = (Competition.objects.exclude(pk=Competition.FIRST)
            .filter(Q(state__in=[Competition.RUNNING, Competition.PAUSED]) | Q(report_path=""))
            .order_by("pk"))
    return [EntryBook(row.pk, row.name, row.folder) for row in rows
            if row.state != Competition.CLOSED
            or games_stored(ClubFolder(data).competition_league(row.folder).store_path)]


def competition_table(competition: int) -> dict:
    """A competition's own settings (a season file's table of its keys)."""
    settings = Competition.objects.get(pk=competition).settings
    return settings if isinstance(settings, dict) else {}


def enter_house_bots(competition: int, specs: list[Path]) -> list[str]:
    """The competition's house bots entered in it: a house bot the club has not yet is added
    (its check queued, as the season file's are); the league names of those added."""
    added = []
    for spec in specs:
        name = clubdb._house_name(spec)
        if name is None:
            continue
        league_name = clubdb._add_house_bot(spec, name)
        if league_name:
            added.append(league_name)
        bot = Bot.objects.filter(name=name, house=True).first()
        if bot is not None:
            CompetitionEntry.objects.get_or_create(competition_id=competition, bot=bot)
    return added
