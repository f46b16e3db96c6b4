"""What a league keeps of each played game: the facts ratings and tables are derived from."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PlayedGame:
    """One finished league game, in the form ratings and tables consume."""

    index: int                          # position in the schedule (ratings use this order)
    bots: tuple[str, ...]               # bot name per seat
    places: tuple[int, ...]             # final place per seat (R26; forfeits share the last)
    money: tuple[int, ...]              # dollars per seat
    forfeited: tuple[bool, ...]         # per seat
    strikes: tuple[dict[str, int], ...]  # per seat: strike type -> count
    latencies_us: tuple[tuple[int, ...], ...]  # per seat: every measured decision latency
    # per seat: name -> (sum, count) of the numbers the bot sent with its decisions (notes)
    note_values: tuple[dict[str, tuple[float, int]], ...] = ()

    @property
    def void(self) -> bool:
        """True when every seat forfeited: nobody won, the game rates nobody."""
        return all(self.forfeited)

    @property
    def players(self) -> int:
        """Seats at the table."""
        return len(self.bots)
