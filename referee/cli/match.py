"""`referee match`: one game between bots, told turn by turn."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from referee.cli.output import echo_fitted
from referee.cli.params import RULES, SECRET, check_writable
from referee.engine import RuleSet


@click.command()
@click.argument("bots", nargs=-1, required=True, metavar="BOT.toml...")
@click.option("--rules", "rules", type=RULES, default="classic", show_default=True,
              help="Rule preset, or a rules TOML file.")
@click.option("--seed", type=SECRET,
              help="The game's secret seed (default: drawn at random and printed).")
@click.option("--replay", type=click.Path(dir_okay=False, writable=True, path_type=Path),
              help="Write the game record (with latencies and strikes) to FILE as JSON.")
@click.option("--json", "as_json", is_flag=True, help="Print events as JSON lines.")
@click.option("--autoplay-forced", is_flag=True, help="Do not ask a bot with one legal choice.")
@click.option("--no-sandbox", is_flag=True,
              help="Run bots unconfined (trusted local development only).")
@click.option("--html", type=click.Path(dir_okay=False, writable=True, path_type=Path),
              help="Write the game as one self-contained HTML page with a replay viewer.")
@click.option("--verbose", "-v", is_flag=True,
              help="Show each decision's think time and note, and the dice before scoring.")
def match(bots: tuple[str, ...], rules: RuleSet, seed: int | None, replay: Path | None,
          as_json: bool, autoplay_forced: bool, no_sandbox: bool, html: Path | None,
          verbose: bool) -> None:
    """Play one game between BOT.toml files (seat order as given) and show it turn by turn.

    With --verbose it prints what `referee show` prints of a stored game.
    """
    from referee.bots.spec import load_spec
    from referee.engine.record import event_to_dict
    from referee.game.match import MatchOptions
    from referee.game.single import run_match
    from referee.present.render import Narrator, fit, printable
    from referee.util.seeds import draw_secret, weak_secret_warning

    if replay is not None:
        check_writable(replay, "--replay")
    if html is not None:
        check_writable(html, "--html")
    drawn = seed is None
    if seed is None:
        seed = draw_secret()
    elif warning := weak_secret_warning(seed):
        click.echo(warning, err=True)
    specs = [load_spec(path) for path in bots]
    narrator = Narrator([spec.name for spec in specs], details=verbose, rules=rules)

    def show(game: Any, events: list[tuple], decision: dict[str, Any] | None) -> None:
        for event in events:
            note = decision if event[0] == "place" else None
            if as_json:
                data = event_to_dict(event)
                if note:
                    data["decision"] = note
                click.echo(json.dumps(data))
            else:
                for line in narrator.lines(event, note):
                    for part in fit(printable(line)):
                        click.echo(part)

    result = run_match(specs, rules, seed, observer=show, replay=replay,
                       sandbox=False if no_sandbox else None,
                       options=MatchOptions(autoplay_forced=autoplay_forced))
    if html is not None:
        from referee.report.site import single_game_html

        html.write_text(single_game_html(result.record.to_json()), encoding="utf-8")
    if drawn:
        echo_fitted(f"seed {seed} (give --seed {seed} to play this game again)", err=True)
    if as_json:
        return
    for seat in result.seats:
        latencies = sorted(seat.latencies_us)
        median = latencies[len(latencies) // 2] / 1000 if latencies else 0.0
        strikes = ", ".join(f"{k} {v}" for k, v in seat.strikes.items() if v) or "none"
        status = f"; forfeited: {seat.reason}" if seat.forfeited else ""
        echo_fitted(printable(f"  {seat.bot}: {len(latencies)} decisions, median "
                              f"{median:.2f} ms, strikes: {strikes}{status}"))
    if replay is not None:
        click.echo(f"record written to {replay}")
    if html is not None:
        click.echo(f"replay page written to {html}")
