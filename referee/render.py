"""Readable text for game events: what `referee match` prints turn by turn."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from referee.engine import SLOT
from referee.text import safe_line


def money(amount: int) -> str:
    """$50k style amounts."""
    return f"${amount // 1000}k" if amount % 1000 == 0 else f"${amount:,}"


def target_name(target: int) -> str:
    """'casino 3' or 'the slot'."""
    return "the slot" if target == SLOT else f"casino {target}"


class Narrator:
    """Turns engine events (and the match's decision notes) into lines of text."""

    def __init__(self, names: Sequence[str]) -> None:
        self.names = list(names)

    def who(self, participant: int) -> str:
        """A seat's label, or 'neutral' for the neutral player."""
        if participant >= len(self.names):
            return "neutral"
        return f"{self.names[participant]} (seat {participant})"

    def lines(self, event: tuple, decision: dict[str, Any] | None = None) -> list[str]:
        """The text for one event."""
        kind = event[0]
        if kind == "round":
            _, round_index, start, casinos = event
            funded = "; ".join(
                f"{t}: {' '.join(money(n) for n in notes) or '-'}"
                for t, notes in zip(self._targets(len(casinos)), casinos, strict=True)
            )
            return [f"Round {round_index + 1}, {self.who(start)} starts. Casinos {funded}"]
        if kind == "preroll":
            return [f"  white dice pre-rolled onto casinos {', '.join(map(str, event[1]))}"]
        if kind == "roll":
            _, seat, faces, a, b = event
            text = " ".join(map(str, faces[:a]))
            if b:
                text += f" | big {' '.join(map(str, faces[a:a + b]))}"
            if len(faces) > a + b:
                text += f" | neutral {' '.join(map(str, faces[a + b:]))}"
            return [f"  {self.who(seat)} rolls {text}"]
        if kind == "place":
            _, seat, value, slot, own, big, neutral = event
            dice = own + big
            parts = [f"{dice} die" if dice == 1 else f"{dice} dice"]
            if neutral:
                parts.append(f"{neutral} neutral")
            line = (f"    puts {' + '.join(parts)} showing {value} on "
                    f"{target_name(SLOT if slot else value)}")
            if decision and decision.get("strike"):
                detail = safe_line(decision.get("detail", ""))
                line += f"  [{safe_line(decision['strike'])} strike: {detail}; " \
                        f"substitute move]"
            elif decision and decision.get("auto"):
                line += f"  [{decision['auto']}]"
            return [line]
        if kind == "score":
            _, target, counts, cancelled, payouts, leaving = event
            present = [p for p, c in enumerate(counts) if c]
            if not present and not payouts:
                return [f"  {target_name(target)}: no dice; "
                        f"{' '.join(money(n) for n in leaving) or 'nothing'} leaves"]
            count_text = ", ".join(f"{self.who(p)} {counts[p]}" for p in present)
            line = f"  {target_name(target)}: {count_text}"
            if cancelled:
                line += f"; ties cancel {', '.join(self.who(p) for p in cancelled)}"
            if payouts:
                line += "; pays " + ", ".join(f"{self.who(p)} {money(n)}" for p, n in payouts)
            if leaving:
                line += f"; {' '.join(money(n) for n in leaving)} leaves"
            return [line]
        if kind == "end":
            _, cash, notes, places = event
            order = sorted(range(len(cash)), key=lambda s: places[s])
            rows = [f"  {places[s]}. {self.who(s)}: {money(cash[s])} in {notes[s]} notes"
                    for s in order]
            return ["Game over. Ranking (R26):", *rows]
        return [repr(event)]

    @staticmethod
    def _targets(count: int) -> list[int]:
        return list(range(1, count + 1))
