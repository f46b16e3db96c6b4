"""`referee gauntlet`: is a candidate better than its baseline, by a sequential test."""

from __future__ import annotations

from pathlib import Path

import click

from referee.cli import RULES, SECRET, _players_option, friendly_errors, main


@main.command()
@click.argument("candidate", metavar="CANDIDATE.toml", required=False,
                type=click.Path(dir_okay=False, path_type=Path))
@click.argument("more_field", nargs=-1, metavar="[FIELD.toml...]")
@click.option("--baseline", metavar="OLD.toml", type=click.Path(dir_okay=False, path_type=Path),
              help="The bot the candidate must beat (may be the same spec).")
@click.option("--field", "field_bots", multiple=True, metavar="BOT.toml",
              help="Opponents (spec files or globs; repeatable; more may follow as arguments).")
@click.option("--players", callback=_players_option,
              help="Table size, or a range like 3-5 (default 4, or fewer bots).")
@click.option("--rules", "rules", type=RULES, default="classic", show_default=True,
              help="Rule preset or rules TOML.")
@click.option("--seed", type=SECRET,
              help="The secret seed (default: drawn at random and stored).")
@click.option("--delta", type=click.FloatRange(0, 1, min_open=True), default=0.1,
              show_default=True,
              help="Smallest score gain worth detecting (share of opponents beaten).")
@click.option("--alpha", type=click.FloatRange(0, 0.5, min_open=True, max_open=True),
              default=0.05, show_default=True, help="Chance of calling an equal bot better.")
@click.option("--beta", type=click.FloatRange(0, 0.5, min_open=True, max_open=True),
              default=0.05, show_default=True, help="Chance of missing a gain of --delta.")
@click.option("--max-games", type=click.IntRange(min=2), default=1000, show_default=True,
              help="Game budget (candidate and baseline games together).")
@click.option("--concurrency", "-j", type=click.IntRange(min=1), help="Games in flight.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              default="gauntlet-out", show_default=True,
              help="Directory for gauntlet.db and gauntlet.json.")
@click.option("--resume", is_flag=True, help="Continue an interrupted gauntlet in --out.")
@click.option("--quiet", "-q", is_flag=True, help="Only the verdict.")
@click.option("--no-sandbox", is_flag=True,
              help="Run bots unconfined (trusted local development only).")
@friendly_errors
def gauntlet(candidate: Path | None, more_field: tuple[str, ...], baseline: Path | None,
             field_bots: tuple[str, ...], players: tuple[int, int] | None, rules,
             seed: int | None,
             delta: float, alpha: float, beta: float, max_games: int,
             concurrency: int | None, out: Path, resume: bool, quiet: bool,
             no_sandbox: bool) -> None:
    """Play CANDIDATE.toml and --baseline at identical tables against --field and decide, by a
    sequential test, whether the candidate is better.

    \b
    referee gauntlet new.toml --baseline old.toml --field bots/*.toml
    referee gauntlet --resume --out gauntlet-out     (continue after an interruption)
    """
    import asyncio

    from referee.league.config import expand_bots
    from referee.league.gauntlet import GauntletSettings, run_gauntlet
    from referee.ratings.sprt import SprtParams
    from referee.seeds import weak_secret_warning

    field = [*field_bots, *more_field]
    if not resume and (candidate is None or baseline is None or not field):
        raise click.UsageError("give CANDIDATE.toml, --baseline OLD.toml and --field BOTS..., "
                               "or --resume --out DIR")
    params = SprtParams(delta=delta, alpha=alpha, beta=beta, max_games=max_games)
    settings = GauntletSettings(
        candidate=candidate or Path(), baseline=baseline or Path(),
        field=expand_bots(field, Path(".")) if field else [], rules=rules, players=players,
        seed=seed, concurrency=concurrency, out=out, params=params,
        sandbox=False if no_sandbox else None)
    if seed is not None and (warning := weak_secret_warning(seed)):
        click.echo(warning, err=True)
    if not quiet:
        click.echo(f"gauntlet in {out}: score difference per game (candidate - baseline), "
                   f"its 95% interval, and the test's LLR between its bounds "
                   f"{params.lower:.2f} and {params.upper:.2f}")

    def report(state) -> None:
        if quiet:
            return
        low, high = state.interval
        click.echo(f"  pairs {state.pairs:>4}  diff {state.mean:+.3f} [{low:+.3f}, {high:+.3f}]"
                   f"  LLR {state.llr:+.2f}" + (f"  -> {state.verdict}" if state.verdict else ""))

    outcome = asyncio.run(run_gauntlet(settings, report, resume=resume))
    final = outcome.state
    low, high = final.interval
    verdict = final.verdict or "unfinished"
    click.echo(f"verdict: {verdict}: {outcome.candidate} vs baseline {outcome.baseline}: "
               f"score difference {final.mean:+.3f} per game, 95% interval "
               f"[{low:+.3f}, {high:+.3f}], after {final.pairs} pairs "
               f"({2 * final.pairs} games); LLR {final.llr:+.2f} "
               f"(bounds {outcome.params.lower:.2f}, {outcome.params.upper:.2f}); "
               f"played now: {outcome.played_now}; result in {outcome.out}/gauntlet.json")
