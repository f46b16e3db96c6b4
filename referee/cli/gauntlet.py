"""`referee gauntlet`: is a candidate better than its baseline, by a sequential test."""

from __future__ import annotations

from pathlib import Path

import click

from referee.cli.params import RULES, SECRET, players_option
from referee.league.folder import GAUNTLET_RESULT_NAME, GAUNTLET_STORE_NAME, LeagueFolder
from referee.present.render import fit


@click.command()
@click.argument("candidate", metavar="CANDIDATE.toml", required=False,
                type=click.Path(dir_okay=False, path_type=Path))
@click.argument("more_field", nargs=-1, metavar="[FIELD.toml...]")
@click.option("--baseline", metavar="OLD.toml", type=click.Path(dir_okay=False, path_type=Path),
              help="The bot the candidate must beat (may be the same spec).")
@click.option("--field", "field_bots", multiple=True, metavar="BOT.toml",
              help="Opponents (spec files or globs; repeatable; more may follow as arguments).")
@click.option("--players", callback=players_option,
              help="Table size, or a range like 3-5 (default 4, or fewer bots).")
@click.option("--rules", "rules", type=RULES, default="classic", show_default=True,
              help="Rule preset or rules TOML.")
@click.option("--seed", type=SECRET,
              help="The secret seed (default: drawn at random and stored).")
@click.option("--delta", type=click.FloatRange(0, 1000, min_open=True), default=50,
              show_default=True,
              help="Smallest gain worth detecting, in Elo of the league table (the gauntlet "
                   "says what that is at the tables it plays).")
@click.option("--alpha", type=click.FloatRange(0, 0.5, min_open=True, max_open=True),
              default=0.05, show_default=True,
              help="Chance of calling an equal bot better (at 0.05 the test decides at "
                   "0.035; measured 153 of 5200 simulated gauntlets, 0.029, over table mixes "
                   "and fields spread up to +-300 Elo; docs/ratings.md).")
@click.option("--beta", type=click.FloatRange(0, 0.5, min_open=True, max_open=True),
              default=0.05, show_default=True,
              help="Chance of missing a gain of --delta (measured at 0.05: called not better "
                   "at most 13 of 400 simulated candidates 50 Elo better, 0.033, at each table "
                   "mix and on fields spread up to +-300 Elo).")
@click.option("--max-games", type=click.IntRange(min=2), default=4000, show_default=True,
              help="Game budget (candidate and baseline games together).")
@click.option("--concurrency", "-j", type=click.IntRange(min=1), help="Games in flight.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              default="gauntlet-out", show_default=True,
              help=f"Directory for {GAUNTLET_STORE_NAME} and {GAUNTLET_RESULT_NAME}.")
@click.option("--resume", is_flag=True, help="Continue an interrupted gauntlet in --out.")
@click.option("--quiet", "-q", is_flag=True, help="Only the verdict.")
@click.option("--no-sandbox", is_flag=True,
              help="Run bots unconfined (trusted local development only).")
@click.option("--cluster", metavar="ADDRESS",
              help="Play the games on a dask cluster: a scheduler address (tcp://HOST:8786) "
                   "or local:N for N worker processes here (docs/cluster.md).")
def gauntlet(candidate: Path | None, more_field: tuple[str, ...], baseline: Path | None,
             field_bots: tuple[str, ...], players: tuple[int, int] | None, rules,
             seed: int | None,
             delta: float, alpha: float, beta: float, max_games: int,
             concurrency: int | None, out: Path, resume: bool, quiet: bool,
             no_sandbox: bool, cluster: str | None) -> None:
    """Play CANDIDATE.toml and --baseline at identical tables against --field and decide, by a
    sequential test, whether the candidate is better.

    \b
    referee gauntlet new.toml --baseline old.toml --field bots/*.toml
    referee gauntlet --resume --out gauntlet-out   (go on after an interruption)
    referee gauntlet ... --cluster local:2   (the same, played on a dask cluster)
    """
    import asyncio

    from referee.league.config import expand_bots
    from referee.league.gauntlet import GauntletSettings, run_gauntlet
    from referee.ratings.sprt import SprtParams
    from referee.util.seeds import weak_secret_warning

    field = [*field_bots, *more_field]
    if not resume and (candidate is None or baseline is None or not field):
        raise click.UsageError("give CANDIDATE.toml, --baseline OLD.toml and --field BOTS..., "
                               "or --resume --out DIR")
    params = SprtParams(delta=delta, alpha=alpha, beta=beta, max_games=max_games)
    settings = GauntletSettings(
        candidate=candidate or Path(), baseline=baseline or Path(),
        field=expand_bots(field, Path(".")) if field else [], rules=rules, players=players,
        seed=seed, concurrency=concurrency, out=out, params=params,
        sandbox=False if no_sandbox else None, cluster=cluster)
    if seed is not None and (warning := weak_secret_warning(seed)):
        click.echo(warning, err=True)

    def start(outcome) -> None:
        if not quiet:
            for line in header_lines(outcome):
                click.echo(line)

    def report(state) -> None:
        if not quiet:
            click.echo(progress_line(state))

    outcome = asyncio.run(run_gauntlet(settings, report, resume=resume, start=start))
    for line in verdict_lines(outcome):
        click.echo(line)


def signed(value: float, digits: int = 3) -> str:
    """`value` with its sign, never '-0.000'."""
    return f"{round(value, digits) + 0.0:+.{digits}f}"


def header_lines(outcome) -> list[str]:
    """What the gauntlet plays and how to read its lines (within 80 columns)."""
    params = outcome.params
    field = ", ".join(outcome.field)
    lines = [f"gauntlet in {outcome.out}: {outcome.candidate} (candidate) against "
             f"{outcome.baseline} (baseline), field: {field}"]
    for name, original in outcome.renamed.items():
        role = name[len(original) + 1:]
        lines.append(f"note: {original} plays twice; the {role}'s copy (its own process) "
                     f"is {name}")
    lines.append(delta_line(params.delta, outcome.delta_at))
    lines.append(f"each line: pairs, score difference per game (candidate - baseline) with "
                 f"its 95% interval, and the test's evidence that the candidate is better "
                 f"('for') and that it is not better by --delta ('against'); it "
                 f"decides when 'for' reaches {params.better_at:.1f} or 'against' "
                 f"{params.not_better_at:.1f}; no decision before {params.min_pairs} pairs")
    return [piece for line in lines for piece in fit(line, 80)]


def delta_line(delta: float, delta_at: dict[int, float]) -> str:
    """What --delta means at the table sizes the gauntlet plays, in one line."""
    from referee.ratings.sprt import ahead_chance

    at = [f"{elo:.0f} Elo at tables of {size} ({ahead_chance(elo):.0%})"
          for size, elo in sorted(delta_at.items())]
    return (f"--delta {delta:g} (league-table Elo) = {', '.join(at)}: how often a candidate "
            f"that good finishes ahead of an opponent the baseline beats half the time")


def progress_line(state) -> str:
    """One pair's line: the running difference, its interval and the LLR."""
    low, high = state.interval
    interval = (f"[{signed(low, 2)}, {signed(high, 2)}]" if state.pairs > 1
                else "[too few]   ")
    verdict = {None: "", "inconclusive at the budget": "  -> budget"}.get(
        state.verdict, f"  -> {state.verdict}")
    return (f"  pairs {state.pairs:>4}  diff {signed(state.mean)} {interval}"
            f"  for {signed(state.evidence, 1)} against {signed(state.against, 1)}{verdict}")


def verdict_lines(outcome) -> list[str]:
    """The verdict, the estimate and the comparison at each table size (within 80 columns)."""
    final, params = outcome.state, outcome.params
    low, high = final.interval
    lines = [f"verdict: {final.verdict or 'unfinished'}: {outcome.candidate} vs baseline "
             f"{outcome.baseline}, after {final.pairs} pairs ({2 * final.pairs} games)",
             f"  score difference {signed(final.mean)} per game, 95% interval "
             f"[{signed(low)}, {signed(high)}], about {signed(final.elo, 0)} Elo",
             f"  evidence for {signed(final.evidence, 1)} (decides at "
             f"{params.better_at:.1f}), against {signed(final.against, 1)} (at "
             f"{params.not_better_at:.1f}); played now: {outcome.played_now}"]
    for size in outcome.sizes:
        lines.append(f"  at tables of {size.players}: {size.pairs} pairs, "
                     f"{signed(size.mean)} [{signed(size.low)}, {signed(size.high)}], "
                     f"about {signed(size.elo, 0)} Elo")
    lines.append(f"result in {LeagueFolder(outcome.out).gauntlet_result}")
    return [piece for line in lines for piece in fit(line, 80)]
