"""`referee check`: does a bot conform to the protocol; a report for its author."""

from __future__ import annotations

import json
import os
from pathlib import Path

import click

from referee.bots.diskwatch import DEFAULT_WRITE_MAX_MB, WRITE_MAX_ENV
from referee.cli.output import echo_fitted
from referee.cli.params import limit_options
from referee.engine import PRESETS
from referee.present.text import safe_line


@click.command()
@click.argument("bot", metavar="BOT.toml|FOLDER", type=click.Path(path_type=Path))
@click.option("--opponent", "opponents", multiple=True, metavar="BOT.toml",
              type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Opponent bot spec (repeatable). Default: sample_bots/random.toml and "
                   "greedy.toml, or the honest test bot.")
@click.option("--preset", "presets", multiple=True, type=click.Choice(list(PRESETS)),
              help="Play only these presets (repeatable). Default: all.")
@click.option("--games", type=click.IntRange(1, 100), default=1, show_default=True,
              help="Games per preset and player count.")
@click.option("--seed", type=click.IntRange(0, 2**64 - 1), default=1, show_default=True)
@click.option("--no-probes", is_flag=True, help="Skip the crafted edge-state requests.")
@click.option("--build-output", is_flag=True,
              help="Print the build's output line by line as it runs ('build| ...').")
@click.option("--write-limit-mb", type=click.IntRange(1, 1024 * 1024), default=None,
              help="Most the build (and each bot in its /tmp) may write, all files together "
                   f"(MiB); past it the build or bot is killed. Default: {DEFAULT_WRITE_MAX_MB}.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option("--no-sandbox", is_flag=True,
              help="Run bots unconfined (trusted local development only).")
@click.option("--limit", "ceiling", multiple=True, metavar="KEY=N", callback=limit_options,
              help="A season's limit (repeatable, e.g. --limit memory_mb=512): the bot gets the "
                   "smaller of it and its own [limits].")
def check(bot: Path, opponents: tuple[Path, ...], presets: tuple[str, ...], games: int,
          seed: int, no_probes: bool, build_output: bool, write_limit_mb: int | None,
          as_json: bool, no_sandbox: bool, ceiling: dict[str, int]) -> None:
    """Check that a bot conforms to the protocol: a report for bot authors.

    Builds and starts BOT.toml, checks its handshake, plays every preset at its smallest and
    largest table, probes edge states, and reports strikes and latencies, one line per check.
    A FOLDER is checked with its spec, inside it or beside it (as `referee submit` sends it).
    Exits with status 1 if any check fails.
    """
    from referee.bots.spec import spec_of_folder
    from referee.checking.conformance import CheckOptions, run_check

    if bot.is_dir():
        bot = spec_of_folder(bot)
    if write_limit_mb is not None:   # the bots' limit too (referee.bots.diskwatch)
        os.environ[WRITE_MAX_ENV] = str(write_limit_mb)

    def echo_build_line(stream: str, line: str) -> None:
        # The build's text is the bot author's: escaped, one line each (stderr beside --json).
        click.echo(f"build| {safe_line(line, limit=500)}", err=as_json)

    options = CheckOptions(seed=seed, games=games, presets=presets or tuple(PRESETS),
                           opponents=opponents or None, probes=not no_probes,
                           sandbox=False if no_sandbox else None,
                           on_build_line=echo_build_line if build_output else None,
                           write_max_mb=write_limit_mb, ceiling=ceiling)
    if as_json:
        report = run_check(bot, options)
        click.echo(json.dumps(report.to_json(), indent=2))
    else:
        from referee.checking.conformance import HANG
        from referee.present.render import fit, terminal_width

        width = terminal_width()
        click.echo(f"referee check {bot}")
        report = run_check(bot, options,
                           listener=lambda c: click.echo("\n".join(c.lines(width))))
        if report.failures and report.output_tail:
            tail = safe_line(report.output_tail, limit=2000)
            click.echo("\n".join(fit(f"bot output (last lines): {tail}", width, hang=HANG)))
        echo_fitted(report.summary())
    if not report.ok:
        raise click.exceptions.Exit(1)
