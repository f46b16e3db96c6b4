"""Errors say whose they are: one root (RefereeError) with a branch for the user's input, a
bot's failure, a store and an internal fault; the command line prints a user's error in one
line and anything else as an internal error, with where to report it and a file holding the
traceback; a bot's failure kinds are an enum whose members are the old strings."""

from __future__ import annotations

import errno
import importlib
import inspect
import json
import pkgutil
from pathlib import Path

import pytest
from click.testing import CliRunner

import referee
from referee.bots.archive import ArchiveError
from referee.bots.build import BuildResultRefused, WriteLimitReached
from referee.bots.errors import STRIKE_TYPES, BotError, BotStartError, Failure
from referee.bots.netns import NetworkUnavailable
from referee.bots.sandbox import SandboxError
from referee.bots.scratch import TreeError, WrittenTooMuch
from referee.bots.spec import BotSpecError
from referee.bots.uids import UidPoolError
from referee.cli import main
from referee.cli.errors import EX_SOFTWARE
from referee.engine.errors import (
    EngineError,
    GameOverError,
    IllegalActionError,
    RecordError,
    RulesError,
)
from referee.errors import (
    BotFailure,
    FailureKind,
    InputError,
    InternalError,
    RefereeError,
    StoreError,
    UserError,
)
from referee.league.executors.worker import BotUnavailable
from referee.league.folder import LeagueFolder
from referee.league.outcome import LeagueStateError
from referee.league.season import SeasonError
from referee.league.store import GameAlreadyStored, StoreUnreadable, StoreVersionError
from referee.protocol.convert import MalformedAction, MalformedMessage
from referee.report.record_sources import RecordSourceError
from referee.server.client import SubmitError
from referee.server.serve import ServeError
from referee.server.unpack import UploadRefused
from referee.util.config import ConfigError
from referee.util.extras import MissingExtraError
from referee.util.numbers import NumberError
from referee.util.trusted import ProgramMissing

BRANCHES = (UserError, BotFailure, StoreError, InternalError)

# Each library error, its branch, and the older base that code may still catch it by.
HIERARCHY: list[tuple[type[Exception], type[RefereeError], type[Exception] | None]] = [
    (ConfigError, UserError, ValueError),
    (BotSpecError, UserError, ValueError),
    (MissingExtraError, UserError, ValueError),
    (LeagueStateError, UserError, ValueError),
    (SeasonError, UserError, ValueError),
    (InputError, UserError, ValueError),
    (RecordSourceError, UserError, ValueError),
    (UploadRefused, UserError, ValueError),
    (ArchiveError, UserError, None),
    (SandboxError, UserError, None),
    (SubmitError, UserError, RuntimeError),
    (ServeError, UserError, RuntimeError),
    (RulesError, UserError, ValueError),
    (RecordError, UserError, ValueError),
    (IllegalActionError, BotFailure, ValueError),
    (MalformedMessage, BotFailure, ValueError),
    (MalformedAction, BotFailure, ValueError),
    (BotError, BotFailure, None),
    (BotStartError, BotFailure, None),
    (GameAlreadyStored, StoreError, ValueError),
    (StoreVersionError, StoreError, None),
    (StoreUnreadable, StoreError, None),
    (NumberError, UserError, ValueError),
    (ProgramMissing, UserError, OSError),
    (NetworkUnavailable, UserError, None),
    (UidPoolError, UserError, RuntimeError),
    (WriteLimitReached, BotFailure, None),
    (BuildResultRefused, BotFailure, None),
    (TreeError, BotFailure, None),
    (WrittenTooMuch, BotFailure, None),
    (BotUnavailable, BotFailure, None),
    (GameOverError, InternalError, None),
]
# Exceptions that are signals between two parts of the referee, never reported as errors.
SIGNALS = {"referee.game.human.Interrupted"}


@pytest.mark.parametrize(("error", "branch", "older"), HIERARCHY,
                         ids=[error.__name__ for error, _, _ in HIERARCHY])
def test_each_library_error_is_a_referee_error_in_one_branch(
        error: type[Exception], branch: type[RefereeError], older: type[Exception] | None) -> None:
    assert issubclass(error, RefereeError)
    assert [b for b in BRANCHES if issubclass(error, b)] == [branch]
    if older is not None:   # code that caught it by its older base still does
        assert issubclass(error, older)


def test_every_exception_the_package_defines_is_in_one_branch(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A new exception class anywhere in `referee` says whose fault it is, or this names it."""
    monkeypatch.setenv("REFEREE_SERVER_DATA", str(tmp_path))   # the club's settings make it
    monkeypatch.chdir(tmp_path)
    stray = []
    for info in pkgutil.walk_packages(referee.__path__, "referee."):
        if info.name.endswith("__main__") or info.name == "referee.bots.guard":
            continue   # the guard is a standard-library script; __main__ runs on import
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if not (inspect.isclass(value) and issubclass(value, BaseException)) or \
                    value.__module__ != module.__name__ or name.startswith("_"):
                continue
            where = f"{module.__name__}.{name}"
            branches = [b.__name__ for b in BRANCHES if issubclass(value, b)]
            if len(branches) != 1 and value not in (RefereeError, EngineError) and \
                    where not in SIGNALS and not issubclass(value, Warning):
                stray.append(f"{where}: {branches or 'no branch'}")
    assert not stray, stray


def test_a_damaged_store_is_the_users_one_line(tmp_path: Path) -> None:
    league = tmp_path / "league"
    league.mkdir()
    store = LeagueFolder(league).store_path
    store.write_bytes(bytes(range(256)) * 16)   # not a database
    for args in (["table", str(league)], ["report", str(league)]):
        status, lines = run(*args)
        assert status == 1, (args, lines)
        assert len(lines) == 1 and f"{store}: not a league store" in lines[0], (args, lines)


def test_the_engines_errors_keep_their_common_base() -> None:
    for error in (RulesError, RecordError, IllegalActionError, GameOverError):
        assert issubclass(error, EngineError)


def test_failure_kinds_are_the_old_strings() -> None:
    old = ["timeout", "illegal", "malformed", "protocol", "crash"]
    assert [kind.value for kind in FailureKind] == old
    assert list(STRIKE_TYPES) == old and all(type(k) is FailureKind for k in STRIKE_TYPES)
    assert [f"{kind}" for kind in FailureKind] == old and [str(kind) for kind in FailureKind] == old
    failure = Failure(FailureKind.CRASH, "the bot's process ended")
    kind, detail = failure   # still unpacks as the (kind, text) pair it was
    assert (kind, detail) == ("crash", "the bot's process ended")


def test_records_and_tables_hold_the_same_bytes_as_with_plain_strings() -> None:
    # What a game record's decision and the store's strike counts hold, by enum and by string.
    strikes = dict.fromkeys(STRIKE_TYPES, 0)
    strikes[FailureKind.TIMEOUT] += 2
    decision = {"seat": 1, "latency_us": 7, "strike": FailureKind.TIMEOUT, "detail": "late"}
    plain_strikes = {"timeout": 2, "illegal": 0, "malformed": 0, "protocol": 0, "crash": 0}
    plain_decision = {"seat": 1, "latency_us": 7, "strike": "timeout", "detail": "late"}
    for compact in (None, (",", ":")):
        assert json.dumps([strikes], separators=compact) == \
            json.dumps([plain_strikes], separators=compact)
        assert json.dumps(decision, separators=compact) == \
            json.dumps(plain_decision, separators=compact)


def run(*args: str) -> tuple[int, list[str]]:
    """`referee ARGS` in this process: its status and the lines of its stderr."""
    result = CliRunner().invoke(main, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        result.exception
    return result.exit_code, result.stderr.splitlines()


def test_a_file_that_is_not_toml_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "bad\n')
    status, lines = run("match", str(bad), str(bad))
    assert status == 1
    assert len(lines) == 1 and lines[0].startswith(f"Error: {bad}: invalid TOML"), lines


def test_a_missing_file_is_one_line(tmp_path: Path) -> None:
    missing = tmp_path / "missing.toml"
    status, lines = run("match", str(missing), str(missing))
    assert (status, lines) == (1, [f"Error: {missing}: no such file"])


def test_an_os_error_about_a_path_the_user_named_is_one_line(tmp_path: Path) -> None:
    target = tmp_path / "no-such-folder" / "games.jsonl"
    status, lines = run("simulate", "--games", "1", "--replay", str(target))
    assert status == 1
    assert len(lines) == 1 and lines[0].startswith("Error: ") and str(target) in lines[0], lines


def test_a_json_file_that_is_not_a_record_is_one_line(tmp_path: Path) -> None:
    other = tmp_path / "other.json"
    other.write_text('{"format": "something else"}')
    status, lines = run("show", str(other))
    assert (status, lines) == (1, ["Error: not a game record (format 'something else')"])


def fault(kind: str) -> Exception:
    """An exception the user cannot cause, as a bug deep in the library would raise it."""
    return {"ValueError": ValueError("a fault deep inside"),
            "KeyError": KeyError("a fault deep inside"),
            "OSError": OSError(errno.EIO, "a fault deep inside")}[kind]


def assert_internal(status: int, lines: list[str], kind: str, folder: Path) -> None:
    """The three lines of an internal error, and the traceback in the file they name."""
    assert status == EX_SOFTWARE, lines
    assert len(lines) == 3, lines
    assert lines[0].startswith(f"internal error: {kind}: ") and "a fault deep inside" in lines[0]
    assert "fault of the referee" in lines[1]
    assert "report it" in lines[1] and "with the command and this message" in lines[1]
    assert lines[2].startswith("the traceback is in ")
    saved = Path(lines[2].removeprefix("the traceback is in "))
    assert saved.parent == folder
    text = saved.read_text()
    assert "Traceback (most recent call last)" in text and "a fault deep inside" in text
    assert "to_dict" in text or "parse_players" in text   # where it came from


@pytest.mark.parametrize("kind", ["ValueError", "KeyError", "OSError"])
def test_a_fault_inside_a_command_is_an_internal_error(
        kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tempfile

    from referee.engine.rules import RuleSet

    def broken(self: RuleSet) -> dict:
        raise fault(kind)

    monkeypatch.setattr(RuleSet, "to_dict", broken)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.delenv("REFEREE_DEBUG", raising=False)
    status, lines = run("rules", "classic")
    assert_internal(status, lines, kind, tmp_path)


def test_a_fault_while_reading_the_options_is_an_internal_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tempfile

    from referee.league import config

    def broken(value: object, where: str) -> tuple[int, int]:
        raise fault("ValueError")

    monkeypatch.setattr(config, "parse_players", broken)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.delenv("REFEREE_DEBUG", raising=False)
    status, lines = run("league", "--players", "3", str(tmp_path / "a.toml"))
    assert_internal(status, lines, "ValueError", tmp_path)
