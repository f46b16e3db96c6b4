"""`referee show`, `referee export` and `referee verify`: reading a league's stored games."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import click

from referee.cli import main


@main.command()
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
    from referee.report.records import league_records, pick_record

    if source.is_dir():
        if game is None:
            raise click.UsageError(f"{source} is a league folder: give GAME too (a schedule "
                                   f"index or a game id)")
        wanted: int | str = int(game) if game.isdigit() else game
        (stored,) = league_records(source, [wanted])
    else:
        stored = pick_record(source, game)
    if as_json:
        click.echo(json.dumps(stored.data, indent=1))
        return
    for line in narrate(stored.data):
        for part in fit(line):
            click.echo(part)


@main.command()
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
    from referee.report.records import league_records, parse_selection
    from referee.util.outdir import no_empty_folders

    wanted = parse_selection(selection) if selection is not None else None
    target = out or directory / "export"
    with no_empty_folders(target if target.suffix not in FILE_SUFFIXES else target.parent):
        count = export_records(league_records(directory, wanted), target)
    click.echo(f"{count} records written to {target}")


@main.command()
@click.argument("sources", nargs=-1, required=True, metavar="DIR|FILE...",
                type=click.Path(exists=True, path_type=Path))
def verify(sources: tuple[Path, ...]) -> None:
    """Replay records with the engine and report every event, score or standing that differs.

    DIR is a league directory (every stored game); FILE a record (JSON), JSON Lines or a JSON
    array of records. Exits with status 1 if any record differs from its replay or cannot be
    read.
    """
    from referee.report.records import records_from
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
