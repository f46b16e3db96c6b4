"""The stream between the referee and a bot under attack: real bot
processes from tests/bots/ over real gRPC, each fault provoked by the bot itself, never by a
timing margin. docs/protocol.md and docs/security.md name these tests."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from pathlib import Path

import pytest
from league_support import install_test_bot

from referee.bots.client import FLOODED, STALLED
from referee.bots.runtime import Roster
from referee.bots.spec import BotSpec, load_spec
from referee.engine import Game, preset
from referee.errors import FailureKind
from referee.game.match import MatchOptions, MatchResult, play_match
from referee.league.config import LeagueSettings
from referee.league.progress import Progress
from referee.league.runner import run_league
from referee.protocol import convert

ROOT = Path(__file__).resolve().parents[1]
BOTS = ROOT / "tests" / "bots"
CLASSIC = preset("classic")
GENEROUS = 1_000_000   # the honest seats' limits (ms): nothing honest can time out


def spec(name: str, **limits: int) -> BotSpec:
    loaded = load_spec(BOTS / f"{name}.toml")
    if limits:
        loaded = dataclasses.replace(loaded, limits=dataclasses.replace(loaded.limits, **limits))
    return loaded


async def play(specs: list[BotSpec], games: int = 1, options: MatchOptions | None = None,
               observer=None, seed: int = 5) -> list[MatchResult]:
    """Play `games` games with one seat per spec, each within a generous bound (a hang fails
    the test instead of stalling it), and stop the bots."""
    results = []
    async with asyncio.timeout(600):
        async with Roster(specs) as roster:
            await roster.start()
            for game in range(games):
                leases = [await roster.runners[s.name].lease() for s in specs]
                try:
                    results.append(await play_match(CLASSIC, leases, seed + game, f"g{game}",
                                                    options, observer))
                finally:
                    for lease in leases:
                        await lease.runner.release(lease)
    return results


def strikes_of(result: MatchResult, seat: int) -> dict[str, int]:
    return {kind: n for kind, n in result.seats[seat].strikes.items() if n}


def test_a_bot_that_never_reads_its_stream_times_out_and_the_game_goes_on() -> None:
    """Item 4: the referee's writes to no_reader stall behind its 1 KiB window; the requests
    time out at their deadlines, the stalled write is given up (WRITE_GRACE_S), later requests
    are timeouts at once (the stream is given up), the game ends, and the streams close.
    Its first 17 requests time out at 300 ms each, so the stalled write (5 s) is given up
    before its 20th strike forfeits it, however busy the machine."""
    results = asyncio.run(play([spec("honest", decision_ms=GENEROUS), spec("no_reader")],
                               games=2, options=MatchOptions(strikes_to_forfeit=20)))
    for result in results:
        assert result.record.final() is not None
        assert strikes_of(result, 0) == {}
        assert strikes_of(result, 1) == {FailureKind.TIMEOUT: 20}
        assert result.seats[1].forfeited
        details = [d.get("detail") for d in result.record.meta["decisions"] if d["seat"] == 1]
        assert STALLED in details   # a write was held back, not only answers missing


def test_a_lone_write_that_stalls_is_given_up_by_the_streams_watch() -> None:
    """Item 4, one write at a time: requests sent one after the other, each awaited, to a bot
    that never reads. No write ever waits behind another, so the stream's watch timer alone
    (GameStream.send's usual path, no timer per write) must give up the write that stalls,
    WRITE_GRACE_S after it began: the stream is STALLED and the call cancelled. Without the
    watch the send would wait forever (the bound below fails the test)."""
    async def send_until_stalled() -> tuple[str | None, int]:
        async with Roster([spec("no_reader")]) as roster:
            await roster.start()
            lease = await roster.runners["no_reader"].lease()
            stream = lease.open_game()
            game = Game(CLASSIC, 2, 1)
            message = convert.request_message(game.view(0), 1)
            sent = 0
            error = None
            async with asyncio.timeout(120):
                while error is None:
                    error = await stream.send(message, 0.0)
                    sent += 1
            await stream.finish(None)
            await lease.runner.release(lease)
            return error, sent

    error, sent = asyncio.run(send_until_stalled())
    assert error == STALLED
    assert sent > 1   # the first writes went through: it is the window that held one back


def test_default_ping_policy_servers_keep_their_streams_while_another_seat_thinks() -> None:
    """Item 5a: a stream left idle for 35 s (another seat thinking, far within its limits) to a
    server with gRPC's default keepalive enforcement (a ping without data every 5 minutes at
    most) and the least strike tolerance stays usable. The referee used to ping every 10 s: this
    server then ended the connection with GOAWAY too_many_pings at the third ping (30 s), and
    the next request was struck as a crash."""
    async def idle_then_ask() -> object:
        async with Roster([spec("strict_pings")]) as roster:
            await roster.start()
            lease = await roster.runners["strict_pings"].lease()
            stream = lease.open_game()
            assert await stream.send(convert.game_start(
                "idle", CLASSIC, ["strict_pings", "thinker"], 0, decision_ms=GENEROUS)) is None
            await asyncio.sleep(35)
            game = Game(CLASSIC, 2, 1)
            reply = await stream.decide(convert.request_message(game.view(0), 1), 1, 60)
            await stream.finish(None)
            await lease.runner.release(lease)
            return reply

    reply = asyncio.run(idle_then_ask())
    assert reply.strike is None, reply


@pytest.mark.parametrize("bot", ["chatter", "flood"])
def test_answers_nobody_asked_for_are_protocol_strikes_never_answers(bot: str) -> None:
    """Item 6: a second decision for one request, a stale id, an unknown id (chatter) and a
    flood (flood, cut off after INBOX_LIMIT messages) are protocol strikes, and every move the
    referee accepts from the bot is the honest answer to the request it was asked.

    Both seats get generous limits: on a busy machine the bot's honest answers came after its
    default 1 s deadline (timeout strikes, and answers given up instead of the requests its
    extra decisions should be struck for), which failed the test once in a full run. What it
    checks does not depend on time: which messages are strikes and which are answers."""
    results = asyncio.run(play([spec("honest", decision_ms=GENEROUS),
                                spec(bot, decision_ms=GENEROUS)], games=2,
                               options=MatchOptions(strikes_to_forfeit=1000)))
    for result in results:
        assert strikes_of(result, 0) == {}
        struck = strikes_of(result, 1)
        assert set(struck) == {FailureKind.PROTOCOL}, struck
        assert struck[FailureKind.PROTOCOL] >= (3 if bot == "chatter" else 1)
        game = Game(CLASSIC, 2, result.record.seed)
        # The bot's accepted moves are all its honest answers: the first legal action.
        for decision in result.record.meta["decisions"]:
            if decision["seat"] == 1 and "strike" not in decision and "auto" not in decision:
                assert decision["action"] == list(game.legal_actions()[0]), decision
            game.apply(convert.action_from_pb(convert.action_to_pb(tuple(decision["action"]))))
    if bot == "flood":
        details = {d.get("detail") for r in results for d in r.record.meta["decisions"]}
        assert FLOODED in details


def guesses(result: MatchResult, seat: int) -> tuple[set[int], set[int]]:
    """The request ids guesser was asked and the ids it guessed, from its output."""
    lines = result.seats[seat].output.splitlines()
    asked = {int(line.split()[-1]) for line in lines if line.startswith("asked ")}
    guessed = {int(line.split()[-1]) for line in lines if line.startswith("guessed ")}
    return asked, guessed


def test_request_ids_cannot_be_guessed_and_a_guess_is_never_an_answer() -> None:
    """Issue 22, item 3: guesser answers each request, then at once sends a decision for the
    id that consecutive ids would give its next turn. No id it guessed is ever asked (ids are
    keyed BLAKE2b of the game's seed, seeds.request_id), each of its strikes is a protocol
    strike for one of its guesses, and every move the referee takes from it answers a request
    it was sent (with consecutive ids, each guess was taken as the answer to the next request,
    measured at 0 us, before the bot had seen the roll)."""
    results = asyncio.run(play([spec("honest", decision_ms=GENEROUS),
                                spec("guesser", decision_ms=GENEROUS)], games=3,
                               options=MatchOptions(strikes_to_forfeit=1000)))
    for result in results:
        assert strikes_of(result, 0) == {}
        asked, guessed = guesses(result, 1)
        assert len(asked) >= 5 and len(guessed) == len(asked)
        assert not asked & guessed
        assert all(2**62 <= rid < 2**63 for rid in asked)
        mine = [d for d in result.record.meta["decisions"] if d["seat"] == 1 and "auto" not in d]
        answers = [d for d in mine if "strike" not in d]
        struck = [d for d in mine if "strike" in d]
        assert "strike" not in mine[0] and struck
        assert len(answers) <= len(asked)
        assert all(d["latency_us"] > 0 for d in answers), answers   # none read before asked
        for decision in struck:
            assert decision["strike"] == FailureKind.PROTOCOL, decision
            named = int(decision["detail"].split()[4].rstrip(","))
            assert named in guessed and "which is not outstanding" in decision["detail"]


def test_a_decision_read_before_its_request_is_sent_is_a_protocol_strike() -> None:
    """Issue 22, item 3, the rule itself: here the test picks the ids, consecutive as they
    used to be, so guesser guesses right. Its guess is read before the request it names is
    sent (the test waits until the stream holds it): that request gets a protocol strike,
    never the guess as its answer, and is not sent (the bot never sees it)."""
    async def ask_twice() -> tuple[object, object]:
        async with asyncio.timeout(600), Roster([spec("guesser")]) as roster:
            await roster.start()
            lease = await roster.runners["guesser"].lease()
            stream = lease.open_game()
            assert await stream.send(convert.game_start(
                "guess", CLASSIC, ["guesser", "other"], 0, decision_ms=GENEROUS)) is None
            game = Game(CLASSIC, 2, 1)
            first = await stream.decide(convert.request_message(game.view(0), 10), 10, 600)
            while not stream.inbox:   # the guess for request 12, read before it is sent
                await asyncio.sleep(0.01)
            game.apply(first.action)
            game.apply(game.legal_actions()[0])
            second = await stream.decide(convert.request_message(game.view(0), 12), 12, 600)
            await stream.finish(None)
            await lease.runner.release(lease)
            return first, second

    first, second = asyncio.run(ask_twice())
    assert first.strike is None, first
    assert second.strike == FailureKind.PROTOCOL and second.action is None, second
    assert second.detail == "a decision for request 12, read before that request was sent"
    assert second.latency_us == 0


def rss_kb() -> int:
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))


def test_memory_stays_flat_against_1mb_answers() -> None:
    """Item 7: bloat answers every request with about 1 MB; the referee refuses messages over
    client.MAX_ANSWER_BYTES before reading them (a protocol strike) and keeps nothing. Its RSS
    (this process plays the games) grows by less than 40 MB over 100 games; it grew by 350 MB
    when such answers were accepted."""
    growth: list[int] = []

    def observer(game, events, decision) -> None:
        if decision is None:
            growth.append(rss_kb())

    results = asyncio.run(play([spec("honest", decision_ms=GENEROUS), spec("bloat")],
                               games=100, observer=observer))
    for result in results:
        assert strikes_of(result, 0) == {}
        assert set(strikes_of(result, 1)) == {FailureKind.PROTOCOL}
    first = min(growth[5:10])   # after a few games: imports and caches are warm
    assert max(growth[-10:]) - first < 40 * 1024, (first, growth[-10:])


def test_one_clock_decides_whether_an_answer_is_in_time() -> None:
    """Item 8: whatever the event loop was doing, an answer accepted took no longer than its
    deadline and a timeout took at least as long. Every fifth request the test blocks the
    referee's event loop for 0.5 s just after sending it (the honest answer arrives meanwhile):
    those answers are read after the 200 ms deadline and must all be timeouts, although the
    deadline timer and the answer are then both ready at once."""
    blocked = []

    def observer(game, events, decision) -> None:
        if decision is not None and not game.is_over and len(blocked) < 400:
            blocked.append(time.perf_counter())
            if len(blocked) % 5 == 0:
                # Two hops: the game goes on in a task scheduled after this callback, so the
                # block lands after that task has sent the next request.
                loop = asyncio.get_running_loop()
                loop.call_soon(loop.call_soon, time.sleep, 0.5)

    results = asyncio.run(play([spec("honest", decision_ms=200, game_bank_ms=0),
                                spec("strict_pings", decision_ms=200, game_bank_ms=0)],
                               games=1, options=MatchOptions(strikes_to_forfeit=1000),
                               observer=observer))
    decisions = [d for d in results[0].record.meta["decisions"] if "latency_us" in d]
    timeouts = [d for d in decisions if d.get("strike") == FailureKind.TIMEOUT]
    assert len(timeouts) >= len(decisions) // 5 - 1
    for decision in decisions:
        if "strike" not in decision:
            assert decision["latency_us"] <= 200_000, decision
        elif decision["strike"] == FailureKind.TIMEOUT:
            assert decision["latency_us"] >= 200_000, decision


class Games(Progress):
    """A quiet Progress that keeps every game's result."""

    def __init__(self) -> None:
        super().__init__()
        self.results: list[MatchResult] = []

    def game_done(self, result: MatchResult, index: int | None = None) -> None:
        super().game_done(result, index)
        self.results.append(result)


def test_a_bot_that_dies_for_good_forfeits_its_remaining_games(tmp_path: Path) -> None:
    """Item 4: gone exits at its first decision and every restart of it fails: each of its
    later games is forfeited from the start with the reason, and the league completes."""
    marker = tmp_path / "marker"
    marker.mkdir()
    specs = [install_test_bot(tmp_path, "honest-a", "honest"),
             install_test_bot(tmp_path, "honest-b", "honest"),
             install_test_bot(tmp_path, "gone", env={"GONE_MARKER_DIR": str(marker)})]
    settings = LeagueSettings(bots=specs, rules=CLASSIC, games=9, players=(3, 3), seed=2**70,
                              concurrency=1, out=tmp_path / "out", sandbox=False)
    progress = Games()
    outcome = asyncio.run(run_league(settings, progress))
    assert outcome.finished and len(outcome.games) == 9
    gone = [(result, result.seats[[s.bot for s in result.seats].index("gone")])
            for result in progress.results]
    assert gone[0][1].strikes["crash"] >= 1
    for result, seat in gone[1:]:
        assert seat.forfeited and "could not be started" in seat.reason, seat.reason
        assert result.record.final() is not None
    for result in progress.results:
        assert all(s.strike_count == 0 for s in result.seats if s.bot != "gone")


class StopAfter(Games):
    """Interrupts the league (as Ctrl-C would) once `games` games are stored."""

    def __init__(self, games: int) -> None:
        super().__init__()
        self.games = games

    def game_done(self, result: MatchResult, index: int | None = None) -> None:
        super().game_done(result, index)
        if len(self.results) >= self.games:
            raise KeyboardInterrupt


def test_a_league_resumed_without_a_dead_bot_completes(tmp_path: Path) -> None:
    """Item 4, --resume: a league interrupted after gone died is resumed with --skip-broken
    while gone cannot start any more: its remaining games are forfeited with the reason and the
    league completes, the games played before kept."""
    marker = tmp_path / "marker"
    marker.mkdir()
    specs = [install_test_bot(tmp_path, "honest-a", "honest"),
             install_test_bot(tmp_path, "honest-b", "honest"),
             install_test_bot(tmp_path, "gone", env={"GONE_MARKER_DIR": str(marker)})]
    settings = LeagueSettings(bots=specs, rules=CLASSIC, games=6, players=(3, 3), seed=2**70,
                              concurrency=1, out=tmp_path / "out", sandbox=False)
    first = StopAfter(2)
    with pytest.raises(KeyboardInterrupt):
        asyncio.run(run_league(settings, first))
    resumed = Games()
    settings = dataclasses.replace(settings, skip_broken=True)
    outcome = asyncio.run(run_league(settings, resumed, resume=True))
    assert outcome.finished and len(outcome.games) == 6
    assert len(resumed.results) == 4
    for result in resumed.results:
        seat = next(s for s in result.seats if s.bot == "gone")
        # The reason says why: the start that failed on --resume, as the runner saw it.
        assert seat.forfeited and "could not be started: exited during start-up" in \
            seat.reason, seat.reason
        assert all(s.strike_count == 0 for s in result.seats if s.bot != "gone")
