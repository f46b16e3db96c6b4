"""`referee play`: a person plays a game against bots in the terminal (referee/game/human.py)."""

from __future__ import annotations

from pathlib import Path

import click

from referee.cli.errors import interrupted
from referee.cli.output import echo_fitted
from referee.cli.params import RULES, SECRET, check_writable
from referee.engine import GameRecord, RuleSet
from referee.util.resources import sample_bots

SAMPLE_OPPONENTS = ("greedy.toml", "random.toml")   # in sample_bots/, cycled over the seats


def default_opponents() -> list[Path]:
    """The sample bots (the checkout's, or the installed wheel's), as `referee check` finds
    them."""
    folder = sample_bots()
    found = [folder / name for name in SAMPLE_OPPONENTS if (folder / name).is_file()]
    if not found:
        raise click.UsageError("no sample bots here: give the opponents' BOT.toml files")
    return found


@click.command()
@click.argument("bots", nargs=-1, metavar="[BOT.toml...]")
@click.option("--players", type=click.IntRange(2, 8), default=None,
              help="Seats in the game, yours included (default: you and one per bot).")
@click.option("--seat", type=click.IntRange(min=0), default=0, show_default=True,
              help="Your seat (0 plays first in round 1).")
@click.option("--name", default="you", show_default=True,
              help="Your name in the game and its record.")
@click.option("--rules", "rules", type=RULES, default="classic", show_default=True,
              help="Rule preset, or a rules TOML file.")
@click.option("--seed", type=SECRET,
              help="The game's secret seed (default: drawn at random and printed).")
@click.option("--replay", type=click.Path(dir_okay=False, path_type=Path),
              help="Where to save the game's record (default play-GAMEID.json here).")
@click.option("--html", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write the game as one HTML page with the replay viewer.")
@click.option("--no-sandbox", is_flag=True,
              help="Run the bots unconfined (trusted local development only).")
def play(bots: tuple[str, ...], players: int | None, seat: int, name: str, rules: RuleSet,
         seed: int | None, replay: Path | None, html: Path | None, no_sandbox: bool) -> None:
    """Play a game yourself against bots (the sample bots by default), in the terminal.

    Your seat is served to the referee as a bot like any other, with its own limits (5 min a
    move, 30 min bank); the other seats' moves and every payout are shown as they happen.
    The record is saved even when you stop with Ctrl-C; open it with `referee show FILE`.
    """
    from referee.bots.spec import NAME_PATTERN, load_spec
    from referee.game.human import Interrupted, PlaySession
    from referee.util.seeds import draw_secret

    if not NAME_PATTERN.match(name):
        raise click.BadParameter("letters, digits, '.', '_' or '-', at most 64",
                                 param_hint="--name")
    paths = [Path(bot) for bot in bots] or default_opponents()
    specs = [load_spec(path) for path in paths]
    if name in {spec.name for spec in specs}:
        raise click.BadParameter(f"{name!r} is a bot's name here", param_hint="--name")
    # By default one seat per bot besides yours, within what the rule set allows.
    players = players or min(max(len(specs) + 1, rules.min_players), rules.max_players)
    rules.check_players(players)
    if seat >= players:
        raise click.BadParameter(f"{seat} is not a seat of {players} (0-{players - 1})",
                                 param_hint="--seat")
    opponents = [specs[i % len(specs)] for i in range(players - 1)]
    drawn = seed is None
    seed = draw_secret() if seed is None else seed
    session = PlaySession(rules=rules, opponents=opponents, seed=seed, seat=seat, name=name,
                          read=input, write=echo_fitted,
                          sandbox=False if no_sandbox else None)
    replay = replay or Path(f"play-{session.game_id}.json")
    check_writable(replay, "--replay")
    if html is not None:
        check_writable(html, "--html")
    click.echo(f"{rules.preset}, {players} seats: " + ", ".join(
        f"{n} (seat {s})" for s, n in enumerate(session.names())))
    try:
        record = session.run().record
    except Interrupted as stop:
        save(stop.record, replay, html)
        click.echo("", err=True)   # off the line of the question (or the terminal's ^C)
        said = f"{stop}: the game so far ({len(stop.record.actions())} moves) is saved in {replay}"
        if stop.by_ctrl_c:
            interrupted(said)
        raise click.ClickException(said) from None
    save(record, replay, html)
    if drawn:
        click.echo(f"seed {seed} (give --seed {seed} to play this game again)")
    click.echo(f"record saved in {replay} (referee show {replay})")


def save(record: GameRecord, replay: Path, html: Path | None) -> None:
    """Write the record to `replay` and, with `html`, the viewer's page of it there."""
    from referee.game.human import save_record

    save_record(record, replay)
    if html is not None:
        from referee.report.site import single_game_html

        html.write_text(single_game_html(record.to_json()), encoding="utf-8")
