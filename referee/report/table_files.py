"""A league table as the text of the files written beside a league's store, its folder's table
files: Markdown, CSV and JSON tables, head to head and pairwise chances as CSV (`write_tables`;
all of them, the workers' too, from a league's outcome: `write_outputs`), and the cell formats
the terminal view (`referee.cli.tables`) shares with them. The league computes the numbers and
writes none of this: its callers (the CLI, the club's season) hand `write_outputs` to it as its
`publish`.

Bot names and the names of their notes are bot text: Markdown escapes them, and the notes'
lines pass through `safe_line`. Nothing here prints.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from referee.bots.errors import STRIKE_TYPES
from referee.league.folder import LeagueFolder
from referee.league.outcome import LeagueOutcome, fit_facts
from referee.league.tables import NAMES_PER_BOT, HeadToHead, Pairwise, Row
from referee.present.text import safe_line
from referee.report.worker_tables import write_worker_tables


def table_sizes(rows: Sequence[Row]) -> list[int]:
    """The table sizes of the rows' games (for win % by seat, which is given per size)."""
    return sorted({size for row in rows for size in row.seat_win_pct_by_size})


def _seat_columns(rows: Sequence[Row]) -> list[str]:
    """seat{s}_win_pct with one table size; seat{s}_of_{k}_win_pct per size k with several
    (pooling tables of 3 and 4 seats would mix unlike seats)."""
    sizes = table_sizes(rows)
    if len(sizes) > 1:
        return [f"seat{s}_of_{k}_win_pct" for k in sizes for s in range(k)]
    seats = max((len(row.seat_win_pct) for row in rows), default=0)
    return [f"seat{s}_win_pct" for s in range(seats)]


def fit_sizes(rows: Sequence[Row]) -> list[int]:
    """The table sizes the global fit saw (its per-size columns when there are several)."""
    sizes = sorted({size for row in rows for size in row.games_by_size})
    return sizes if len(sizes) > 1 else []


def _columns(rows: Sequence[Row]) -> list[str]:
    """The flat column names shared by CSV and Markdown."""
    kinds = _strike_kinds(rows)
    by_size = [f"{kind}_at_{k}" for k in fit_sizes(rows) for kind in ("strength", "games")]
    return [
        "rank", "bot", "strength", "strength_low", "strength_high", "rank_low", "rank_high",
        "separated_from_next", *by_size, "mu", "sigma", "conservative", "games", "wins", "win_pct",
        "avg_place", "avg_money", *_seat_columns(rows),
        *(f"strikes_{kind}" for kind in kinds),
        "forfeits", "all_forfeit", "think_p50_ms", "think_p95_ms",
    ]


def _strike_kinds(rows: Sequence[Row]) -> list[str]:
    extra = sorted({kind for row in rows for kind in row.strikes} - set(STRIKE_TYPES))
    return [*STRIKE_TYPES, *extra]


def _flat(row: Row) -> dict[str, Any]:
    """A row as flat columns (raw values, None where undefined)."""
    flat = {key: value for key, value in asdict(row).items()
            if key not in ("seat_win_pct", "strikes", "seat_win_pct_by_size", "note_values",
                           "strength_by_size", "games_by_size", "note_names_dropped")}
    for size, games in row.games_by_size.items():
        flat[f"strength_at_{size}"] = row.strength_by_size.get(size)
        flat[f"games_at_{size}"] = games
    for seat, value in enumerate(row.seat_win_pct):
        flat[f"seat{seat}_win_pct"] = value
    for size, values in row.seat_win_pct_by_size.items():
        for seat, value in enumerate(values):
            flat[f"seat{seat}_of_{size}_win_pct"] = value
    for kind, count in row.strikes.items():
        flat[f"strikes_{kind}"] = count
    return flat


def fmt(value: Any, digits: int = 2) -> str:
    """A value for people: floats with `digits` decimals, '-' for None."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def h2h_cell(h2h: HeadToHead, a: str, b: str) -> str:
    """'a_ahead-b_ahead' for a row bot a and column bot b; '' if they never met."""
    if a == b:
        return "x"
    together, ahead, behind = h2h.get((a, b), (0, 0, 0))
    return f"{ahead}-{behind}" if together else ""


def signed(value: float | None) -> str:
    """A strength on the Elo scale with its sign ('+35', '-12'), '-' for None."""
    return "-" if value is None else f"{value:+.0f}"


def interval(row: Row) -> str:
    """The row's 95% strength interval ('-20..+41'), '-' without the global fit."""
    if row.strength_low is None or row.strength_high is None:
        return "-"
    return f"{signed(row.strength_low)}..{signed(row.strength_high)}"


def rank_text(low: int | None, high: int | None, dash: str = "-") -> str:
    """The ranks a bot holds at 95% as the tables print them: `3`, `2-5` (joined by `dash`),
    or `-` before the bot has a rank."""
    if low is None or high is None:
        return "-"
    return str(low) if low == high else f"{low}{dash}{high}"


def ranks(row: Row) -> str:
    """The ranks the row's bot holds at 95% (`rank_text`)."""
    return rank_text(row.rank_low, row.rank_high)


def apart(row: Row) -> str:
    """The separation mark of a row from the next: '' if separated (or last), '~' if not."""
    return "~" if row.separated_from_next is False else ""


def pair_cell(pairwise: Pairwise, a: str, b: str) -> str:
    """The global fit's chance that a finishes ahead of b ('64%'); 'x' on the diagonal."""
    if a == b:
        return "x"
    value = pairwise.get((a, b))
    return "" if value is None else f"{100 * value:.0f}%"


def note_lines(rows: Sequence[Row]) -> list[str]:
    """The averages of the numbers bots sent with their decisions, a heading and one line per
    bot that sent any (names are bot text: escaped); [] if none did."""
    lines = [f"{safe_line(row.bot)}: " + ", ".join(
        f"{safe_line(name, 40)} {fmt(mean, 3 if abs(mean) < 100 else 0)}"
        for name, mean in row.note_values.items()) for row in rows if row.note_values]
    lines += [dropped_names_line(row) for row in rows if row.note_names_dropped]
    return ["Notes from bots (average per decision):", *lines] if lines else []


def dropped_names_line(row: Row) -> str:
    """The one line that says a bot sent more value names than a league keeps."""
    return (f"{safe_line(row.bot)}: {row.note_names_dropped} more value names dropped; a "
            f"league keeps the first {NAMES_PER_BOT} names of each bot")


def to_markdown(rows: Sequence[Row], h2h: HeadToHead, pairwise: Pairwise | None = None) -> str:
    """The league table, the head-to-head matrix and (with `pairwise`) the chance matrix as
    Markdown tables (numbers to 2 decimals, '-' where undefined)."""
    columns = _columns(rows)
    lines = ["## League table", "", _md_line(columns), _md_line(["---"] * len(columns))]
    for row in rows:
        flat = _flat(row)
        lines.append(_md_line([fmt(flat.get(column)) for column in columns]))
    notes = note_lines(rows)
    if notes:
        lines += ["", "## Notes from bots", "", "Average per decision of the numbers each bot "
                  "sent with its moves.", "", *(f"- {_md_text(line)}" for line in notes[1:])]
    names = [row.bot for row in rows]
    lines += ["", "## Head to head", "", "Cells: times the row bot finished ahead of the column "
              "bot - times behind, at the same table.", "",
              _md_line(["", *names]), _md_line(["---"] * (len(names) + 1))]
    for a in names:
        lines.append(_md_line([a, *(h2h_cell(h2h, a, b) for b in names)]))
    if any(row.strength is not None for row in rows):
        lines += ["", "strength: global Plackett-Luce fit on the Elo scale (0 = average), with "
                  "its 95% interval and the ranks held at 95% (bootstrap); separated_from_next: "
                  "no when this row is not separated from the next (the rule is under "
                  "'separation' above; by default their 95% intervals overlap)."]
        if fit_sizes(rows):
            lines += ["", "strength_at_K: the bot's strength at tables of K (a gap there is "
                      "the strength gap times that size's scale, under "
                      "'strength_scale_by_table_size' above); games_at_K: its games there."]
    if pairwise:
        lines += ["", "## Chance of finishing ahead", "",
                  "Cells: the global fit's chance that the row bot finishes ahead of the column "
                  "bot at a table they share.", "",
                  _md_line(["", *names]), _md_line(["---"] * (len(names) + 1))]
        for a in names:
            lines.append(_md_line([a, *(pair_cell(pairwise, a, b) for b in names)]))
    return "\n".join(lines) + "\n"


def _md_text(text: str) -> str:
    """`text` (bot-chosen names included) with Markdown's and HTML's special characters
    escaped, so that it shows as written and links or tags in it do nothing."""
    return re.sub(r"([\\`*_{}\[\]<>()#+!|~])", r"\\\1", text)


def _md_line(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"


def to_csv(rows: Sequence[Row], facts: dict[str, Any] | None = None) -> str:
    """The league table as CSV: the league's `facts` as `# key: value` lines first (if any),
    one header row, flat columns (seatN_win_pct, strikes_KIND), numbers rounded to 2 decimals
    (full precision is in the JSON table), empty cells where undefined."""
    columns = _columns(rows)
    out = io.StringIO()
    for key, value in (facts or {}).items():
        out.write(f"# {key}: {_fact(value)}\n")
    writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        flat = _flat(row)
        writer.writerow({column: _csv_value(flat.get(column)) for column in columns})
    return out.getvalue()


def _csv_value(value: Any) -> str:
    return "" if value is None else f"{value:.2f}" if isinstance(value, float) else str(value)


def _fact(value: Any) -> str:
    """A league fact on one line, numbers rounded for reading."""
    if isinstance(value, float):
        return f"{value:.3f}".rstrip("0").rstrip(".")
    if isinstance(value, dict):
        return ", ".join(f"{k}={_fact(v)}" for k, v in value.items()) or "none"
    if isinstance(value, list):
        return ", ".join(_fact(v) for v in value) or "none"
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value)


def h2h_csv(h2h: HeadToHead) -> str:
    """Head-to-head counts as CSV: a, b, games, a_ahead, b_ahead (one line per ordered pair)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["a", "b", "games", "a_ahead", "b_ahead"])
    for (a, b), (together, ahead, behind) in h2h.items():
        writer.writerow([a, b, together, ahead, behind])
    return out.getvalue()


def pairwise_csv(pairwise: Pairwise) -> str:
    """The chance matrix as CSV: a, b, p_ahead (one line per ordered pair)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["a", "b", "p_ahead"])
    for (a, b), value in pairwise.items():
        writer.writerow([a, b, repr(value)])
    return out.getvalue()


def to_json(rows: Sequence[Row], h2h: HeadToHead,
            pairwise: Pairwise | None = None) -> dict[str, Any]:
    """The table and head-to-head counts as JSON-ready data: {"table": [row, ...],
    "head_to_head": [{"a", "b", "games", "a_ahead", "b_ahead"}, ...]}, plus with `pairwise`
    "pairwise": [{"a", "b", "p_ahead"}, ...] (the global fit's chance a finishes ahead of b)."""
    data: dict[str, Any] = {
        "table": [row.to_json() for row in rows],
        "head_to_head": [
            {"a": a, "b": b, "games": together, "a_ahead": ahead, "b_ahead": behind}
            for (a, b), (together, ahead, behind) in h2h.items()
        ],
    }
    if pairwise is not None:
        data["pairwise"] = [{"a": a, "b": b, "p_ahead": value}
                            for (a, b), value in pairwise.items()]
    return data


def unranked_markdown(rows: Sequence[Row]) -> str:
    """The fitted bots that are not ranked (a season's retired and disabled versions) as a
    Markdown section of their own; "" when there are none."""
    if not rows:
        return ""
    lines = ["", "## Not ranked", "", "Versions a newer one replaced, or taken out of the "
             "season: their games stay in the fit (their opponents' results against them "
             "count), but they hold no rank.", "",
             _md_line(["bot", "strength", "interval", "games", "wins"]),
             _md_line(["---"] * 5)]
    lines += [_md_line([row.bot, signed(row.strength), interval(row), str(row.games),
                        str(row.wins)]) for row in rows]
    return "\n".join(lines) + "\n"


def write_tables(
    folder: LeagueFolder, rows: Sequence[Row], h2h: HeadToHead,
    extra: dict[str, Any] | None = None, pairwise: Pairwise | None = None,
    unranked: Sequence[Row] = (),
) -> list[Path]:
    """Write the folder's Markdown, CSV and JSON tables and head-to-head CSV (and, with
    `pairwise`, its pairwise CSV), its tables' folder created if needed, and return their
    paths. `extra` (e.g. league settings) is listed at the top of the Markdown and kept under
    "extra" in the JSON. The `unranked` rows (a season's retired versions) are a section of
    their own in the Markdown and "unranked" in the JSON, never rows of the table."""
    folder.tables.mkdir(parents=True, exist_ok=True)
    markdown = to_markdown(rows, h2h, pairwise) + unranked_markdown(unranked)
    data = to_json(rows, h2h, pairwise)
    if unranked:
        data["unranked"] = [row.to_json() for row in unranked]
    if extra:
        markdown = ("## League\n\n" + "".join(f"- {key}: {_fact(value)}\n"
                                             for key, value in extra.items())
                    + "\n" + markdown)
        data["extra"] = extra
    files = {
        folder.table_md: markdown,
        folder.table_csv: to_csv(rows, extra),
        folder.table_json: json.dumps(data, indent=2, default=str) + "\n",
        folder.head_to_head_csv: h2h_csv(h2h),
    }
    if pairwise is not None:
        files[folder.pairwise_csv] = pairwise_csv(pairwise)
    paths = []
    for path, text in files.items():
        path.write_text(text, encoding="utf-8")
        paths.append(path)
    return paths


def write_outputs(outcome: LeagueOutcome) -> None:
    """Write the tables (Markdown, CSV, JSON) next to the database."""
    extra = {**outcome.facts, "games_recorded": len(outcome.games),
             "games_all_forfeited": sum(game.void for game in outcome.games),
             "schedule_balance": outcome.balance.describe(), **fit_facts(outcome.standings)}
    folder = LeagueFolder(outcome.out)
    write_tables(folder, outcome.rows, outcome.h2h, extra, outcome.pairwise, outcome.unranked)
    write_worker_tables(folder, outcome.workers)
