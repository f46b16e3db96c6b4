"""`referee replay`: a stored game played again with a local bot in one seat.

The engine rebuilds the game from the record's rules, seats and seed (the same dice and notes),
the other seats play their recorded moves, and the local bot is asked at each of its seat's
turns exactly as the season asked its bot: the same game id, seat names, request ids and
time control. The first answer that differs from the record, or that earns a strike (timeout,
illegal, malformed, protocol, crash), stops the replay; a `Stop` says what the season recorded
there and what the local bot did now. A deterministic bot replayed against its own game
reproduces it to the end.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from referee.bots.client import Reply
from referee.bots.runtime import Roster
from referee.bots.spec import BotSpec
from referee.engine import Game, GameRecord
from referee.engine.actions import Action
from referee.engine.replay import replay
from referee.engine.view import View
from referee.errors import FailureKind, InputError, UserError
from referee.present.text import safe_line
from referee.protocol import convert
from referee.util.seeds import request_id


class RerunInputError(InputError):
    """The record cannot be replayed with a bot (one line: what is missing or wrong)."""


@dataclass(frozen=True)
class Stop:
    """Where the local bot first parted from the record: the move, the state it saw, what the
    season recorded and what the local bot did now."""

    move: int          # the game's placement number, from 1
    turn: int          # the seat's own decision number, from 1
    view: View         # the state the seat was asked in
    season: str        # what the season's record says happened at this move
    local: str         # what the local bot did
    failed: bool       # the local bot failed (a strike), rather than chose another move


@dataclass(frozen=True)
class RerunResult:
    """The outcome of a replay: `stop` is None when every answer matched the record."""

    seat: int
    names: list[str]
    moves: int         # placements in the record
    answered: int      # answers of the local bot that matched the record
    stop: Stop | None
    output: str        # what the local bot printed in this game


def seat_names(record: GameRecord) -> list[str]:
    """The seats' bot names as the record gives them."""
    bots = record.meta.get("bots")
    names = [""] * record.players
    if isinstance(bots, list):
        for entry in bots:
            if isinstance(entry, dict) and isinstance(entry.get("seat"), int) \
                    and 0 <= entry["seat"] < record.players:
                names[entry["seat"]] = safe_line(entry.get("name", ""))
    return names


def find_seat(record: GameRecord, bot_name: str, seat: int | None) -> int:
    """The seat to replay: `seat` if given, else the one seat whose bot is `bot_name` (or one
    of its season versions, `bot_name.vN`); RerunInputError otherwise."""
    names = seat_names(record)
    listed = ", ".join(f"{s}: {name or '?'}" for s, name in enumerate(names))
    if seat is not None:
        if not 0 <= seat < record.players:
            raise RerunInputError(f"the game has seats 0-{record.players - 1}, not {seat} "
                                  f"(seats: {listed})")
        return seat
    mine = [s for s, name in enumerate(names)
            if name == bot_name or (name.startswith(bot_name + ".v")
                                    and name[len(bot_name) + 2:].isdigit())]
    if len(mine) != 1:
        how = "no seat" if not mine else f"{len(mine)} seats"
        raise RerunInputError(f"{how} of the game played {bot_name!r}: give --seat "
                              f"(seats: {listed})")
    return mine[0]


def replayable_decisions(record: GameRecord) -> list[dict[str, Any]]:
    """The record's decisions, checked against its placements; RerunInputError if they
    cannot be followed."""
    decisions = record.meta.get("decisions")
    if not isinstance(decisions, list):
        raise RerunInputError("the record has no decisions: only a game played by bots "
                              "(a league's, a season's, `referee match --replay`) can be "
                              "replayed with a bot")
    actions = record.actions()
    if len(decisions) != len(actions):
        raise RerunInputError(f"the record has {len(decisions)} decisions for "
                              f"{len(actions)} placements")
    for number, (entry, action) in enumerate(zip(decisions, actions, strict=True), start=1):
        recorded = entry.get("action") if isinstance(entry, dict) else None
        if not isinstance(recorded, list) or len(recorded) != 2 or \
                Action(*recorded) != action:
            raise RerunInputError(f"the record's decision {number} does not match its "
                                  f"placement {action}")
    try:
        divergence = replay(record)
    except (UserError, ValueError, TypeError, AttributeError, IndexError) as exc:
        # The engine's own checks of the rules, seats and seed: the record's fault here.
        raise RerunInputError(f"the record cannot be played: {exc}") from None
    if divergence is not None:
        raise RerunInputError(f"the record does not follow from its seed and moves: "
                              f"{divergence}")
    return decisions


def recorded_text(entry: Mapping[str, Any], forfeits: Sequence[Any]) -> str:
    """What the season's record says of the seat's move: the move, or its strike and the
    substitute move, or that the seat had forfeited (with why)."""
    action = Action(*entry["action"])
    if entry.get("strike"):
        return (f"a {safe_line(entry['strike'])} strike: {safe_line(entry.get('detail', ''))}"
                f" (the referee played the substitute move {action})")
    if entry.get("auto") == "forfeited":
        reason = next((f.get("reason", "") for f in forfeits
                       if isinstance(f, dict) and f.get("seat") == entry.get("seat")), "")
        return (f"the seat had forfeited the game ({safe_line(reason) or 'no reason kept'}): "
                f"its bot was not asked; the referee played {action}")
    return f"played {action}"


async def rerun(record: GameRecord, spec: BotSpec, seat: int, *,
                sandbox: bool | None = None) -> RerunResult:
    """Replay `record` with the bot of `spec` in `seat` (see the module's docstring).
    RerunInputError for a record that cannot be replayed; BotStartError if the bot cannot
    start."""
    decisions = replayable_decisions(record)
    names = seat_names(record)
    forfeits = record.meta.get("forfeits")
    forfeits = forfeits if isinstance(forfeits, list) else []
    game_id = str(record.meta.get("game_id") or "replay")
    # The season told its bots whether forced moves are made for them; a record shows it
    # by its "forced" decisions (without any, the game had no forced move to tell it by).
    autoplay = any(isinstance(d, dict) and d.get("auto") == "forced" for d in decisions)
    limits = spec.limits
    async with Roster([spec], sandbox=sandbox) as roster:
        await roster.start()
        runner = roster.runners[spec.name]
        lease = await runner.lease()
        stream = lease.open_game()
        try:
            await stream.send(convert.game_start(
                game_id, record.rules, names, seat, decision_ms=limits.decision_ms,
                game_bank_ms=limits.game_bank_ms, autoplay_forced=autoplay),
                (limits.decision_ms + limits.game_bank_ms) / 1000)
            stop, answered = await _play(record, decisions, forfeits, seat, stream, limits)
            end = None
            if stop is None:
                end = convert.game_end(
                    game_id, record.meta.get("places") or [1] * record.players,
                    _final(record, "money"), _final(record, "notes"),
                    forfeited_seats=[any(isinstance(f, dict) and f.get("seat") == s
                                         for f in forfeits) for s in range(record.players)]
                ).end
            await stream.finish(end)
            output = lease.output()
        finally:
            await runner.release(lease)
    return RerunResult(seat, names, len(decisions), answered, stop, output)


def _final(record: GameRecord, key: str) -> list[int]:
    """The end event's money or note counts per seat."""
    end = record.final()
    if end is None:
        return [0] * record.players
    money, notes = end[1], end[2]
    return list(money) if key == "money" else list(notes)


async def _play(record: GameRecord, decisions: list[dict[str, Any]], forfeits: list[Any],
                seat: int, stream: Any, limits: Any) -> tuple[Stop | None, int]:
    """Follow the record move by move, asking the local bot at its seat's turns; the first
    stop and how many answers matched before it."""
    game = Game(record.rules, record.players, record.seed)
    bank_ms = float(limits.game_bank_ms)
    last_latency = 0
    asked = 0      # the season's decision requests so far, every seat's (their ids follow it)
    turn = 0
    for move, entry in enumerate(decisions, start=1):
        recorded = Action(*entry["action"])
        auto = entry.get("auto")
        if not auto:
            asked += 1
        if game.current_seat != seat or auto == "forced":
            game.apply(recorded)
            continue
        turn += 1
        view = game.view(seat)
        # A forfeited seat was not asked: the local bot gets the id the next request would.
        rid = request_id(record.seed, asked if not auto else asked + 1)
        message = convert.request_message(view, rid, int(bank_ms), last_latency)
        reply: Reply = await stream.decide(message, rid, (limits.decision_ms + bank_ms) / 1000)
        season = recorded_text(entry, forfeits)
        if reply.strike is None and reply.action not in view.legal:
            legal = ", ".join(map(str, view.legal))
            reply = Reply(None, FailureKind.ILLEGAL,
                          f"{reply.action} is not legal here (legal: {legal})", reply.latency_us)
        if reply.strike is not None:
            local = f"a {reply.strike} strike: {safe_line(reply.detail)}"
            return Stop(move, turn, view, season, local, failed=True), turn - 1
        if auto or entry.get("strike") or reply.action != recorded:
            return Stop(move, turn, view, season, f"played {reply.action}",
                        failed=False), turn - 1
        overrun = reply.latency_us / 1000 - limits.decision_ms
        if overrun > 0:
            bank_ms = max(0.0, bank_ms - overrun)
        last_latency = reply.latency_us
        game.apply(recorded)
    return None, turn


def report_lines(result: RerunResult) -> list[str]:
    """What `referee replay` prints: the stop as one block (the move, the state the bot saw,
    what the season recorded, what the local bot did), or that every answer matched."""
    from referee.game.human import board_lines, choice_lines

    mine = f"seat {result.seat} ({result.names[result.seat] or '?'})"
    stop = result.stop
    if stop is None:
        return [f"identical: your bot made every one of {mine}'s {result.answered} moves as "
                f"the record has them ({result.moves} moves in the game)"]
    view = stop.view
    word = "failed" if stop.failed else "deviated"
    before = (f"the {result.answered} before it matched" if result.answered
              else "its first")
    lines = [f"{word} at move {stop.move} of {result.moves} (round {view.round + 1}, "
             f"{mine}'s decision {stop.turn}, {before})",
             "what your bot saw:"]
    lines += board_lines(view, result.names)
    lines += choice_lines(view)
    lines += [f"recorded: {stop.season}", f"your bot now: {stop.local}"]
    return lines
