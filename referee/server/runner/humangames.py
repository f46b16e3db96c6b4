"""Games students play in the browser: a human seat against bots.

The human seat is a bot like any other (referee.game.human): a HumanBot served over the
protocol on a unix socket, in a thread of the runner with its own event loop, under the human
seat's limits from the season file (`human_move_seconds`, `human_bank_seconds`), so the
referee's clock and failure policy apply unchanged. Its decisions come from the page through
the club's database: the seat writes a HumanMove (the roll and the legal choices) and polls
for the answer the page posts, until the referee gives up on it (a timeout strike: the
substitute moves; three of them forfeit the seat and the game plays on to its end without it).

As the game goes, the seat keeps the game's public steps (the narration of `referee play`,
without any bot's notes or output) and the board in the HumanGame row, so the page redraws
the game so far after a reload. The record goes to DIR/humangames/<id>.json, its human seat
marked `"human": true` and the other students' bots' output left out, as for test games.
No human game ever enters the season's store: none is rated.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import re
import threading
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from django.db import transaction
from django.utils import timezone

from referee.bots.errors import told
from referee.bots.spec import BotSpec, Limits, capped_limits, load_spec
from referee.engine import Game, GameRecord
from referee.engine.actions import Action
from referee.engine.view import View
from referee.game.human import HUMAN_VERSION, human_seat_server
from referee.game.single import play_one
from referee.league.stored import StoredLeague
from referee.present.render import Narrator, money, notes_text, target_name
from referee.present.text import safe_line
from referee.server.club.models import HumanGame, HumanMove, Job
from referee.server.runner import jobqueue
from referee.server.runner.clubdb import names_by_league_name, notify, spec_path
from referee.server.runner.logline import log
from referee.server.runner.testgames import HIDDEN
from referee.server.shared.clubfolder import ClubFolder
from referee.server.shared.database import Db
from referee.util.seeds import draw_secret
from referee.util.sockets import socket_address

POLL_S = 0.2            # how often the human seat looks for the page's answer
PLAYER_SEAT = HumanGame.PLAYER_SEAT
INTERRUPTED = "the season runner stopped during the game; start a new one"


@dataclass(frozen=True)
class HumanRequest:
    """A human game to play: the player and the opponents' specs, in seat order after them."""

    id: int
    owner_id: int
    player: str                              # the human seat's name in the record
    seats: tuple[tuple[str, Path], ...]      # (league name, spec) of each opponent


def seat_name(username: str, taken: Collection[str] = ()) -> str:
    """The human seat's name as people read it: the player's username (in the characters a
    spec name has); `-player` after it in the rare case an opponent's league name is the
    same. The page adds "(you)" for the player."""
    name = re.sub(r"[^A-Za-z0-9._-]", "-", username)[:50] or "player"
    return f"{name}-player" if name in taken else name


# ---------------------------------------------------------------- the database (db thread)

def human_request(data: Path, game_id: int) -> HumanRequest:
    """What the runner needs to play game `game_id` in the browser, claimed from the job
    queue (referee.server.runner.jobqueue.claim)."""
    game = HumanGame.objects.select_related("owner").get(pk=game_id)
    opponents = game.opponents.select_related("bot").order_by("id")
    taken = {v.league_name for v in opponents}
    return HumanRequest(game.pk, game.owner_id, seat_name(game.owner.username, taken),
                        tuple((v.league_name, spec_path(data, v)) for v in opponents))


def fail_interrupted() -> int:
    """Human games a runner that died left running cannot go on (their player's seat and the
    bots' state are gone): they end as failed, saying why. Their count."""
    running = list(HumanGame.objects.filter(state=HumanGame.RUNNING))
    for game in running:   # saved one by one: each one's job ends with it
        game.state, game.finished_at, game.error = HumanGame.FAILED, timezone.now(), INTERRUPTED
        game.save(update_fields=["state", "finished_at", "error"])
    return len(running)


def save_progress(game_id: int, steps: list[str], board: dict[str, Any],
                  names: list[str], limits: str) -> None:
    """The game's public steps and board as they stand (the page redraws from them)."""
    HumanGame.objects.filter(pk=game_id).update(steps=steps, board=board, names=names,
                                                limits=limits)


def open_question(game_id: int, number: int, question: dict[str, Any]) -> None:
    """Ask the page question `number` (earlier ones still open are closed: the referee moved
    on from them)."""
    with transaction.atomic():
        HumanMove.objects.filter(game_id=game_id, state=HumanMove.OPEN).update(
            state=HumanMove.EXPIRED)
        HumanMove.objects.create(game_id=game_id, number=number, question=question)


def answer_of(game_id: int, number: int) -> int | None:
    """The choice the page posted for question `number`, or None while there is none."""
    return (HumanMove.objects.filter(game_id=game_id, number=number, state=HumanMove.ANSWERED)
            .values_list("choice", flat=True).first())


def close_question(game_id: int, number: int) -> None:
    """Question `number` is no longer asked (the referee moved on without its answer)."""
    HumanMove.objects.filter(game_id=game_id, number=number, state=HumanMove.OPEN).update(
        state=HumanMove.EXPIRED)


def finish_human_game(game_id: int, record_file: str, error: str) -> None:
    """A human game's end: its record file (relative to DIR), or why it could not be played."""
    with transaction.atomic():
        HumanMove.objects.filter(game_id=game_id, state=HumanMove.OPEN).update(
            state=HumanMove.EXPIRED)
        game = HumanGame.objects.get(pk=game_id)
        game.state = HumanGame.FAILED if error else HumanGame.DONE
        game.finished_at, game.record_file = timezone.now(), record_file
        game.error = safe_line(error, limit=300)
        game.save(update_fields=["state", "finished_at", "record_file", "error"])
        if error:
            notify(game.owner_id, f"your game {game.pk} in the browser could not be played: "
                                  f"{game.error}")


# ---------------------------------------------------------------- what the page draws

def board_of(game: Game, names: list[str]) -> dict[str, Any]:
    """The casinos (notes, each seat's dice on them) and the seats (money, dice left) now."""
    casinos, seats, _, _ = game.public_parts()
    return {
        "round": game.round + 1,
        "casinos": [{"name": target_name(c.target), "target": c.target,
                     "notes": [money(n) for n in c.notes],
                     "dice": [{"seat": s, "count": c.count(s)} for s in range(game.players)
                              if c.count(s)],
                     "neutral": c.neutral} for c in casinos],
        "seats": [{"seat": s.seat, "name": names[s.seat], "money": money(s.money),
                   "notes": s.notes, "dice": s.dice, "big": s.big_dice} for s in seats],
    }


def question_of(view: View, number: int, deadline_s: float) -> dict[str, Any]:
    """The roll and the legal choices as the page shows them (labels only: the answer is an
    index into them)."""
    roll = view.roll
    choices = []
    for action in view.legal:
        dice = roll.own.count(action.value) + roll.big.count(action.value)
        neutral = roll.neutral.count(action.value)
        what = f"{dice} {'die' if dice == 1 else 'dice'}" + (f" + {neutral} neutral"
                                                            if neutral else "")
        choices.append({"value": action.value, "target": target_name(action.target),
                        "label": f"{what} showing {action.value} on {target_name(action.target)}",
                        "notes": notes_text(view.casino(action.target).notes)
                        if not action.slot else ""})
    return {"number": number, "roll": list(roll.own), "big": list(roll.big),
            "neutral": list(roll.neutral), "choices": choices, "seconds": int(deadline_s)}


# ---------------------------------------------------------------- the human seat

class PageSeat:
    """The runner's side of one human seat: the match's observer (on the runner's loop) and
    the HumanBot's `ask` (on the human bot's thread), which talk to the page through the
    club's database on the runner's one database thread."""

    def __init__(self, request: HumanRequest, names: list[str], limits: Limits, db: Db,
                 loop: asyncio.AbstractEventLoop, idle_s: float = 180.0,
                 game_s: float = 3600.0) -> None:
        self.request, self.names, self.limits = request, names, limits
        self.idle_s = idle_s     # no answer this long: the player left (see ask)
        self.game_end = time.monotonic() + game_s   # the player's whole game ends here
        self.left = False
        self.db, self.loop = db, loop
        self.narrator = Narrator(names)
        self.steps: list[str] = []
        self.board: dict[str, Any] = {}
        self.lock = threading.Lock()
        self.number = 0
        self.moved_on = threading.Event()   # the referee placed for the seat: stop waiting
        self.bank_ms = float(limits.game_bank_ms or 0)
        self.stopped = threading.Event()
        self.writes: set[asyncio.Future[Any]] = set()

    def _write(self, fn: Callable[..., Any], *args: Any) -> None:
        """Run `fn(*args)` on the database thread, after the writes asked before it (the
        observer runs on the runner's loop; the one database thread keeps their order)."""
        task = asyncio.ensure_future(self.db(fn, *args))
        self.writes.add(task)
        task.add_done_callback(self.writes.discard)

    def observe(self, game: Game, events: list[tuple], decision: dict[str, Any] | None) -> None:
        """The match's observer: the public lines of the events and the board now."""
        seat = PLAYER_SEAT
        public: dict[str, Any] | None = None
        if decision is not None:   # a strike or a forced move is the table's to see; notes not
            public = {key: decision[key] for key in ("strike", "auto") if key in decision}
            if public.get("strike") and decision.get("seat") == seat:
                public["detail"] = decision.get("detail", "")
        with self.lock:
            for event in events:
                self.steps += self.narrator.lines(event, public if event[0] == "place"
                                                  else None)
                if event[0] == "place" and event[1] == seat:
                    self.moved_on.set()
            self.board = board_of(game, self.names)
            steps, board = list(self.steps), self.board
        self._write(save_progress, self.request.id, steps, board, self.names,
                    limit_words(self.limits))

    def ask(self, view: View) -> Action:
        """The HumanBot's choose(): write the question, wait for the page's answer until the
        referee's deadline for it (the decision time plus what is left of the bank) or until
        the player has been idle `idle_s` or their game's time is up: then the player has
        left, and this and every later question is answered at once without a move (each a
        strike: the seat forfeits within `strikes_to_forfeit` questions and the bots finish
        the game in seconds)."""
        if self.left:
            return cast(Action, None)   # a decision without an action: a strike
        asked = time.monotonic()
        self.number += 1
        number = self.number
        deadline_ms = float(self.limits.decision_ms or 0) + self.bank_ms
        shown_s = min(deadline_ms / 1000, self.idle_s)
        self.moved_on.clear()
        self._call(open_question, self.request.id, number, question_of(view, number, shown_s))
        choice = None
        # A little past the referee's deadline (its clock started before ours): by then the
        # referee struck the seat and moved on, and the observer said so.
        end = asked + deadline_ms / 1000 + 1.0
        idle_end = min(asked + self.idle_s, self.game_end)
        while choice is None and not self.moved_on.is_set() and not self.stopped.is_set() \
                and time.monotonic() < end:
            if time.monotonic() >= idle_end:
                return self._leave(number, asked + self.idle_s > self.game_end)
            choice = self._call(answer_of, self.request.id, number)
            if choice is None:
                self.moved_on.wait(POLL_S)
        used_ms = (time.monotonic() - asked) * 1000
        self.bank_ms = max(0.0, self.bank_ms - max(0.0, used_ms - (self.limits.decision_ms
                                                                   or 0)))
        if choice is None or not 0 <= choice < len(view.legal):
            self._call(close_question, self.request.id, number)
            return view.legal[0]   # too late: the referee has its substitute move already
        return view.legal[choice]

    def _leave(self, number: int, time_up: bool) -> Action:
        """The player did not answer question `number` within `idle_s` (or before their
        game's time was up): they left. The page says so; the answer carries no move (a
        strike), as every later one will."""
        self.left = True
        self._call(close_question, self.request.id, number)
        why = "the game's time is up" if time_up else f"no answer for {self.idle_s:g} s"
        with self.lock:
            self.steps.append(f"{why}: the player has left, and their seat forfeits the game")
            steps, board = list(self.steps), self.board
        self._call(save_progress, self.request.id, steps, board, self.names,
                   limit_words(self.limits))
        return cast(Action, None)

    def _call(self, fn: Callable[..., Any], *args: Any) -> Any:
        """`fn(*args)` on the database thread, from the human bot's thread; its result."""
        async def call() -> Any:
            return await self.db(fn, *args)

        return asyncio.run_coroutine_threadsafe(call(), self.loop).result()

    async def flushed(self) -> None:
        """Wait for the progress writes still under way."""
        if self.writes:
            await asyncio.gather(*self.writes, return_exceptions=True)


def limit_words(limits: Limits) -> str:
    """'5 min per move, 30 min bank' (as `referee play` says it), in seconds below a minute."""
    def words(ms: int | None) -> str:
        seconds = (ms or 0) / 1000
        return f"{seconds / 60:g} min" if seconds >= 60 else f"{seconds:g} s"

    return f"{words(limits.decision_ms)} per move, {words(limits.game_bank_ms)} bank"


def human_limits(move_s: int, bank_s: int) -> Limits:
    """The human seat's limits from the season file's keys."""
    return Limits(decision_ms=move_s * 1000, game_bank_ms=bank_s * 1000)


async def play_human_game(db: Db, data: Path, request: HumanRequest, stored: StoredLeague,
                          limits: Limits, timeout: float, idle_s: float = 180.0,
                          game_s: float = 3600.0) -> None:
    """Play one claimed human game under the season's rules and `[limits]` (the bots') and the
    human seat's `limits` (the player leaves after `idle_s` without an answer, or `game_s`
    into the game), and record it (or say why it could not be played)."""
    owners = await db(names_by_league_name)
    names = [request.player, *(name for name, _ in request.seats)]
    seat = PageSeat(request, names, limits, db, asyncio.get_running_loop(), idle_s, game_s)
    with socket_address("referee-human-") as address:
        human = human_seat_server(request.player, seat.ask, address)
        try:
            specs = [BotSpec(name=request.player, address=address, limits=limits),
                     *(capped_limits(dataclasses.replace(load_spec(path), name=name),
                                     stored.limits) for name, path in request.seats)]
            human.start()
            result = await asyncio.wait_for(
                play_one(specs, stored.rules, draw_secret(), observer=seat.observe,
                         options=stored.options, sandbox=None), timeout)
        except TimeoutError:
            await _finish(db, seat, request, "", f"not finished within {timeout:.0f} s")
            return
        except Exception as exc:  # noqa: BLE001 - a bot that cannot start, a spec gone: one line
            mine = {name for name, (_, _, owner) in owners.items() if owner == request.owner_id}
            await _finish(db, seat, request, "", told(exc, mine))
            return
        finally:
            seat.stopped.set()
            human.stop()
            await asyncio.to_thread(human.join)
    relative = write_record(data, request, result.record, owners)
    if relative is None:
        await _finish(db, seat, request, "", "its record could not be written")
        return
    await _finish(db, seat, request, relative, "")


async def _finish(db: Db, seat: PageSeat, request: HumanRequest, record_file: str,
                  error: str) -> None:
    await seat.flushed()
    await db(finish_human_game, request.id, record_file, error)


def write_record(data: Path, request: HumanRequest, record: GameRecord,
                 owners: dict[str, tuple[str, int, int | None]]) -> str | None:
    """Write the game's record as DIR/humangames/<id>.json: the human seat marked, the output
    of bots that are not the player's own left out. Its path relative to DIR (None: the disk
    refused it, and nothing half-written stays)."""
    for bot in record.meta.get("bots", []):
        if bot.get("seat") == PLAYER_SEAT:
            bot["human"], bot["version"] = True, HUMAN_VERSION
    shown = record.to_json()
    names = [request.player, *(name for name, _ in request.seats)]
    own = {name for name in names if owners.get(name, ("", 0, -1))[2] == request.owner_id}
    shown["output"] = [text if name in own or index == PLAYER_SEAT else HIDDEN
                       for index, (name, text) in enumerate(
                           zip(names, shown.get("output", []), strict=False))]
    shown["human_game"] = {"id": request.id, "unrated": True, "seats": names}
    relative = ClubFolder(data).human_game_record(request.id)
    path = data / relative
    partial = path.with_suffix(".part")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial.write_text(json.dumps(shown), encoding="utf-8")
        os.replace(partial, path)
    except OSError:
        partial.unlink(missing_ok=True)
        return None
    return relative


async def human_game_queue(db: Db, data: Path, stored: StoredLeague, settings: Any,
                           idle: float = 0.5) -> None:
    """Claim and play queued human games forever, up to `human_games_at_once` at a time (each
    waits on a person far more than on the machine)."""
    failed = await db(fail_interrupted)
    if failed:
        log(f"{failed} games in the browser ended: the runner stopped during them")
    running: set[asyncio.Task[None]] = set()
    while True:
        if len(running) >= settings.human_games_at_once:
            await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
            continue
        job = await db(jobqueue.claim, Job.BROWSER_GAME)
        if job is None:
            await asyncio.sleep(idle)
            continue
        request = await db(human_request, data, job.ref)
        limits = human_limits(settings.human_move_seconds, settings.human_bank_seconds)
        idle, game_s = settings.human_idle_seconds, settings.human_game_seconds
        # The player's part ends by `game_s` (they leave at the question after it, a move's
        # time at most); the bots finish the rest within a test game's time.
        timeout = (game_s + min(settings.human_move_seconds + settings.human_bank_seconds, idle)
                   + settings.test_game_timeout_s)
        task = asyncio.create_task(
            play_human_game(db, data, request, stored, limits, timeout, idle, game_s),
            name=f"human game {request.id}")
        running.add(task)
        task.add_done_callback(running.discard)
