"""One-off work on a dask worker for the club server: a version's check, a test game.

Imported on the workers by name (the tasks are these functions): nothing here needs Django.

Both come as one task each, with the bots' files by content (referee.league.executors.packs):
the worker unpacks them, checks them against their version or digest, and runs the work as it
would run here (the check as `referee check` under the guard with its time limit, the game with
`play_seeded`), so the club's machine runs no bot. Each answer names the worker that did the
work.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from distributed import get_worker

from referee.bots.build import cache_dir
from referee.bots.errors import BotStartError
from referee.checking.isolated import check_process
from referee.engine import RuleSet
from referee.game.match import MatchOptions, MatchResult
from referee.league.executors.packs import place_archive, unpack
from referee.league.executors.worker import ShippedBot, worker_label
from referee.present.text import safe_line


@dataclass(frozen=True)
class CheckJob:
    """A version's check as the club sends it: the folder holding its spec, packed, the spec's
    path in it, and an image archive the spec names (sent aside: the sandbox never reads it,
    so the pack may hold it empty), with its path in the folder and its digest."""

    pack: bytes
    version: str
    spec: str
    archive: bytes | None = None
    archive_path: str = ""
    archive_digest: str = ""


@dataclass(frozen=True)
class CheckDone:
    """What a check on a worker said: its first `keep` lines, how many there were in all, the
    last one not blank (its verdict), its exit status (None: stopped at its time limit), and
    the worker's name."""

    worker: str
    lines: list[str]
    count: int
    last: str
    returncode: int | None


def _inside(folder: Path, relative: str) -> Path:
    """`relative` below `folder`; ValueError for a path that leaves it."""
    path = PurePosixPath(relative)
    if path.is_absolute() or ".." in path.parts or not path.parts:
        raise ValueError(f"{relative!r} is not a path inside the bot's folder")
    return folder.joinpath(*path.parts)


def run_check_job(job: CheckJob, timeout: float, keep: int, write_max_mb: int | None = None,
                  limits: dict[str, int] | None = None) -> CheckDone:
    """The dask task of one check: unpack the folder into a fresh place in the worker's cache
    (its files checked against their version), put the image archive in place, run
    `referee check` there with its time limit, and remove the folder."""
    label = worker_label(get_worker())
    lines: list[str] = []
    count = 0
    last = ""

    async def line(text: str) -> None:
        nonlocal count, last
        count += 1
        last = text if text.strip() else last
        if count <= keep:
            lines.append(text)

    base = cache_dir() / "cluster" / "checks"
    base.mkdir(parents=True, exist_ok=True)
    place = Path(tempfile.mkdtemp(prefix="check-", dir=base))
    try:
        place.chmod(0o755)   # the sandboxed bot runs as another user: it must get in
        try:
            folder = unpack(job.pack, job.version, place, "check")
            if job.archive is not None:
                target = _inside(folder, job.archive_path)
                placed = place_archive(job.archive, job.archive_digest, target.name,
                                       place / "archive", "check")
                target.unlink(missing_ok=True)
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.move(placed, target)
            spec = _inside(folder, job.spec)
        except (BotStartError, ValueError, OSError) as exc:
            reason = exc.detail if isinstance(exc, BotStartError) else str(exc)
            said = safe_line(f"FAIL the bot's files on worker {label}: {reason}", limit=500)
            return CheckDone(label, [said], 1, said, 1)
        returncode = asyncio.run(check_process(spec, timeout, line, write_max_mb, limits))
        return CheckDone(label, lines, count, last, returncode)
    finally:
        shutil.rmtree(place, ignore_errors=True)


@dataclass(frozen=True)
class GameDone:
    """A test game on a worker: its result, or why it could not be played (one line)."""

    worker: str
    result: MatchResult | None
    error: str = ""
    failure: BotStartError | None = None   # a bot that could not start: whose output is whose


def run_test_game_job(bots: list[ShippedBot], rules: RuleSet, seed: int, game_id: str,
                      options: MatchOptions, timeout: float) -> GameDone:
    """The dask task of one test game: the bots unpacked (or their archives placed), checked
    and built on this worker, then one game of them (seed `seed`, id `game_id`), within
    `timeout` seconds."""
    from referee.game.single import play_seeded

    label = worker_label(get_worker())
    try:
        specs = [bot.local_spec(None) for bot in bots]
        result = asyncio.run(asyncio.wait_for(
            play_seeded(specs, rules, seed, game_id, options=options, sandbox=None), timeout))
    except TimeoutError:
        return GameDone(label, None, f"not finished within {timeout:.0f} s")
    except BotStartError as exc:   # sent whole: the runner shows its output to its owner only
        return GameDone(label, None, exc.told_to(False), exc)
    except Exception as exc:  # noqa: BLE001 - anything else a bot caused: one line, as here
        return GameDone(label, None, safe_line(str(exc), limit=300))
    result.record.meta["worker"] = label
    return GameDone(label, result)
