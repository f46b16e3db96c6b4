"""`referee serve` (the club server) and `referee submit` (a student's upload to it)."""

from __future__ import annotations

from pathlib import Path

import click

from referee.present.text import safe_line


@click.command()
@click.option("--data", type=click.Path(file_okay=False, path_type=Path),
              default=Path("club-data"), show_default=True,
              help="The club's data folder: database, uploads, the season's league.")
@click.option("--season", type=click.Path(dir_okay=False, path_type=Path),
              help="The season file (league keys and server keys; default DATA/season.toml).")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", type=click.IntRange(1, 65535), default=8000, show_default=True)
@click.option("--cluster", metavar="URL|local:N",
              help="Play the season's games on a dask cluster (docs/cluster.md).")
@click.option("--behind-proxy", is_flag=True, envvar="REFEREE_BEHIND_TLS_PROXY",
              help="A TLS proxy in front sets X-Forwarded-Proto: trust it; cookies go over "
                   "HTTPS only.")
@click.option("--trusted-origin", "trusted_origins", multiple=True,
              envvar="REFEREE_CSRF_TRUSTED_ORIGINS",
              help="An origin forms may come from, e.g. https://club.example.org (repeatable).")
@click.option("--allowed-host", "allowed_hosts", multiple=True,
              help="A host name the server answers to (repeatable; default the --host).")
@click.option("--workers", type=click.IntRange(1, 64),
              help="Web worker processes (default: one per core, at most 4).")
def serve(data: Path, season: Path | None, host: str, port: int, cluster: str | None,
          behind_proxy: bool, trusted_origins: tuple[str, ...],
          allowed_hosts: tuple[str, ...], workers: int | None) -> None:
    """Run the club server: the web pages and the season's runner, until Ctrl-C or SIGTERM.

    Students join with a code, upload bots, watch their checks and games; see docs/server.md.
    """
    from referee.util.extras import require

    require("django")   # one line naming the server extra (MissingExtraError is a user error)
    from referee.server.serve import ServeError, ServeOptions
    from referee.server.serve import serve as run

    options = ServeOptions(data=data, season=season, host=host, port=port, cluster=cluster,
                           behind_proxy=behind_proxy, trusted_origins=list(trusted_origins),
                           allowed_hosts=list(allowed_hosts))
    if workers is not None:
        options.workers = workers
    try:
        status = run(options, lambda text: click.echo(text, err=False))
    except ServeError as exc:
        raise click.ClickException(str(exc)) from None
    raise click.exceptions.Exit(status)


@click.command()
@click.argument("path", metavar="SPEC.toml|FOLDER|ARCHIVE",
                type=click.Path(exists=True, path_type=Path))
@click.option("--server", required=True, metavar="URL", help="The club server, e.g. "
              "http://127.0.0.1:8000")
@click.option("--token", envvar="REFEREE_TOKEN", metavar="T",
              help="Your personal token (from the Tokens page; or REFEREE_TOKEN).")
@click.option("--bot", metavar="NAME", help="Which of your bots this is a new version of "
              "(default: the name in its spec).")
@click.option("--no-follow", is_flag=True, help="Do not wait for the check.")
def submit(path: Path, server: str, token: str | None, bot: str | None, no_follow: bool) -> None:
    """Send a bot to a club server and follow its check: exit 0 when it passed, 1 when it
    failed or was refused.

    Give its spec (zipped here with the folder it names, as the guides lay them out), its folder
    (the spec inside it or beside it is found), or a zip/tar.gz/image archive you made; see
    docs/bots/submitting.md.
    """
    from referee.server.client import SubmitError, follow
    from referee.server.client import submit as send

    if not token:
        raise click.UsageError("no token: pass --token or set REFEREE_TOKEN (make one on the "
                               "server's Tokens page)")
    try:
        version = send(path, server, token, bot)
        click.echo(f"uploaded {version['bot']} v{version['number']} as "
                   f"{version['league_name']}: {server.rstrip('/')}{version['url']}")
        if no_follow:
            return
        click.echo("its check (queued until the runner takes it):")
        state = follow(server, token, version["version"],
                       lambda text: click.echo("  " + safe_line(text, limit=2000)))
    except SubmitError as exc:
        click.echo(f"error: {safe_line(str(exc), limit=2000)}", err=True)
        raise click.exceptions.Exit(1) from None
    except KeyboardInterrupt:
        click.echo("stopped following; the check goes on at the server", err=True)
        raise click.exceptions.Exit(130) from None
    summary = safe_line(state.get("summary") or "", limit=300)
    if state["check_state"] == "passed":
        click.echo(f"check passed{': ' + summary if summary else ''}; {version['league_name']} "
                   f"enters the season")
        return
    if state["check_state"] == "queued":
        click.echo("check waiting: the server keeps your upload and runs its check once it "
                   "can (the line above)", err=True)
        raise click.exceptions.Exit(1)
    word = "not run" if state["check_state"] == "replaced" else "failed"
    click.echo(f"check {word}{': ' + summary if summary else ''}", err=True)
    raise click.exceptions.Exit(1)

