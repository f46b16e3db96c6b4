"""`referee report`: the league's static HTML report, with a replay viewer for every game."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click


@click.command()
@click.argument("directory", metavar="DIR", type=click.Path(file_okay=False, path_type=Path))
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              help="Where to write the report (default DIR/report).")
@click.option("--open", "open_it", is_flag=True, help="Open the report in a web browser.")
def report(directory: Path, out: Path | None, open_it: bool) -> None:
    """Write a league's report: table, charts, a page per bot and a replay of every game.

    The folder works opened from file:// with no network; publish it as it is.
    """
    index = write_report(directory, out)
    if open_it:
        import webbrowser

        if not webbrowser.open(index.resolve().as_uri()):
            click.echo(f"--open: no web browser found on this machine; open {index} in one",
                       err=True)


def write_report(directory: Path, out: Path | None = None, outcome: Any = None) -> Path:
    """Build the report and say where it is (used by `referee league` too, with its outcome)."""
    from referee.report.site import build_report

    index = build_report(directory, out, outcome)
    click.echo(f"report: {index}")
    return index
