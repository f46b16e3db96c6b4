# ruff: noqa: E402 (gRPC's logging is silenced before the imports below load grpc)
"""The `referee` command line: the `referee` group, which reports every command's errors by
whose fault they are (`referee.cli.errors`), and its commands, thin click commands over the
library, each in a module of its own that adds itself to `main` when imported at the bottom of
this file.
"""

from __future__ import annotations

from referee.util.quiet import quiet_transport

quiet_transport()   # before anything imports grpc: the C core reads its settings at import

from typing import Any

import click

from referee import __version__
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


# The commands register themselves on `main`.
from referee.cli import backup as _backup  # noqa: E402,F401
from referee.cli import check as _check  # noqa: E402,F401
from referee.cli import games as _games  # noqa: E402,F401
from referee.cli import gauntlet as _gauntlet  # noqa: E402,F401
from referee.cli import human_game as _human_game  # noqa: E402,F401
from referee.cli import league as _league  # noqa: E402,F401
from referee.cli import match as _match  # noqa: E402,F401
from referee.cli import replay as _replay  # noqa: E402,F401
from referee.cli import report as _report  # noqa: E402,F401
from referee.cli import rules as _rules  # noqa: E402,F401
from referee.cli import server as _server  # noqa: E402,F401
from referee.cli import simulate as _simulate  # noqa: E402,F401
