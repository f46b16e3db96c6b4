"""What a command's failure says, by whose fault it is: the user's as one line (status 1), the
referee's as an internal error with its traceback saved (status 70), Ctrl-C as why it stopped
(status 130).
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import NoReturn

import click

from referee import __version__
from referee.errors import is_users_error
from referee.present.text import safe_line

EX_SOFTWARE = 70   # sysexits.h: an internal software error (a fault of the referee)


@contextlib.contextmanager
def reported_errors() -> Iterator[None]:
    """Report what a command raises by whose fault it is: the user's (a RefereeError that is
    not an InternalError, or an OSError about a file) as one line, "Error: ..." with status 1;
    anything else as an internal error (`report_internal`), with status 70. Click's own
    exceptions (usage errors, exits) pass through."""
    try:
        yield
    except (click.exceptions.Exit, click.ClickException, click.exceptions.Abort):
        raise
    except BrokenPipeError:
        # The reader went away (`referee show DIR 3 | head`): stop quietly, as Unix tools
        # do; stdout goes to /dev/null so the interpreter's final flush cannot fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise click.exceptions.Exit(141) from None
    except KeyboardInterrupt:
        interrupted("interrupted")
    except Exception as exc:
        if is_users_error(exc):
            raise click.ClickException(safe_line(str(exc), limit=2000)) from None
        if os.environ.get("REFEREE_DEBUG"):   # the traceback asked for, on the terminal
            raise
        from referee.util.extras import missing_extra_message

        if isinstance(exc, ModuleNotFoundError) and \
                (message := missing_extra_message(exc.name or "")):
            raise click.ClickException(message) from None
        report_internal(exc)


def report_internal(exc: BaseException) -> NoReturn:
    """Say on stderr that the referee failed (not its user): the error in one line, where to
    report it, and the file holding its traceback; exit with status 70."""
    click.echo(f"internal error: {type(exc).__name__}: {safe_line(str(exc), limit=2000)}",
               err=True)
    tracker = issue_tracker()
    where = f"at {tracker} " if tracker else ""
    click.echo(f"this is a fault of the referee, not of your input: please report it {where}"
               f"with the command and this message", err=True)
    try:
        saved = save_traceback(exc)
    except OSError as problem:
        click.echo(f"(its traceback could not be saved: {problem})", err=True)
    else:
        click.echo(f"the traceback is in {saved}", err=True)
    raise click.exceptions.Exit(EX_SOFTWARE)


def issue_tracker() -> str | None:
    """The project's issue tracker (a [project.urls] entry named like "Issues" or "Bug
    Tracker" in the installed metadata), or None if it names none."""
    from importlib import metadata

    try:
        urls = metadata.metadata("referee").get_all("Project-URL") or []
    except metadata.PackageNotFoundError:
        return None
    for entry in urls:
        label, _, url = entry.partition(",")
        if any(word in label.lower() for word in ("issue", "bug", "tracker")):
            return url.strip() or None
    return None


def save_traceback(exc: BaseException) -> Path:
    """Write the command line, the referee's version and `exc`'s traceback to a new file in
    the temporary folder; return its path."""
    import shlex
    import tempfile
    import traceback

    with tempfile.NamedTemporaryFile("w", encoding="utf-8", prefix="referee-internal-error-",
                                     suffix=".txt", delete=False) as out:
        out.write(f"command: referee {shlex.join(sys.argv[1:])}\n")
        out.write(f"referee {__version__}, Python {sys.version.split()[0]}\n\n")
        out.write("".join(traceback.format_exception(exc)))
    return Path(out.name)


INTERRUPTED = 130   # what shells expect of a command stopped by Ctrl-C (128 + SIGINT)


def interrupted(message: str) -> NoReturn:
    """Say why the command stopped (on stderr, no "Error:": the user asked for it) and exit
    with status 130."""
    click.echo(message, err=True)
    raise click.exceptions.Exit(INTERRUPTED)
