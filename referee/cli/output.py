"""How commands print: lines wrapped to the terminal's width, and the library's notices on
stderr.
"""

from __future__ import annotations

import logging

import click

from referee.present.text import safe_line


def echo_fitted(line: str, err: bool = False) -> None:
    """Print `line` wrapped to the terminal's width (80 columns when piped)."""
    from referee.present.render import fit

    for part in fit(line):
        click.echo(part, err=err)


class _Notices(logging.Handler):
    """The library's notices as plain lines on the stderr of the moment (click's, in tests)."""

    def emit(self, record: logging.LogRecord) -> None:
        click.echo(safe_line(record.getMessage(), limit=2000), err=True)


def show_notices(quiet: bool = False) -> None:
    """Print the library's notices (a bot being built...) on stderr, one plain line each;
    `quiet` keeps only warnings."""
    logger = logging.getLogger("referee")
    if not any(isinstance(handler, _Notices) for handler in logger.handlers):
        logger.addHandler(_Notices())
        logger.propagate = False
    logger.setLevel(logging.WARNING if quiet else logging.INFO)
