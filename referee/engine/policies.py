"""Ready-made policies: functions from a `View` to one of its legal actions. Pure, no I/O.

* `random_policy(view, rng)`: a uniformly random legal action.
* `greedy_policy(view)`: the best immediate gain if the round ended now (R20-R22, R32), with a
  bonus for taking money from the richest opponent.
* `montecarlo_policy(view, rollouts, seed)`: Monte Carlo with sequential halving: legal actions
  are played out from the same determinized games (`determinize`) to the end of the round with
  a fast greedy rollout policy for every seat, and scored by the money this seat then has.

All are deterministic given their inputs (`rng` for random, `seed` for Monte Carlo): no clock,
no global random state. The sample bots in `sample_bots/` serve them over the protocol.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from referee.engine.actions import SLOT, Action
from referee.engine.game import Game, determinize
from referee.engine.view import View

__all__ = [
    "DENY_WEIGHT", "action_gains", "casino_payouts", "greedy_policy", "greedy_score",
    "montecarlo_policy", "random_policy",
]

#: Weight of the richest opponent's loss in the greedy score (R24: money is public).
DENY_WEIGHT = 0.5
#: Fewest playouts per action in the first stage of `montecarlo_policy`'s halving.
MIN_SAMPLES = 4


def random_policy(view: View, rng: random.Random) -> Action:
    """A uniformly random legal action, drawn from `rng`."""
    legal = view.legal
    return legal[rng.randrange(len(legal))] if len(legal) > 1 else legal[0]


# ------------------------------------------------------------------------------------ scoring


def casino_payouts(
    counts: Sequence[int],
    notes: Sequence[int],
    slot_keys: Sequence[tuple[int, int]] | None = None,
) -> dict[int, int]:
    """What each participant would win on one casino if it were scored now: participant ->
    note. `counts` has one count per seat and the neutral player last (R20); `notes` are the
    casino's notes, highest first. Ties cancel (R21); on the slot machine pass `slot_keys`
    (face sum, physical dice) per participant: the leaders are then ordered by them (R32)."""
    if not notes:
        return {}
    present = [p for p, c in enumerate(counts) if c]
    if slot_keys is None or not present:
        ranked = [p for p in present if counts.count(counts[p]) == 1]
    else:
        top = max(counts)
        leaders = [p for p in present if counts[p] == top]
        below = [p for p in present if counts[p] != top and counts.count(counts[p]) == 1]
        if len(leaders) > 1:
            keys = [slot_keys[p] for p in leaders]
            leaders = sorted((p for p in leaders if keys.count(slot_keys[p]) == 1),
                             key=slot_keys.__getitem__, reverse=True)
        below.sort(key=counts.__getitem__, reverse=True)
        return dict(zip(leaders + below, notes, strict=False))
    ranked.sort(key=counts.__getitem__, reverse=True)
    return dict(zip(ranked, notes, strict=False))


def _placed(view: View, value: int) -> tuple[int, int, int]:
    roll = view.roll
    return roll.own.count(value), roll.big.count(value), roll.neutral.count(value)


def action_gains(view: View, action: Action) -> list[int]:
    """How much each seat's winnings on the action's target would change if the round ended
    right after `action` (R20-R22, R32), in seat order."""
    n, me = view.players, view.current_seat
    value = action.value
    own, big, neu = _placed(view, value)
    c = view.casino(action.target)
    before = [o + 2 * b for o, b in zip(c.ordinary, c.big, strict=True)]
    before.append(c.neutral)
    after = before[:]
    after[me] += own + 2 * big
    after[n] += neu
    keys_before = keys_after = None
    if action.target == SLOT:
        sums, physical = [0] * (n + 1), [0] * (n + 1)
        for p in view.slot:
            sums[p.seat] += p.value * (p.ordinary + p.big)
            physical[p.seat] += p.ordinary + p.big
            sums[n] += p.value * p.neutral
            physical[n] += p.neutral
        keys_before = list(zip(sums, physical, strict=True))
        sums[me] += value * (own + big)
        physical[me] += own + big
        sums[n] += value * neu
        physical[n] += neu
        keys_after = list(zip(sums, physical, strict=True))
    won_before = casino_payouts(before, c.notes, keys_before)
    won_after = casino_payouts(after, c.notes, keys_after)
    return [won_after.get(s, 0) - won_before.get(s, 0) for s in range(n)]


def greedy_score(view: View, action: Action) -> float:
    """The greedy value of `action`: this seat's immediate gain plus DENY_WEIGHT times what the
    richest opponent loses by it (the largest such loss if several are equally rich)."""
    gains = action_gains(view, action)
    me = view.current_seat
    seats = view.seats
    richest = max(s.money for s in seats if s.seat != me)
    loss = max(-gains[s.seat] for s in seats if s.seat != me and s.money == richest)
    return gains[me] + DENY_WEIGHT * loss


def greedy_policy(view: View) -> Action:
    """The legal action with the best `greedy_score`; ties go to the action placing the fewest
    dice, then the lowest value, then the casino before the slot."""
    legal = view.legal
    if len(legal) == 1:
        return legal[0]
    best, best_key = legal[0], None
    for action in legal:
        own, big, neu = _placed(view, action.value)
        key = (greedy_score(view, action), -(own + big + neu))
        if best_key is None or key > best_key:  # legal is ordered by value, casino first
            best, best_key = action, key
    return best


# ------------------------------------------------------------------------------------ Monte Carlo


def _mix(seed: int, i: int) -> int:
    """The i-th rollout seed of a decision seeded `seed` (64-bit, splitmix64 finalizer)."""
    z = (seed * 0x9E3779B97F4A7C15 + (i + 1) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
    return z ^ (z >> 31)


def _rollout_round(game: Game, rng: random.Random) -> None:
    """Play every seat with `_rollout_step` to the end of the current round (or game)."""
    start_round = game.round
    notes = [sorted(x, reverse=True) for x in game._notes]  # replaced only when the round ends
    random_ = rng.random
    apply = game.apply
    while game.round == start_round and not game.is_over:
        apply(_rollout_step(game, notes, random_))


def _rollout_step(
    game: Game, notes: list[list[int]], random_: Callable[[], float]
) -> tuple[int, bool]:
    """The rollout policy of `montecarlo_policy`: the largest immediate gain for the seat to
    move if the round ended now (R20-R22, R32), then the fewest dice, then a random choice
    among equals (`random_`). `notes` are the round's notes per target, highest first. It reads
    the engine's state directly: building a View per step would cost more than the whole step.
    """
    plain, slot_on = game._plain, game._targets_slot
    big_on = game.rules.big_dice > 0
    own_t, big_t, neu_t = game._own, game._big, game._neu
    slot_notes = notes[SLOT]
    me = game.seat
    if plain:
        roll = game._roll_all
    else:
        roll, roll_big, roll_neu = game._roll_own, game._roll_big, game._roll_neu
    values = sorted(set(game._roll_all))
    if len(values) == 1 and not slot_on:
        return values[0], False
    slot_state = None
    best: tuple[int, bool] | None = None
    best_gain, best_dice, ties = 0, 0, 0
    for v in values:
        if plain:
            ordinary = dice = roll.count(v)
            big = neu = 0
        else:
            ordinary, big, neu = roll.count(v), roll_big.count(v), roll_neu.count(v)
            dice = ordinary + big + neu
        counts = ([o + 2 * b for o, b in zip(own_t[v], big_t[v], strict=True)]
                  if big_on else own_t[v])
        mine = counts[me]
        others = counts[:me] + counts[me + 1:]
        others.append(neu_t[v])
        before = _win_against(others, mine, notes[v]) if mine else 0
        if neu:
            others[-1] += neu
        gain = _win_against(others, mine + ordinary + 2 * big, notes[v]) - before
        if best is None or gain > best_gain or (gain == best_gain and dice < best_dice):
            best, best_gain, best_dice, ties = (v, False), gain, dice, 1
        elif gain == best_gain and dice == best_dice:
            ties += 1
            if random_() * ties < 1:  # uniform among equals (reservoir sampling)
                best = (v, False)
        if not slot_on or v in game._slot_values:
            continue
        # R31, R32: the same dice on the slot machine instead.
        if slot_state is None:
            slot_own, slot_big = own_t[SLOT], big_t[SLOT]
            counts = [o + 2 * b for o, b in zip(slot_own, slot_big, strict=True)]
            counts.append(neu_t[SLOT])
            physical = [o + b for o, b in zip(slot_own, slot_big, strict=True)]
            physical.append(neu_t[SLOT])
            keys = list(zip(game._slot_sum, physical, strict=True))
            slot_state = (counts[:me] + counts[me + 1:], keys[:me] + keys[me + 1:],
                          counts[me], keys[me])
            mine = slot_state[2]
            slot_now = _slot_win_against(*slot_state, slot_notes) if mine else 0
        other_counts, other_keys, mine, (face_sum, physical_dice) = slot_state
        if neu:  # the neutral player is the last of the others
            other_counts, other_keys = other_counts[:], other_keys[:]
            other_counts[-1] += neu
            s_n, p_n = other_keys[-1]
            other_keys[-1] = (s_n + v * neu, p_n + neu)
        key = (face_sum + v * (ordinary + big), physical_dice + ordinary + big)
        gain = _slot_win_against(other_counts, other_keys, mine + ordinary + 2 * big, key,
                                 slot_notes) - slot_now
        if gain > best_gain or (gain == best_gain and dice < best_dice):
            best, best_gain, best_dice, ties = (v, True), gain, dice, 1
        elif gain == best_gain and dice == best_dice:
            ties += 1
            if random_() * ties < 1:
                best = (v, True)
    assert best is not None   # set by the first value: a roll always has dice
    return best


def _win_against(others: list[int], count: int, notes: Sequence[int]) -> int:
    """What a participant with `count` dice wins on a casino (not the slot) scored now, against
    the other participants' counts (R21, R22)."""
    if not count or count in others:
        return 0
    rank = 0
    for x in others:
        if x > count and others.count(x) == 1:
            rank += 1
    return notes[rank] if rank < len(notes) else 0


def _slot_win_against(
    counts: list[int], keys: list[tuple[int, int]], count: int, key: tuple[int, int],
    notes: Sequence[int],
) -> int:
    """What a participant with `count` dice and tie-break `key` (face sum, physical dice) wins
    on the slot machine scored now, against the others' counts and keys (R32, R21, R22)."""
    if not count or not notes:
        return 0
    top = max(counts)
    if count > top:
        return notes[0]
    rank = 0
    if count == top:  # among the leaders: ordered by key, equal keys cancel
        leaders = [keys[i] for i, c in enumerate(counts) if c == top]
        if key in leaders:
            return 0
        for k in leaders:
            if k > key and leaders.count(k) == 1:
                rank += 1
    else:  # below the leaders: R21
        if count in counts:
            return 0
        leaders = [keys[i] for i, c in enumerate(counts) if c == top]
        if len(leaders) == 1:
            rank = 1
        else:
            for k in leaders:
                if leaders.count(k) == 1:
                    rank += 1
        for c in counts:
            if count < c < top and counts.count(c) == 1:
                rank += 1
    return notes[rank] if rank < len(notes) else 0


@dataclass(frozen=True)
class Search:
    """What `montecarlo_search` found: the action, the playouts it ran in all, and the chosen
    action's value (this seat's average money at the end of the round over its playouts; None
    when there was only one legal action and nothing was played out)."""

    action: Action
    playouts: int
    value: float | None


def montecarlo_policy(view: View, rollouts: int = 120, seed: int = 0) -> Action:
    """The action of `montecarlo_search` (below)."""
    return montecarlo_search(view, rollouts, seed).action


def montecarlo_search(view: View, rollouts: int = 120, seed: int = 0) -> Search:
    """Monte Carlo over the legal actions with sequential halving; deterministic given `seed`.

    About `rollouts` playouts in all. Playout i of every action starts from the same
    determinized game `determinize(view, seed_i)` (common random numbers: same deck order, same
    future dice), applies the action, then plays every seat with the greedy rollout policy to
    the end of the round. An action's value is the money this seat then has, on average. The
    budget is spent in up to ceil(log2(actions)) stages; after each stage the better half of
    the actions goes on (sequential halving), so close contenders get the most playouts.
    The best value wins (ties: the first in `view.legal`). Cost: about 0.1-0.7 ms per playout,
    more with many dice left in the round and with the slot machine.
    """
    legal = view.legal
    if len(legal) == 1:
        return Search(legal[0], 0, None)
    me = view.seat
    arms = list(range(len(legal)))
    runs = [0] * len(legal)
    stages = max(1, (len(arms) - 1).bit_length())  # ceil(log2(actions))
    while stages > 1 and rollouts // stages < MIN_SAMPLES * len(arms):
        stages -= 1
    per_stage = rollouts // stages
    totals = [0] * len(legal)
    rng = random.Random()
    done = 0
    for stage in range(stages):
        samples = max(1, per_stage // len(arms))
        for i in range(done, done + samples):
            sample_seed = _mix(seed, i)
            for k in arms:
                game = determinize(view, sample_seed)
                game.apply(legal[k])
                rng.seed(sample_seed)
                _rollout_round(game, rng)
                totals[k] += game.money[me]
                runs[k] += 1
        done += samples
        if stage + 1 < stages:  # every arm still in has had the same playouts: compare totals
            arms = sorted(sorted(arms, key=lambda k: (-totals[k], k))[: (len(arms) + 1) // 2])
    best = arms[0]
    for k in arms[1:]:
        if totals[k] > totals[best]:
            best = k
    return Search(legal[best], sum(runs), totals[best] / runs[best])
