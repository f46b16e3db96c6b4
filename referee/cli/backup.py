"""`referee backup` and `referee restore`: a running club's data folder in one archive."""

from __future__ import annotations

from pathlib import Path

import click


@click.command()
@click.option("--data", type=click.Path(file_okay=False, path_type=Path),
              default=Path("club-data"), show_default=True, help="The club's data folder.")
@click.argument("archive", type=click.Path(dir_okay=False, path_type=Path))
def backup(data: Path, archive: Path) -> None:
    """Write a consistent copy of a club (running or not) to ARCHIVE, a .tar.gz.

    The databases are copied with SQLite's online backup while the server goes on; the
    uploads, the season file, test games and the secret key follow. The archive is
    written 0600: it holds password hashes and the secret key. See docs/server.md.
    """
    from referee.server.backup import backup_club

    click.echo(backup_club(data, archive).line("backed up", data, archive))


@click.command()
@click.argument("archive", type=click.Path(dir_okay=False, exists=True, path_type=Path))
@click.option("--data", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="The new data folder to restore into (must not hold anything yet).")
def restore(archive: Path, data: Path) -> None:
    """Bring back the club saved in ARCHIVE (from `referee backup`) into a new folder.

    `referee serve --data DIR` started there shows the same pages, accounts, passwords
    and tokens.
    """
    from referee.server.backup import restore_club

    click.echo(restore_club(archive, data).line("restored", data, archive))
