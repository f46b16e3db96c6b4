# ruff: noqa: E402 (gRPC's logging and BLAS's threads are set before the imports below load them)
"""The `referee` command line: the `referee` group, which reports every command's errors by
whose fault they are (`referee.cli.errors`), and the registration of its commands, thin click
commands over the library, each in a module of its own beside this one.
"""

from __future__ import annotations

from referee.util.blas import one_blas_thread
from referee.util.grpcfork import no_grpc_fork_handlers
from referee.util.quiet import quiet_transport

quiet_transport()   # before anything imports grpc: the C core reads its settings at import
no_grpc_fork_handlers()
one_blas_thread()   # before anything imports numpy: its BLAS reads its thread count at import

from typing import Any

import click

from referee import __version__
from referee.cli import (
    backup,
    check,
    games,
    gauntlet,
    human_game,
    league,
    match,
    replay,
    report,
    rules,
    server,
    simulate,
)
from referee.cli.errors import reported_errors
from referee.cli.output import show_notices


class RefereeGroup(click.Group):
    """The `referee` group: whatever a command raises, from parsing its options to its last
    line, is reported here once (`reported_errors`)."""

    def invoke(self, ctx: click.Context) -> Any:
        with reported_errors():
            return super().invoke(ctx)


@click.group(cls=RefereeGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="referee")
def main() -> None:
    """Run tournaments of Las Vegas bots written in any language.

    \b
    Quick start:
      referee rules                       list the rule presets
      referee simulate --players 3        games between built-in policies
      referee match sample_bots/greedy.toml sample_bots/random.toml
      referee league sample_bots/*.toml   a league of bots with ratings and tables
    """
    show_notices()


# Every command, from the module that holds it.
COMMANDS = (
    backup.backup, backup.restore, check.check, games.show, games.watch, games.export, games.verify,
    gauntlet.gauntlet, human_game.play, league.league, league.table, match.match, replay.replay,
    report.report, rules.rules_command, server.serve, server.submit, simulate.simulate
)
for _command in COMMANDS:
    main.add_command(_command)
