"""`referee replay`: a stored game played again with your bot in its seat (game/rerun.py)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, NoReturn

import click

from referee.cli.output import echo_fitted
from referee.present.text import safe_line

BAD_INPUT = 2   # as click's usage errors: the command could not run at all


def bad_input(message: str) -> NoReturn:
    """One line on stderr and exit status 2."""
    click.echo(f"error: {safe_line(message, limit=2000)}", err=True)
    raise click.exceptions.Exit(BAD_INPUT)


def read_game(source: str, token: str | None) -> dict[str, Any]:
    """The record's JSON from a file, or from the club's API for a game's address."""
    if source.startswith(("http://", "https://")):
        from referee.server.client import SubmitError, fetch_record

        if not token:
            bad_input("no token: pass --token or set REFEREE_TOKEN (make one on the server's "
                      "Tokens page)")
        try:
            return fetch_record(source, token)
        except SubmitError as exc:
            bad_input(str(exc))
    path = Path(source)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        bad_input(f"{source}: no such file (give a game record's JSON file or a game's address)")
    except (OSError, UnicodeDecodeError) as exc:
        bad_input(f"{source}: {exc}")
    except ValueError as exc:
        bad_input(f"{source}: not JSON ({exc})")
    if not isinstance(data, dict):
        bad_input(f"{source}: not a game record (a JSON object)")
    return data


@click.command("replay")
@click.argument("game", metavar="GAME.json|URL")
@click.argument("bot", metavar="BOT.toml|FOLDER", type=click.Path(path_type=Path))
@click.option("--seat", type=click.IntRange(min=0),
              help="The seat your bot takes (default: the seat the record gives your bot's "
                   "name, or one of its season versions NAME.vN).")
@click.option("--token", envvar="REFEREE_TOKEN", metavar="T",
              help="For a game's address: your personal token (the Tokens page; or "
                   "REFEREE_TOKEN).")
@click.option("--no-sandbox", is_flag=True,
              help="Run the bot unconfined (trusted local development only).")
def replay(game: str, bot: Path, seat: int | None, token: str | None, no_sandbox: bool) -> None:
    """Play a stored game again with your bot in its seat; stop where it does otherwise.

    GAME is a game record (JSON, as `referee match --replay` writes it or as a club's
    /api/games/N gives it) or a season game's address (its page, with --token). The game is
    rebuilt with the record's dice and notes, the other seats play their recorded moves, and
    your bot is asked at its seat's turns as the season asked it. Exit 0: every move the same;
    1: your bot deviated or failed (the move, what it saw, what the season recorded and what it
    did now are printed); 2: the game or the bot cannot be used. See docs/bots/submitting.md.
    """
    from referee.bots.errors import BotStartError
    from referee.bots.spec import BotSpecError, load_spec, spec_of_folder
    from referee.engine import GameRecord
    from referee.engine.errors import RecordError
    from referee.game.rerun import (
        RerunInputError,
        find_seat,
        replayable_decisions,
        report_lines,
        rerun,
    )

    data = read_game(game, token)
    try:
        record = GameRecord.from_json(data)
    except (RecordError, KeyError, TypeError, ValueError, AttributeError) as exc:
        detail = f"lacks {exc}" if isinstance(exc, KeyError) else str(exc)
        bad_input(f"{game}: not a game record that can be replayed: {detail}")
    try:
        spec = load_spec(spec_of_folder(bot) if bot.is_dir() else bot)
    except (BotSpecError, OSError) as exc:
        bad_input(str(exc))
    try:
        replayable_decisions(record)
        chosen = find_seat(record, spec.name, seat)
        result = asyncio.run(rerun(record, spec, chosen,
                                   sandbox=False if no_sandbox else None))
    except RerunInputError as exc:
        bad_input(f"{game}: {exc}")
    except BotStartError as exc:
        click.echo(f"failed: your bot could not start: {safe_line(str(exc), limit=2000)}",
                   err=True)
        raise click.exceptions.Exit(1) from None
    for line in report_lines(result):
        echo_fitted(line)
    if result.stop is not None:
        if result.output:
            click.echo("what your bot printed in this game:")
            for line in result.output.rstrip("\n").splitlines()[-20:]:
                echo_fitted("  " + safe_line(line, limit=2000))
        raise click.exceptions.Exit(1)
