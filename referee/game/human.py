"""`referee play`: a person takes a seat in a game against bots, in the terminal.

A human seat is a bot like any other: `HumanBot` is an SDK bot served over the same gRPC
protocol (in a thread of this process, on a unix socket), so the referee's clock, failure
policy and record treat it as they treat every bot. Its spec only has generous limits of its
own (HUMAN_LIMITS), and the record marks its seat `"human": true` so that no season rates it.

Three threads share the work: the referee plays the game in one (its own event loop), the
human bot serves its socket in another, and the main thread owns the terminal. Everything the
person sees goes through one queue to the main thread, in the order it happened: the moves
the referee observed before it asked the human seat are printed before the question.
"""

from __future__ import annotations

import asyncio
import logging
import queue
import shutil
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from referee.bots.spec import BotSpec, Limits
from referee.engine import Game, GameRecord, RuleSet
from referee.engine.actions import Action
from referee.engine.view import View
from referee.game.match import MatchOptions, MatchResult
from referee.game.single import play_one
from referee.present.render import Narrator, money, notes_text, printable, target_name
from referee.sdk.bot import Bot, serve
from referee.util.numbers import NumberError, whole_number
from referee.util.seeds import keyed_seed, opaque_id
from referee.util.sockets import socket_folder

# A person thinks in seconds to minutes: 5 minutes per decision plus a 30-minute bank, stated
# in the prompt. Past them the referee's usual timeout strike and substitute move apply.
HUMAN_LIMITS = Limits(decision_ms=300_000, game_bank_ms=1_800_000)
HUMAN_VERSION = "human"
# Said before each round's payouts, so the lines that follow read as the rules' steps.
SCORING = ("  scoring: on each casino equal counts cancel first (R21), then the highest count "
           "takes the highest note, the next count the next (R22); notes nobody takes leave "
           "(R23)")


def describe_limits(limits: Limits) -> str:
    """'5 min per move, 30 min bank' style text for the prompt and the docs."""
    return (f"{limits.decision_ms / 60000:g} min per move, "
            f"{limits.game_bank_ms / 60000:g} min bank")


def board_lines(view: View, names: Sequence[str]) -> list[str]:
    """The casinos as `referee show` draws the dice before scoring: each target's notes and
    the dice on it per seat (big dice count 2), then every seat's money and dice left."""
    # A bot that sits at the table twice is told apart by its seat.
    labels = [name if names.count(name) == 1 else f"{name} (seat {seat})"
              for seat, name in enumerate(names)]
    lines = ["  board:"]
    for casino in view.casinos:
        present = [f"{labels[s]} {casino.count(s)}" for s in range(view.players)
                   if casino.count(s)]
        if casino.neutral:
            present.append(f"neutral {casino.neutral}")
        lines.append(f"    {target_name(casino.target)} ({notes_text(casino.notes) or 'no notes'})"
                     f": {', '.join(present) or '-'}")
    for seat in view.seats:
        big = f" + {seat.big_dice} big" if seat.big_dice else ""
        dice = "die" if seat.dice + seat.big_dice == 1 else "dice"
        lines.append(f"    {labels[seat.seat]}: {money(seat.money)} in {seat.notes} notes, "
                     f"{seat.dice}{big} {dice} left")
    return [printable(line) for line in lines]


def choice_lines(view: View) -> list[str]:
    """The roll and the legal choices, numbered from 1."""
    roll = view.roll
    text = " ".join(map(str, roll.own))
    if roll.big:
        text += f" | big {' '.join(map(str, roll.big))}"
    if roll.neutral:
        text += f" | neutral {' '.join(map(str, roll.neutral))}"
    lines = [f"  your roll: {text}"]
    for number, action in enumerate(view.legal, start=1):
        dice = roll.own.count(action.value) + roll.big.count(action.value)
        neutral = roll.neutral.count(action.value)
        what = f"{dice} {'die' if dice == 1 else 'dice'}" + (f" + {neutral} neutral"
                                                            if neutral else "")
        lines.append(f"    {number}. {what} showing {action.value} on "
                     f"{target_name(action.target)}")
    return lines


def read_choice(text: str, legal: Sequence[Action]) -> Action | None:
    """The action a typed answer names (its number), or None if it names none."""
    try:
        number = whole_number(text.strip(), "your move", 1, len(legal), digits=3)
    except NumberError:
        return None
    return legal[number - 1]


class HumanBot(Bot):
    """A bot whose decisions come from a person: `choose` hands the view to `ask` and waits
    for the action it returns (the person's, through the terminal thread)."""

    max_concurrent_games = 1

    def __init__(self, name: str, ask: Callable[[View], Action]) -> None:
        self.name = name
        self.version = HUMAN_VERSION
        self.ask = ask

    def choose(self, view: View) -> Action:
        """The person's choice for this decision request."""
        return self.ask(view)


@dataclass
class _Ask:
    """A question for the person: the view, and where the answer goes."""

    view: View
    answer: queue.Queue[Action | None] = field(default_factory=queue.Queue)


@dataclass
class _Finished:
    """The game ended (result) or the referee failed (error)."""

    result: MatchResult | None = None
    error: BaseException | None = None


class Interrupted(Exception):
    """The person stopped the game (Ctrl-C, or the input ended); `record` is what was played
    and `by_ctrl_c` tells which."""

    def __init__(self, record: GameRecord, by_ctrl_c: bool) -> None:
        super().__init__("interrupted" if by_ctrl_c else "input ended")
        self.record = record
        self.by_ctrl_c = by_ctrl_c


@dataclass
class PlaySession:
    """One game with a person in seat `seat` and `opponents` in the other seats, in order.

    `read` reads a line from the person (input()); `write` prints a line (click.echo)."""

    rules: RuleSet
    opponents: Sequence[BotSpec]
    seed: int
    seat: int
    name: str
    read: Callable[[str], str]
    write: Callable[[str], None]
    sandbox: bool | None = None
    limits: Limits = HUMAN_LIMITS
    inbox: queue.Queue[Any] = field(default_factory=queue.Queue)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _events: list[tuple] = field(default_factory=list)
    _decisions: list[dict[str, Any]] = field(default_factory=list)
    _stopped: bool = False
    narrator: Narrator = field(init=False)   # tells the events (set by run)

    @property
    def game_id(self) -> str:
        """The game's id, from the seed as `referee match` makes it."""
        return opaque_id(self.seed, "match")

    def specs(self, address: str) -> list[BotSpec]:
        """The seats' specs: the human bot's at `address` in `seat`, the opponents around it."""
        human = BotSpec(name=self.name, address=address, limits=self.limits)
        specs = list(self.opponents)
        specs.insert(self.seat, human)
        return specs

    def names(self) -> list[str]:
        """Each seat's name as the narration shows it."""
        return [spec.name for spec in self.specs("unix:/")]

    # --- the referee's thread -----------------------------------------------------------

    def observe(self, game: Game, events: list[tuple], decision: dict[str, Any] | None) -> None:
        """The match's observer: keep the events (for a record if the person stops) and send
        their lines to the terminal."""
        with self._lock:
            if self._stopped:
                return   # what happens after Ctrl-C is not part of the game played
            self._events += events
            if decision is not None:
                self._decisions.append(decision)
            lines = []
            for event in events:
                lines += self.narrator.lines(event, decision if event[0] == "place" else None)
                if event[0] == "score" and event[1] == 1:
                    lines.insert(-1, SCORING)
            self.inbox.put(lines)

    def decisions(self) -> list[dict[str, Any]]:
        """The decisions played so far (each seat's, with its strike if it had one)."""
        with self._lock:
            return list(self._decisions)

    def ask(self, view: View) -> Action:
        """The human bot's choose(): ask the terminal thread and wait for its answer."""
        question = _Ask(view)
        self.inbox.put(question)
        action = question.answer.get()
        return action if action is not None else view.legal[0]   # stopping: any legal answer

    # --- the main thread ----------------------------------------------------------------

    def run(self) -> MatchResult:
        """Play the game, talking to the person on this thread; Interrupted if they stop."""
        self.narrator = Narrator(self.names(), details=True, rules=self.rules)
        # The human bot's "listening on" notice is the referee's business, not the player's.
        logging.getLogger("referee.sdk").setLevel(logging.WARNING)
        folder = socket_folder("referee-play-", "human.sock")
        address = f"unix:{folder / 'human.sock'}"
        human = human_seat_server(self.name, self.ask, address)
        referee = _Loop(lambda stop: self._referee(address, stop))
        asked: _Ask | None = None
        try:
            human.start()
            referee.start()
            while True:
                item = self.inbox.get()
                if isinstance(item, _Finished):
                    if item.error is not None:
                        raise item.error
                    assert item.result is not None
                    return item.result
                if isinstance(item, _Ask):
                    asked = item
                    item.answer.put(self._prompt(item.view))
                    asked = None
                else:
                    for line in item:
                        self.write(printable(line))
        except (KeyboardInterrupt, EOFError) as exc:
            raise Interrupted(self.snapshot(), isinstance(exc, KeyboardInterrupt)) from None
        finally:
            with self._lock:
                self._stopped = True
            referee.stop()
            if asked is not None:
                asked.answer.put(None)
            human.stop()
            referee.join()
            human.join()
            shutil.rmtree(folder, ignore_errors=True)

    async def _referee(self, address: str, stop: asyncio.Event) -> None:
        """Play the game until it ends or `stop` is set; tell the terminal thread."""
        game = asyncio.ensure_future(play_one(
            self.specs(address), self.rules, self.seed, observer=self.observe,
            options=MatchOptions(), sandbox=self.sandbox))
        stopping = asyncio.ensure_future(stop.wait())
        await asyncio.wait([game, stopping], return_when=asyncio.FIRST_COMPLETED)
        if not game.done():
            game.cancel()
        stopping.cancel()
        try:
            result = await game
        except asyncio.CancelledError:
            return
        except BaseException as exc:   # a bot that cannot start, a bug: the main thread says
            self.inbox.put(_Finished(error=exc))
            return
        self.mark_human(result.record)
        self.inbox.put(_Finished(result=result))

    def _prompt(self, view: View) -> Action:
        """Show the board, the roll and the numbered choices; ask until a number is legal."""
        for line in board_lines(view, self.names()) + choice_lines(view):
            self.write(line)
        question = f"  your move (1-{len(view.legal)}; {describe_limits(self.limits)}): "
        while True:
            answer = read_choice(self.read(question), view.legal)
            if answer is not None:
                return answer
            self.write(f"  please type a number from 1 to {len(view.legal)}")

    def mark_human(self, record: GameRecord) -> None:
        """Mark the human seat in the record's bots: a season never rates such a game."""
        for bot in record.meta.get("bots", []):
            if bot.get("seat") == self.seat:
                bot["human"] = True
                bot["version"] = HUMAN_VERSION

    def snapshot(self) -> GameRecord:
        """The record of what was played so far (the events the person was shown)."""
        with self._lock:
            self._stopped = True
            names = self.names()
            record = GameRecord(
                rules=self.rules, players=len(names), seed=keyed_seed(self.seed, "match"),
                events=list(self._events),
                meta={"game_id": self.game_id, "interrupted": True,
                      "bots": [{"seat": s, "name": n, "version": ""}
                               for s, n in enumerate(names)],
                      "decisions": list(self._decisions)})
        self.mark_human(record)
        return record


class _Loop:
    """A coroutine run in an event loop of its own thread, stopped by setting its event."""

    def __init__(self, make: Callable[[asyncio.Event], Any]) -> None:
        self.make = make
        self.loop: asyncio.AbstractEventLoop | None = None
        self.event: asyncio.Event | None = None
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        asyncio.run(self._main())

    async def _main(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.event = asyncio.Event()
        self.ready.set()
        await self.make(self.event)

    def start(self) -> None:
        """Start the thread and wait until its loop runs."""
        self.thread.start()
        self.ready.wait()

    def stop(self) -> None:
        """Ask the coroutine to stop (it sees its event set)."""
        if self.loop is not None and self.event is not None and self.thread.is_alive():
            self.loop.call_soon_threadsafe(self.event.set)

    def join(self) -> None:
        """Wait for the thread to end (if it started)."""
        if self.thread.ident is not None:
            self.thread.join()


def human_seat_server(name: str, ask: Callable[[View], Action], address: str) -> _Loop:
    """A human seat named `name` served as a bot at `address` (a gRPC address) in a thread of
    its own, asking `ask` for each decision: start() it before the game, stop() and join() it
    after. The terminal's game and the club's page both seat a person this way."""
    return _Loop(lambda stop: serve(HumanBot(name, ask), address, stop=stop))


def save_record(record: GameRecord, path: Path) -> None:
    """Write `record` as JSON (the format `referee show`, `verify` and the viewer read)."""
    import json

    path.write_text(json.dumps(record.to_json(), indent=1) + "\n", encoding="utf-8")
