"""The season file as a process uses it at each request: its keys (seasonkeys) from the last
good file; the web process's caps on uploads, bots, test games, and whether spectators see the
leaderboard.

The season file ($REFEREE_SEASON_FILE, default DIR/season.toml) holds the league's keys and
these top-level server keys; a missing file or key means the default here. A file that cannot
be used (no TOML, a bad value) never breaks a page: every process keeps using the last good
file (in memory, and its text in DATA/season.last-good.toml for processes that start later),
and the organiser's page shows the problem in one line (see season_read).
"""

from __future__ import annotations

import contextlib
import os
import threading
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from referee.present.text import safe_line
from referee.server.shared.clubfolder import ClubFolder
from referee.server.shared.seasonkeys import (
    RunnerSettings,
    ServerLimits,
    runner_settings_from_table,
    server_limits_of,
    switch,
)


def season_file() -> Path:
    """Where the season file is: $REFEREE_SEASON_FILE, or DIR/season.toml."""
    return ClubFolder.of_django().season_file()


@dataclass(frozen=True)
class SeasonRead:
    """The season as this process uses it: the file's keys and the runner's settings from
    them, both from the last good file; `problem` is "" or the one line saying why the file
    as it is now cannot be used (it names the file: the organiser's page only shows it)."""

    table: dict[str, Any]
    runner: RunnerSettings
    problem: str = ""


_LOCK = threading.Lock()
_SEEN: dict[str, Any] = {"path": None, "stamp": None, "read": None, "good": None}


def season_read() -> SeasonRead:
    """The season file as it is now if it can be used, else the last good one: in memory since
    this process read it, or DATA/season.last-good.toml (another process read it), or the
    defaults. Read again only when the file changes (one stat per call); never raises."""
    path = season_file()
    stamp = _stamp(path)
    with _LOCK:
        if path != _SEEN["path"]:   # another file (a test's, or the setting changed)
            _SEEN.update(path=path, stamp=None, read=None, good=None)
        if stamp is not None and stamp == _SEEN["stamp"]:
            return cast(SeasonRead, _SEEN["read"])
        try:
            text = _read_text(path) if stamp != "missing" else None
            good = _parse(text, path) if text is not None else _defaults()
        except ValueError as exc:
            read = SeasonRead(*_last_good(path), problem=safe_line(str(exc), limit=300))
        else:
            _SEEN["good"] = read = good
            _keep(text)
        _SEEN["stamp"], _SEEN["read"] = stamp, read
        return read


def _stamp(path: Path) -> tuple[int, int, int] | str | None:
    """What tells a changed file from the one read before ("missing"; None: cannot tell)."""
    try:
        info = path.stat()
    except FileNotFoundError:
        return "missing"
    except OSError:
        return None
    return (info.st_mtime_ns, info.st_size, info.st_ino)


def _read_text(path: Path) -> str | None:
    """The file's text (None: it is gone); ValueError, one line naming it, for one that
    cannot be read as text of a TOML file's size."""
    from referee.util.config import MAX_TOML_BYTES

    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_TOML_BYTES + 1)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ValueError(f"{path}: cannot read: {exc.strerror}") from None
    if len(raw) > MAX_TOML_BYTES:
        raise ValueError(f"{path}: larger than {MAX_TOML_BYTES // 1024} KiB: not a TOML file")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not a text file (invalid UTF-8 at byte {exc.start})") \
            from None


def _parse(text: str, path: Path) -> SeasonRead:
    """The season of the file text `text` (read from `path`); ValueError, one line naming the
    file, for a text that is no TOML or a key the server or the runner refuses."""
    from referee.util.config import ConfigError

    try:
        table = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{path}: invalid TOML: {exc}") from None
    except RecursionError:
        raise ValueError(f"{path}: invalid TOML: nested too deeply") from None
    server_limits_of(table, path)
    switch(table, path, "public_leaderboard")
    switch(table, path, "play_against_students")
    try:
        runner = runner_settings_from_table(table, path)
    except ConfigError as exc:
        raise ValueError(str(exc)) from None
    return SeasonRead(table, runner)


def _defaults() -> SeasonRead:
    return SeasonRead({}, RunnerSettings())


def _last_good(path: Path) -> tuple[dict[str, Any], RunnerSettings]:
    """The last good season's table and runner settings: this process's, else the data
    folder's copy, else the defaults."""
    good = _SEEN["good"]
    if good is None:
        copy = ClubFolder.of_django().last_good
        try:
            good = _parse(copy.read_text(encoding="utf-8"), path)
        except (OSError, ValueError):
            good = _defaults()
        _SEEN["good"] = good
    return good.table, good.runner


def _keep(good_text: str | None) -> None:
    """Keep a good file's text in the data folder for the processes that start while the
    file is broken (written whole or not at all; a disk that refuses it costs nothing else)."""
    if good_text is None:
        return
    copy = ClubFolder.of_django().last_good
    with contextlib.suppress(OSError):
        if copy.exists() and copy.read_text(encoding="utf-8") == good_text:
            return
        partial = copy.with_name(f".{copy.name}.{os.getpid()}")
        partial.write_text(good_text, encoding="utf-8")
        os.replace(partial, copy)


def season_table() -> dict[str, Any]:
    """The season file's keys ({} for a missing file), from the last good file while the
    file as it is cannot be used (see season_read)."""
    return season_read().table


def server_limits() -> ServerLimits:
    """The server keys of the season file (defaults where it has none; the last good file's
    while it cannot be used)."""
    return server_limits_of(season_table(), season_file())


def public_leaderboard() -> bool:
    """The organiser's switch `public_leaderboard` (default false): whether the leaderboard,
    its page and its JSON, is open to anyone, signed in or not. Read at each request, so
    turning it on or off applies at once."""
    return switch(season_table(), season_file(), "public_leaderboard")


def play_against_students() -> bool:
    """The organiser's switch `play_against_students` (default false): whether a student may
    play in the browser against other students' current bots. Read at each request."""
    return switch(season_table(), season_file(), "play_against_students")
