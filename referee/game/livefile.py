"""Games as they are played, for watchers in other processes (issue "Play and watch", item 4).

The referee appends each step of a game in progress to a small JSON Lines file, one per game,
in a league's (or season's) `live/` folder: a header (game id, rules, seats), then one line per
step (the events since the last step, in the record's JSON form, and the decision that made
them), then an end line. The file is removed once the game's record is stored, so the folder
holds exactly the games in play; a watcher follows a file to its end line (an open file stays
readable after it is removed) and then finds the record in the league's store.

The file never holds the game's seed, so it tells no roll before it is made. It does hold each
decision's think time and a bot's notes: readers decide what a viewer may see (`public_step`).
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from referee.engine.game import Game
from referee.engine.record import event_texts

SUFFIX = ".jsonl"
_COMPACT = (",", ":")
_dumps = json.JSONEncoder(separators=_COMPACT).encode


def decision_json(decision: dict[str, Any] | None) -> str:
    """The compact JSON text of a step's decision, as `json.dumps` writes it; the usual one
    (a bot's answer without strike or notes: seat, latency and action) written directly."""
    if decision is not None and len(decision) == 3:
        (k1, seat), (k2, latency), (k3, action) = decision.items()
        if (k1 == "seat" and k2 == "latency_us" and k3 == "action" and type(seat) is int
                and type(latency) is int and type(action) is list and len(action) == 2
                and type(action[0]) is int and type(action[1]) is bool):
            return (f'{{"seat":{seat},"latency_us":{latency},"action":[{action[0]},'
                    f'{"true" if action[1] else "false"}]}}')
    return _dumps(decision)


class LiveFile:
    """The writer of one game's live file; its `observe` is a play_match observer."""

    def __init__(self, path: Path, game_id: str, bots: list[str],
                 index: int | None = None) -> None:
        """`index`: the game's schedule index in its league (a season's game page is found
        by it), None for a game outside a schedule (a test game)."""
        self.path = path
        self.game_id = game_id
        self.bots = bots
        self.index = index
        self.file: IO[str] | None = None

    def _write(self, data: dict[str, Any]) -> None:
        self._write_text(json.dumps(data, separators=_COMPACT))

    def _write_text(self, line: str) -> None:
        if self.file is None:
            return
        # One write and a flush per line: a watcher never reads half a step for long, and
        # sees each move as soon as the referee has decided it.
        self.file.write(line + "\n")
        self.file.flush()

    def observe(self, game: Game, events: list[tuple], decision: dict[str, Any] | None) -> None:
        """play_match's observer: the header on the first call, then one line per step."""
        if self.file is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.file = self.path.open("w", encoding="utf-8")
            self._write({"game_id": self.game_id, "players": game.players,
                         "rules": game.rules.to_dict(), "bots": self.bots, "index": self.index,
                         "t": time.time()})
        # The same text as json.dumps of {"events": [...], "decision": ..., "t": ...}, the
        # events written by the record's own encoder (a step per decision: the referee's
        # hottest path after the protocol).
        # "t" as json writes a float: its repr (time.time() is always finite).
        self._write_text(f'{{"events":[{event_texts(events)}],"decision":'
                         f'{decision_json(decision)},"t":{time.time()!r}}}')

    def finish(self, ended: bool) -> None:
        """Write the end line (`ended`: the game was played out, else it was stopped), close
        the file and remove it."""
        if self.file is not None:
            self._write({"end": True, "finished": ended, "t": time.time()})
            self.file.close()
            self.file = None
        self.path.unlink(missing_ok=True)


class LiveFolder:
    """A league's `live/` folder: one LiveFile per game in play."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def clear(self) -> None:
        """Remove what a killed run left: those games are no longer in play."""
        for path in self.folder.glob(f"*{SUFFIX}"):
            path.unlink(missing_ok=True)

    def game(self, game_id: str, bots: list[str], index: int | None = None) -> LiveFile:
        """The live file of game `game_id` (a game id is a file name: g + hex digits)."""
        return LiveFile(self.folder / f"{game_id}{SUFFIX}", game_id, bots, index)


def games_in_play(folder: Path) -> list[Path]:
    """The live files of `folder` (a league's live/ folder), oldest first."""
    found = []
    for path in folder.glob(f"*{SUFFIX}"):
        with contextlib.suppress(FileNotFoundError):   # the game ended meanwhile
            found.append((path.stat().st_mtime, path))
    return [path for _, path in sorted(found)]


class LiveReader:
    """Reads a live file's complete lines as they are written, never blocking: the one reader
    behind `follow` (a thread or a terminal) and the club server's streams (an event loop)."""

    def __init__(self, file: IO[str]) -> None:
        self.file = file
        self.partial = ""
        self.ended = False          # the end line was read, or the file is not a live file
        self.quiet_since = time.monotonic()

    def ready(self) -> list[dict[str, Any]]:
        """The lines written since the last call (up to the end line), parsed; [] for none."""
        found: list[dict[str, Any]] = []
        while not self.ended:
            chunk = self.file.readline()
            if not chunk:
                break
            self.quiet_since = time.monotonic()
            self.partial += chunk
            if not self.partial.endswith("\n"):   # the rest is still being written
                continue
            line, self.partial = self.partial, ""
            try:
                data = json.loads(line)
            except ValueError:
                data = None
            if not isinstance(data, dict):   # not a file the referee wrote: stop here
                self.ended = True
                break
            found.append(data)
            self.ended = bool(data.get("end"))
        return found

    def quiet_for(self) -> float:
        """Seconds since the last line came."""
        return time.monotonic() - self.quiet_since


def follow(path: Path, poll: float = 0.05, idle_limit: float = 3600.0) -> Iterator[dict[str, Any]]:
    """The lines of a live file as they are written, up to its end line. Ends early (without
    an end line) if nothing is written for `idle_limit` s: a referee that was killed."""
    try:
        file = path.open(encoding="utf-8")
    except FileNotFoundError:   # the game ended before we looked
        return
    with file:
        reader = LiveReader(file)
        while not reader.ended:
            lines = reader.ready()
            yield from lines
            if not lines and not reader.ended:
                if reader.quiet_for() > idle_limit:
                    return
                time.sleep(poll)


def public_step(step: dict[str, Any]) -> dict[str, Any]:
    """A step as anyone who may see the game may see it: its events and the decision's seat,
    action and kind of fault, never a bot's notes or think time."""
    decision = step.get("decision")
    out: dict[str, Any] = {key: step[key] for key in ("events", "end", "finished")
                           if key in step}
    if isinstance(decision, dict):
        out["decision"] = {key: decision[key] for key in ("seat", "action", "auto", "strike")
                           if key in decision}
    return out
