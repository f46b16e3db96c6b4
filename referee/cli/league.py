"""`referee league` (play a league and print its tables) and `referee table` (reprint a
league's tables from its store).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from referee.cli.errors import interrupted
from referee.cli.output import echo_fitted, show_notices
from referee.cli.params import RULES, SECRET, players_option
from referee.engine import RuleSet
from referee.league.folder import STORE_NAME, LeagueFolder
from referee.present.text import safe_line


@click.command()
@click.argument("sources", nargs=-1, metavar="BOT.toml... | LEAGUE.toml")
@click.option("--games", type=click.IntRange(min=1), help="Games to play (default: 25 per bot).")
@click.option("--players", callback=players_option,
              help="Table size, or a range like 2-5 (default: 4, or fewer bots).")
@click.option("--rules", "rules", type=RULES, help="Rule preset or rules TOML (default classic).")
@click.option("--seed", type=SECRET,
              help="The league's secret seed (default: drawn at random, stored and printed).")
@click.option("--concurrency", "-j", type=click.IntRange(min=1),
              help="Games in flight (default: from the cores and the table size).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              help=f"Output directory: {STORE_NAME} and tables (default league-out).")
@click.option("--duplicate", is_flag=True, default=None,
              help="Play each table and seed in every seat rotation (R50): no seat's dice "
                   "favour a bot. No narrowing of the strengths' spread was detected "
                   "(100 simulated seeds: docs/ratings.md).")
@click.option("--resume", is_flag=True, help="Continue an unfinished league in --out.")
@click.option("--accept-changed", is_flag=True,
              help="Continue although a bot's files changed since the league started.")
@click.option("--skip-broken", is_flag=True, default=None,
              help="Leave out bots that cannot start instead of stopping.")
@click.option("--quiet", "-q", is_flag=True, help="No progress output.")
@click.option("--verbose", "-v", is_flag=True,
              help="A line per finished game: places and money, strikes, forfeit reasons.")
@click.option("--no-sandbox", is_flag=True,
              help="Run bots unconfined (trusted local development only).")
@click.option("--no-report", is_flag=True, help="Do not write the HTML report into DIR/report.")
@click.option("--until-settled", is_flag=True,
              help="Add blocks of --games games until every pair of neighbours in the table "
                   "is separated, allowing for a look after every block (or --max-games). "
                   "Measured: two equal bots separated in 6 of 200 simulated runs.")
@click.option("--max-games", type=click.IntRange(min=1),
              help="Budget of --until-settled (default: 10 blocks of --games).")
@click.option("--add", "add", multiple=True, metavar="NEW.toml",
              help="Add a bot to the league in --out, finished or not (repeatable).")
@click.option("--cluster", metavar="ADDRESS",
              help="Play the games on a dask cluster: a scheduler address (tcp://HOST:8786) "
                   "or local:N for N worker processes here (docs/cluster.md).")
@click.option("--watch", is_flag=True,
              help="Tell the games move by move as they are played, one after another, as "
                   "`referee watch` does (instead of the progress bar).")
def league(sources: tuple[str, ...], games: int | None, players: tuple[int, int] | None,
           rules: RuleSet | None, seed: int | None, concurrency: int | None, out: Path | None,
           duplicate: bool | None, resume: bool, accept_changed: bool, skip_broken: bool | None,
           quiet: bool, verbose: bool, no_sandbox: bool, no_report: bool, until_settled: bool,
           max_games: int | None, add: tuple[str, ...], cluster: str | None,
           watch: bool) -> None:
    """Play a league between bots and print its table (and write its report).

    \b
    referee league sample_bots/*.toml
    referee league league.toml             (settings in a file; options override)
    referee league --resume --out DIR     (continue after an interruption)
    referee league --out DIR --add new.toml   (a bot joins the league)
    referee league bots/*.toml --until-settled --max-games 2000
    referee league sample_bots/*.toml --watch   (its games told as played)
    """
    import asyncio
    import shlex

    from referee.cli.progress import make_progress
    from referee.league.config import LeagueSettings, expand_bots, is_league_file, load_league_file
    from referee.league.runner import run_league
    from referee.league.store import games_stored
    from referee.report.table_files import write_outputs
    from referee.util.seeds import weak_secret_warning

    if len(sources) == 1 and Path(sources[0]).suffix == ".toml" and \
            is_league_file(Path(sources[0])):
        settings = load_league_file(Path(sources[0]))
    elif sources:
        settings = LeagueSettings(bots=expand_bots(list(sources), Path(".")))
        settings.given["bots"] = "the bot specs given"
    elif resume or add or until_settled:
        settings = LeagueSettings(bots=[])
    else:
        raise click.UsageError("give bot spec files, a league file, or --resume --out DIR")
    if add and (sources or until_settled):
        raise click.UsageError("--add takes the league from --out: give no other bots and "
                               "no --until-settled")
    if max_games is not None and not until_settled:
        raise click.UsageError("--max-games goes with --until-settled")
    overrides = {"games": games, "players": players, "rules": rules, "seed": seed,
                 "concurrency": concurrency, "out": out, "duplicate": duplicate,
                 "skip_broken": skip_broken, "sandbox": False if no_sandbox else None,
                 "cluster": cluster}
    for key, value in overrides.items():
        if value is not None:
            settings.give(key, value, f"--{key.replace('_', '-')}")
    if settings.seed is not None and (warning := weak_secret_warning(settings.seed)):
        click.echo(warning, err=True)
    if quiet and verbose:
        raise click.UsageError("--quiet and --verbose exclude each other")
    if watch and (quiet or verbose or settings.cluster):
        raise click.UsageError("--watch tells the games on this terminal: not with --quiet, "
                               "--verbose or a cluster (its games write no live files)")
    # Watching, the narration is the progress: a bar redrawn beside it would garble both.
    progress = make_progress(quiet or watch, games_log=verbose)
    show_notices(quiet)
    stop_watching = None
    if watch:
        from referee.cli.games import watching_in_thread

        stop_watching = watching_in_thread(settings.out)
    try:
        settled = None
        if add:
            from referee.league.extend import add_bots

            outcome = asyncio.run(add_bots(settings, expand_bots(list(add), Path(".")),
                                           progress, accept_changed=accept_changed,
                                           publish=write_outputs))
        elif until_settled:
            from referee.league.extend import run_until_settled

            settled = asyncio.run(run_until_settled(
                settings, progress, max_games, resume=resume, accept_changed=accept_changed,
                announce=None if quiet else _announce, publish=write_outputs))
            outcome = settled.outcome
        else:
            outcome = asyncio.run(run_league(settings, progress, resume=resume,
                                             accept_changed=accept_changed,
                                             publish=write_outputs))
    except KeyboardInterrupt:
        store_path = LeagueFolder(settings.out).store_path
        saved = games_stored(store_path)
        command = ["referee", "league", "--resume", "--out", str(settings.out)]
        if until_settled:
            command.append("--until-settled")
        if max_games is not None:
            command += ["--max-games", str(max_games)]
        if no_sandbox:
            command.append("--no-sandbox")
        interrupted(f"interrupted: {saved} games saved in {store_path}; resume "
                    f"with: {shlex.join(command)}")
    finally:
        if stop_watching is not None:
            stop_watching()
    for error in outcome.broken:
        echo_fitted(f"skipped {error}", err=True)
    for note in outcome.notes:
        echo_fitted(note, err=True)
    _print_outcome(outcome, quiet)
    if settled is not None:
        from referee.league.outcome import separation_rule

        rule = (separation_rule(outcome.standings) if outcome.standings is not None
                else "95% intervals apart")
        if settled.unresolved:
            pairs = ", ".join(f"{a} ~ {b}" for a, b in settled.unresolved)
            said = (f"not settled within {len(outcome.schedule)} games: still not "
                    f"separated ({rule}): {pairs}")
        else:
            said = (f"settled: every pair of neighbours separated ({rule}) after "
                    f"{len(outcome.schedule)} games ({settled.blocks} blocks)")
        from referee.present.render import fit

        for line in fit(said, 80):
            click.echo(line)
    if not no_report:
        from referee.cli.report import write_report

        write_report(outcome.out, outcome=outcome)


def _announce(line: str) -> None:
    """A line about what the league does next, on stderr within 80 columns."""
    from referee.present.render import fit

    for piece in fit(line, 80):
        click.echo(piece, err=True)


@click.command()
@click.argument("out", type=click.Path(file_okay=False, exists=True, path_type=Path),
                default="league-out")
def table(out: Path) -> None:
    """Reprint a league's tables from its store (and rewrite the table files)."""
    from referee.league.outcome import load_outcome
    from referee.report.table_files import write_outputs

    folder = LeagueFolder(out)
    if not folder.store_path.exists():
        raise click.UsageError(f"{out}: no league here (no {STORE_NAME})")
    store = folder.open_store()
    try:
        outcome = load_outcome(store)
    finally:
        store.close()
    write_outputs(outcome)
    _print_outcome(outcome, quiet=False)


def _print_outcome(outcome: Any, quiet: bool) -> None:
    from referee.cli.tables import render_terminal

    if not quiet:
        echo_fitted(f"schedule: {len(outcome.schedule)} games; {outcome.balance.describe()}")
        echo_fitted(f"league seed {outcome.facts.get('seed')} (stored in {STORE_NAME}); give it "
                    f"to --seed to play the same league again")
    fit = outcome.standings
    render_terminal(outcome.rows, outcome.h2h, pairwise=outcome.pairwise,
                    scale=fit.scale if fit is not None else None,
                    size_test=fit.size_test if fit is not None else None,
                    separation=(None if fit is None or fit.z is None
                                else f"gap z <= {fit.z:.2f}: 95% over {fit.looks} looks"))
    if outcome.unranked:   # a season's retired and disabled versions: fitted, not ranked
        echo_fitted("not ranked (versions retired or taken out; their games stay in the fit): "
                    + ", ".join(safe_line(row.bot, 60) for row in outcome.unranked))
    if outcome.workers:
        from referee.cli.tables import render_workers

        render_workers(outcome.workers)
    state = "finished" if outcome.finished else "unfinished (use --resume)"
    void = sum(game.void for game in outcome.games)
    void_text = f" ({void} where every seat forfeited: no result)" if void else ""
    echo_fitted(f"{len(outcome.games)}/{len(outcome.schedule)} games recorded{void_text}, "
                f"{state}; played now: {outcome.played_now}; tables in {outcome.out}/")
