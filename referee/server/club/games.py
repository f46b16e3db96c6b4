"""The season's games and test games as pages show them, read-only from the records.

A game record holds every seat's output (stdout and stderr) and the notes its bot sent with its
decisions (`note`, `values`, `note_cut`); before a record reaches a student the output and the
notes of every seat that is not one of their own bots are removed: both are the bot's own
business, what its author chose to print or explain. The moves, timings and strikes stay: they
are the game. The organiser sees all.
"""

from __future__ import annotations

import contextlib
import copy
import json
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User

from referee.league.folder import LeagueFolder
from referee.league.store import LeagueStore
from referee.server.club.board import league_bot
from referee.server.club.models import BotVersion, TestGame
from referee.server.club.people import is_organiser
from referee.server.pool import Pool
from referee.server.shared.clubfolder import ClubFolder

HIDDEN = ""   # the viewer shows no output box for an empty string
NOTE_KEYS = ("note", "values", "note_cut")   # a decision's notes (see record_notes)


def season_folder() -> LeagueFolder:
    """The season's league folder in the club's data folder."""
    return ClubFolder.of_django().season_league


def season_db() -> Path:
    """The season's store."""
    return season_folder().store_path


STORES: Pool[LeagueStore] = Pool(LeagueStore.close)   # idle read-only season stores


@contextlib.contextmanager
def season_store() -> Iterator[LeagueStore | None]:
    """The season's league store, opened read-only; None before the first game is stored.

    A store is taken from this process's pool and given back after use (opening one costs more
    than most pages' reads, and each request runs in a thread of its own); the pool drops its
    stores when the file may be another one (a new season's). A read-only connection in
    autocommit mode sees every game the runner has committed."""
    path = season_db()
    store = STORES.take(str(path)) or LeagueStore.open_made(path)
    if store is None:
        yield None
        return
    healthy = True
    try:
        yield store
    except sqlite3.Error:
        healthy = False   # the next request opens its own
        raise
    finally:
        if healthy:
            STORES.give(str(path), store)
        else:
            store.close()


def own_names(user: User, names: list[str]) -> set[str]:
    """Which of these league names (`bot.vN`) are versions of the user's bots."""
    return set(BotVersion.objects.filter(league_name__in=names, bot__owner=user)
               .values_list("league_name", flat=True))


def visible_record(user: User, record: dict[str, Any], seat_names: list[str]) -> dict[str, Any]:
    """The record as `user` may see it: other students' seats' output and notes removed."""
    if is_organiser(user):
        return record
    mine = own_names(user, seat_names)
    own_seats = {i for i, name in enumerate(seat_names) if name in mine}
    shown = copy.copy(record)
    output = record.get("output")
    if isinstance(output, list):
        shown["output"] = [text if i in own_seats else HIDDEN for i, text in enumerate(output)]
    decisions = record.get("decisions")
    if isinstance(decisions, list):
        shown["decisions"] = [_without_notes(entry, own_seats) for entry in decisions]
    return shown


def _without_notes(decision: Any, own_seats: set[int]) -> Any:
    """A decision entry without its notes unless its seat is one of `own_seats`."""
    if not isinstance(decision, dict):
        return decision
    seat = decision.get("seat")
    if isinstance(seat, int) and seat in own_seats:
        return decision
    return {key: value for key, value in decision.items() if key not in NOTE_KEYS}


def record_seat_names(record: dict[str, Any]) -> list[str]:
    """Seat names as a record gives them (its `bots` list, in seat order)."""
    return [str(bot.get("name", "")) if isinstance(bot, dict) else ""
            for bot in record.get("bots", [])]


def game_result(record: dict[str, Any]) -> tuple[list[dict[str, Any]], list[str]] | None:
    """A finished game's end as its player reads it: its seats in place order (seat, name,
    place, money, notes, forfeited) and what decided the places (R26: the most money, equal
    money by the most notes, equal both a shared place; a forfeit last); None without an end."""
    end = next((event for event in reversed(record.get("events") or [])
                if isinstance(event, dict) and event.get("type") == "end"), None)
    if end is None:
        return None
    names = record_seat_names(record)
    forfeits = record.get("forfeits") or []
    rows = [{"seat": seat, "name": names[seat] if seat < len(names) else f"seat {seat}",
             "place": place, "money": end["money"][seat], "notes": end["notes"][seat],
             "forfeited": bool(forfeits[seat]) if seat < len(forfeits) else False}
            for seat, place in enumerate(end["places"])]
    rows.sort(key=lambda row: (row["place"], row["seat"]))
    decided = []
    for ahead, behind in zip(rows, rows[1:], strict=False):
        if ahead["place"] == behind["place"]:
            decided.append(f"{ahead['name']} and {behind['name']} share place {ahead['place']}: "
                           f"equal money and equal notes")
        elif behind["forfeited"] and not ahead["forfeited"]:
            decided.append(f"{behind['name']} forfeited: placed after every seat that did not")
        elif ahead["money"] == behind["money"]:
            decided.append(f"{ahead['name']} ahead of {behind['name']} on notes "
                           f"({ahead['notes']} to {behind['notes']}), the money being equal")
    if not decided and len(rows) > 1:
        decided.append("the most money won")
    return rows, decided


def season_game(index: int) -> tuple[dict[str, Any], list[str]] | None:
    """A season game's record and its seats' league names, or None if it is not recorded."""
    with season_store() as store:
        if store is None:
            return None
        row = store.db.execute("SELECT bots FROM games WHERE idx = ?", (index,)).fetchone()
        record = store.record(index)
    if row is None or record is None:
        return None
    return record, json.loads(row[0])


def test_game_record(game: TestGame) -> dict[str, Any] | None:
    """The record of a finished test game (DIR/testgames/<id>.json), or None."""
    return record_file(game.record_file)


def record_file(relative: str) -> dict[str, Any] | None:
    """The record the runner wrote at `relative` (to DIR), or None: none yet, or a path
    that leads out of the data folder."""
    if not relative:
        return None
    root = Path(settings.DATA_DIR).resolve()
    path = (root / relative).resolve()
    if not path.is_relative_to(root) or not path.is_file():
        return None
    data = json.loads(path.read_text())
    return data if isinstance(data, dict) else None


@dataclass(frozen=True)
class Seats:
    """What a game's page shows of its seats, from one query: the table's rows (seat, name,
    bot, house, owner (a username, "" for a house bot), place), each seat's output that
    `user` may see (their own bots' seats; every seat for the organiser; the text empty for
    a bot that printed nothing), and whether other seats' output is someone else's (so the
    page can tell "printed nothing" from "not yours to see")."""

    rows: list[dict[str, Any]]
    outputs: list[tuple[str, str]]
    others_hidden: bool


def seats(user: User, record: dict[str, Any], seat_names: list[str]) -> Seats:
    """The seats of a game `record` as `user` may see them (see `Seats`)."""
    known = {name: (house, owner, username) for name, house, owner, username in
             BotVersion.objects.filter(league_name__in=seat_names).values_list(
                 "league_name", "bot__house", "bot__owner_id", "bot__owner__username")}
    everyone = is_organiser(user)
    places = record.get("places") or []
    output = record.get("output")
    output = output if isinstance(output, list) else []
    rows, outputs = [], []
    for i, name in enumerate(seat_names):
        house, owner, username = known.get(name, (False, None, None))
        rows.append({"seat": i, "name": name, "bot": league_bot(name), "house": house,
                     "owner": "" if house else username or "",
                     "place": places[i] if i < len(places) else None})
        if everyone or (owner is not None and owner == user.pk):
            text = output[i] if i < len(output) and isinstance(output[i], str) else ""
            outputs.append((name, text))
    return Seats(rows, outputs, len(outputs) < len(seat_names))


def recent_games(names: list[str], want: str = "", limit: int = 50,
                 before: int | None = None) -> list[dict[str, Any]]:
    """The newest season games of these league names (with an index below `before`, if
    given); `want` "losses" (not first) or "strikes" (any strike) keeps only those. Each
    game gains `seat` and `place` of the (first) seat of these names, `struck` (its strike
    count) and `marks`: (move, kind) of its strikes and forfeit (LeagueStore.strikes_in)."""
    wanted = set(names)

    def mine(game: dict[str, Any]) -> int:
        return next(i for i, name in enumerate(game["bots"]) if name in wanted)

    def keep(game: dict[str, Any]) -> bool:
        seat = mine(game)
        if want == "losses":
            return game["places"][seat] != 1
        if want == "strikes":
            return sum(game["strikes"][seat].values()) > 0
        return True

    with season_store() as store:
        games = [] if store is None else store.games_of(names, limit=limit, keep=keep,
                                                          before=before)
        for game in games:
            seat = mine(game)
            game.update(seat=seat, place=game["places"][seat],
                        struck=sum(game["strikes"][seat].values()),
                        finished=f"{game['finished_at']:.0f}")   # as text: no filter per row
        # Marks only of the games it struck or forfeited in (most games have none).
        marks = {} if store is None else store.strikes_in(
            [g["index"] for g in games if g["struck"] or g["forfeited"][g["seat"]]])
    for game in games:
        game["marks"] = [(move, kind) for at, move, kind in marks.get(game["index"], ())
                         if at == game["seat"]]
    return games


def version_spans(names: list[str]) -> dict[str, tuple[int, int]]:
    """League name -> (first, last) season game of each of these versions that played."""
    with season_store() as store:
        return {} if store is None else store.spans(names)
