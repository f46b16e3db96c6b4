"""A league's games for people: told move by move (`referee show`), as they are played
(`referee watch`, `referee league --watch`), exported as records (`referee export`) and
checked against the rules (`referee verify`)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import click

from referee.util.numbers import is_whole


@click.command()
@click.argument("source", metavar="DIR|FILE", type=click.Path(exists=True, path_type=Path))
@click.argument("game", metavar="[GAME]", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print the game's record as JSON.")
def show(source: Path, game: str | None, as_json: bool) -> None:
    """Tell a game move by move, with think times and notes.

    DIR is a league folder and GAME a schedule index (3) or a game id (g3f9c0a1b2c3d4e5f).
    FILE is a record that `referee match --replay` or `export` wrote (JSON, JSON Lines or a
    JSON array) and GAME a record's number there (1 for the first) or its id; a file of one
    record needs no GAME.
    """
    from referee.present.render import fit
    from referee.report.narrate import narrate
    from referee.report.record_sources import league_records, pick_record

    if source.is_dir():
        if game is None:
            raise click.UsageError(f"{source} is a league folder: give GAME too (a schedule "
                                   f"index or a game id)")
        wanted: int | str = int(game) if is_whole(game) else game
        (stored,) = league_records(source, [wanted])
    else:
        stored = pick_record(source, game)
    if as_json:
        click.echo(json.dumps(stored.data, indent=1))
        return
    for line in narrate(stored.data):
        for part in fit(line):
            click.echo(part)


@click.command()
@click.argument("directory", metavar="DIR", type=click.Path(file_okay=False, path_type=Path))
@click.option("--games", type=click.IntRange(min=1),
              help="Stop after watching this many games (default: until Ctrl-C).")
def watch(directory: Path, games: int | None) -> None:
    """Watch the games of a running league in DIR as they are played, one after another,
    told as `referee show` tells them. Games played on a cluster's workers cannot be watched.
    """
    from referee.league.folder import LeagueFolder

    if not LeagueFolder(directory).store_path.exists():
        raise click.UsageError(f"{directory}: not a league folder (no league store there)")
    watch_games(directory, games)


def watch_games(directory: Path, games: int | None = None,
                stop: threading.Event | None = None, every: bool = False) -> None:
    """Tell the games of the league in `directory` as they are played, one after another:
    `games` of them, or until `stop` is set (`referee watch`, `referee league --watch`).

    With `every` (the league's own watcher) no game of this run goes untold: a game that was
    played while another was told, or too quickly to be caught in play, is told from its
    stored record, and when `stop` is set the games stored since are told before it returns.
    Games stored before the watcher started (a resumed league's) are not told again."""
    import time

    from referee.game.livefile import games_in_play
    from referee.league.folder import LeagueFolder
    from referee.present.render import fit

    def echo(lines: Iterator[str] | list[str]) -> None:
        for line in lines:
            for part in fit(line):
                click.echo(part)

    folder = LeagueFolder(directory)
    told: set[str] = set()   # the game ids told, live or from their records
    known = _stored_indexes(folder.store_path) if every else set()
    watched, waiting = 0, False
    while games is None or watched < games:
        stopping = stop is not None and stop.is_set()
        playing = [path for path in games_in_play(folder.live) if path.stem not in told]
        if playing and not stopping:
            waiting = False
            told.add(playing[0].stem)
            echo(_watch_game(playing[0], directory))
            watched += 1
            continue
        missed = _missed_games(folder.store_path, known, told) if every else []
        for data in missed:
            echo(_missed_game(data, directory))
            watched += 1
        if stopping:
            return
        if not missed and not waiting:
            click.echo(f"waiting for a game to start in {directory} (Ctrl-C to stop)")
            waiting = True
        time.sleep(0.2)


def _stored_indexes(store_path: Path) -> set[int]:
    """The indexes of the games the league store at `store_path` holds (none if no store)."""
    from referee.league.store import LeagueStore

    store = LeagueStore.open_made(store_path)
    if store is None:
        return set()
    try:
        return store.done()
    finally:
        store.close()


def _missed_games(store_path: Path, known: set[int], told: set[str]) -> list[dict]:
    """The records of the games stored since `known` (which it extends) that were not told
    live (their ids not in `told`, which it extends), in schedule order."""
    from referee.league.store import LeagueStore

    store = LeagueStore.open_made(store_path)
    if store is None:
        return []
    try:
        new = sorted(store.done() - known)
        records = [(index, store.record(index)) for index in new]
    finally:
        store.close()
    known.update(new)
    missed = []
    for _, data in records:
        if data is not None and str(data.get("game_id")) not in told:
            told.add(str(data.get("game_id")))
            missed.append(data)
    return missed


def _missed_game(data: dict, directory: Path) -> list[str]:
    """The lines that tell a game from its stored record, said to be so (it ended before the
    watcher could follow it live)."""
    from referee.present.render import printable
    from referee.report.narrate import narrate

    game_id = data.get("game_id", "?")
    return [printable(f"Game {game_id} ended before it could be followed live; "
                      f"told from its record:"),
            *narrate(data),
            f"game {game_id} ended; its record: referee show {directory} {game_id}"]


def watching_in_thread(directory: Path) -> Callable[[], None]:
    """Start telling the league's games as `referee watch` does, in a thread beside the
    league, every game of this run (see `watch_games`); the function that stops it, which
    returns once the games stored by then are told."""
    stop = threading.Event()
    thread = threading.Thread(target=watch_games, args=(directory, None, stop, True),
                              name="league-watch", daemon=True)
    thread.start()

    def stopper() -> None:
        stop.set()
        thread.join(timeout=60)

    return stopper


def _watch_game(path: Path, directory: Path) -> Iterator[str]:
    """The lines that tell the game of live file `path` as it is played."""
    from referee.engine import RuleSet
    from referee.engine.record import event_from_dict
    from referee.game.livefile import follow
    from referee.present.render import Narrator, printable

    narrator: Narrator | None = None
    game_id = path.stem
    for step in follow(path):
        if narrator is None:   # the header
            rules = RuleSet.from_dict(step["rules"])
            names = [str(name) for name in step["bots"]]
            narrator = Narrator(names, details=True, rules=rules)
            yield printable(f"Game {game_id} (live): {rules.preset}, {len(names)} seats")
        elif step.get("end"):
            how = "ended" if step.get("finished") else "was stopped"
            yield f"game {game_id} {how}; its record: referee show {directory} {game_id}"
            return
        else:
            for event in step["events"]:
                event = event_from_dict(event)
                note = step.get("decision") if event[0] == "place" else None
                yield from (printable(line) for line in narrator.lines(event, note))
    yield f"game {game_id}: its live file ended early (the league was stopped?)"


@click.command()
@click.argument("directory", metavar="DIR", type=click.Path(file_okay=False, path_type=Path))
@click.option("--out", type=click.Path(path_type=Path),
              help="A FILE.jsonl (a record per line), a FILE.json (a JSON array of records) or "
                   "a directory (one JSON file per game; default DIR/export).")
@click.option("--games", "selection", metavar="SELECTION",
              help="Games to export: indexes, ranges and ids, e.g. 0-9,12,g3f9c0a1b2c3d4e5f "
                   "(default all).")
def export(directory: Path, out: Path | None, selection: str | None) -> None:
    """Write a league's game records as JSON files, JSON Lines or a JSON array
    (docs/replay-format.md)."""
    from referee.report.export import FILE_SUFFIXES, export_records
    from referee.report.record_sources import league_records, parse_selection
    from referee.util.outdir import no_empty_folders

    wanted = parse_selection(selection) if selection is not None else None
    target = out or directory / "export"
    with no_empty_folders(target if target.suffix not in FILE_SUFFIXES else target.parent):
        count = export_records(league_records(directory, wanted), target)
    click.echo(f"{count} records written to {target}")


@click.command()
@click.argument("sources", nargs=-1, required=True, metavar="DIR|FILE...",
                type=click.Path(exists=True, path_type=Path))
def verify(sources: tuple[Path, ...]) -> None:
    """Replay records with the engine and report every event, score or standing that differs.

    DIR is a league directory (every stored game); FILE a record (JSON), JSON Lines or a JSON
    array of records. Exits with status 1 if any record differs from its replay or cannot be
    read.
    """
    from referee.report.record_sources import records_from
    from referee.report.verify import differences

    checked = failed = 0
    for source in sources:
        for stored in records_from(source):
            checked += 1
            try:
                found: Sequence[object] = differences(stored)
            except (ValueError, KeyError, TypeError) as exc:
                found = [f"not a valid record: {exc}"]
            if found:
                failed += 1
                click.echo(f"{stored.source}: {len(found)} difference(s)")
                for difference in found:
                    click.echo(f"  {difference}")
    click.echo(f"{checked} records checked, {checked - failed} match their replay"
               + (f", {failed} differ" if failed else ""))
    if failed or not checked:
        raise click.exceptions.Exit(1)
