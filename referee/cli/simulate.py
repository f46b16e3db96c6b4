"""`referee simulate`: in-process games between built-in policies, and per-seat statistics."""

from __future__ import annotations

import json
from pathlib import Path

import click

from referee.cli.params import RULES
from referee.engine import RuleSet


@click.command()
@click.option("--rules", "rules", type=RULES, default="classic", show_default=True,
              help="Rule preset, or a rules TOML file.")
@click.option("--players", type=int, default=None,
              help="Seats per game (default: the rule set's smallest).")
@click.option("--games", type=click.IntRange(min=1), default=1000, show_default=True)
@click.option("--seed", type=click.IntRange(0, 2**64 - 1), default=1, show_default=True)
@click.option("--policy", type=click.Choice(["random", "greedy"]), default="random",
              show_default=True, help="What every seat plays.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.option("--replay", type=click.Path(dir_okay=False, writable=True, path_type=Path),
              help="Write every game record to FILE as JSON Lines.")
def simulate(rules: RuleSet, players: int | None, games: int, seed: int, policy: str,
             as_json: bool, replay: Path | None) -> None:
    """Play in-process games between built-in policies and print per-seat statistics."""
    from referee.game.simulate import simulate as run_simulation

    players = players if players is not None else rules.min_players
    rules.check_players(players)
    if replay is not None:
        with replay.open("w", encoding="utf-8") as out:
            result = run_simulation(rules, players, games, seed, policy, out)
    else:
        result = run_simulation(rules, players, games, seed, policy)
    if as_json:
        click.echo(json.dumps(result.to_json(), indent=2))
        return
    click.echo(f"{games} games of {rules.preset!r}, {players} players, policy {policy}, "
               f"seed {seed}")
    click.echo(f"{'seat':>4}  {'win %':>7}  {'mean money':>12}  {'mean place':>10}")
    for stats in result.seats:
        data = stats.to_json(games)
        click.echo(f"{stats.seat:>4}  {100 * data['win_rate']:>6.2f}%  "
                   f"{data['mean_money']:>12,.0f}  {data['mean_place']:>10.3f}")
    if replay is not None:
        click.echo(f"records written to {replay}")
