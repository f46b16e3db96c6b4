"""The league report: a static site (index, game list, a page per bot, a replay page per game)
that works opened from file:// with no network. Pages are rendered with jinja2 (autoescaped:
bot names, notes and details are bot-supplied); the CSS and JavaScript ship in the package and
are copied beside the pages."""

from __future__ import annotations

import functools
import json
import os
import shutil
import tempfile
from collections import defaultdict
from dataclasses import dataclass, field, fields
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup, escape

from referee.engine import RuleSet
from referee.errors import InputError
from referee.league.config import league_file_text
from referee.league.folder import TABLE_JSON, LeagueFolder
from referee.league.outcome import LeagueOutcome, load_outcome
from referee.league.store import LeagueStore, unpack_record
from referee.league.stored import StoredLeague, read_league
from referee.league.tables import NAMES_PER_BOT, Row, percentile
from referee.ratings.results import PlayedGame
from referee.report.record_sources import open_league
from referee.report.table_files import to_json
from referee.util.outdir import missing_folders, remove_if_empty

ASSETS = ("report.css", "report.js", "viewer.js")
SEAT_COLOURS = ("#d62728", "#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2",
                "#17becf")
# Row keys the league table shows in columns of its own (the table row's fields); any others
# are shown as they come.
KNOWN_ROW_KEYS = frozenset(column.name for column in fields(Row))


def script_json(value: Any) -> Markup:
    """JSON safe inside a <script> element (no '<', '>' or '&' that could close it)."""
    return script_text(json.dumps(value, separators=(",", ":")).encode())


def script_text(json_text: bytes) -> Markup:
    """JSON text made safe inside a <script> element: '<', '>' and '&' can only stand inside
    JSON strings, where their \\u escapes mean the same."""
    safe = json_text.replace(b"<", b"\\u003c").replace(b">", b"\\u003e").replace(b"&", b"\\u0026")
    return Markup(safe.decode("utf-8"))


def money(amount: float | None) -> str:
    """$1,234,000 style; '-' for None."""
    return "-" if amount is None else f"${amount:,.0f}"


def number(value: Any, digits: int = 2) -> str:
    """Numbers for people: floats to `digits` decimals, a pair of numbers as a range, other
    lists comma-separated, '-' for None."""
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    if isinstance(value, list | tuple):
        ranged = len(value) == 2 and all(isinstance(v, int | float) for v in value)
        return ("–" if ranged else ", ").join(number(v, digits) for v in value)
    if isinstance(value, dict):
        return ", ".join(f"{k} {number(v, digits)}" for k, v in value.items())
    return str(value)


def signed(value: float | None) -> str:
    """A strength as the terminal prints it: +130, -7; '-' for None."""
    return "-" if value is None else f"{value:+.0f}"


def environment() -> jinja2.Environment:
    """The template environment: package templates, autoescaping on every page."""
    env = jinja2.Environment(loader=jinja2.PackageLoader("referee.report", "templates"),
                             autoescape=True, trim_blocks=True, lstrip_blocks=True,
                             undefined=jinja2.StrictUndefined)
    env.filters.update(script_json=script_json, money=money, number=number, signed=signed)
    return env


def asset_text(name: str) -> str:
    """The text of one packaged asset (CSS or JavaScript)."""
    return resources.files("referee.report").joinpath("static", name).read_text("utf-8")


@dataclass
class _BotFacts:
    """What a bot's page lists, gathered while the records are read."""

    games: list[dict[str, Any]] = field(default_factory=list)
    strikes: list[dict[str, Any]] = field(default_factory=list)


def process_umask() -> int:
    """This process's umask, read without changing it (os.umask would, for a moment, for every
    thread); 0o022 where /proc does not say."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    return 0o022


def build_report(directory: Path, out: Path | None = None,
                 outcome: LeagueOutcome | None = None) -> Path:
    """Write the report of the league in `directory` to `out` (default DIR/report) and return
    the path of its index.html. `outcome` is the league's outcome when the caller has it (a
    league that just ended): its ratings and fit are not computed again.

    The report is built in a new folder beside `out` and then put in its place, so a report
    being rebuilt is never half old and half new (and no file is rewritten in place, which some
    file systems flush to disk one by one)."""
    directory = Path(directory)
    out = Path(out) if out is not None else LeagueFolder(directory).report
    _check_replaceable(out)
    created = missing_folders(out.parent)
    out.parent.mkdir(parents=True, exist_ok=True)
    building = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.parent))
    # mkdtemp makes it private; a report is for publishing, as far as the umask lets it
    # (`referee serve` keeps everything of its data folder owner-only).
    building.chmod(0o777 & ~process_umask())
    try:
        store = open_league(directory)
        try:
            outcome = outcome or load_outcome(store)
            stored = read_league(store)
            assert stored is not None   # open_league refuses a store without a league
            pages = _Pages(environment(), building, outcome, stored)
            for sub in ("games", "bots", "assets"):
                (building / sub).mkdir()
            for name in ASSETS:
                (building / "assets" / name).write_text(asset_text(name), encoding="utf-8")
            pages.games(store)
            versions = {name: version for name, (version, _) in store.bots().items()}
        finally:
            store.close()
        pages.bot_pages()
        pages.game_list()
        pages.index(versions)
        _replace(building, out)
    except BaseException:
        shutil.rmtree(building, ignore_errors=True)
        remove_if_empty(created)
        raise
    return out / "index.html"


REPORT_MARK = "assets/report.css"   # a folder holding this is a report and may be replaced


def _check_replaceable(out: Path) -> None:
    """Refuse to replace a folder that is neither empty nor an earlier report."""
    if out.exists() and (not out.is_dir() or (any(out.iterdir())
                                              and not (out / REPORT_MARK).is_file())):
        raise InputError(f"{out} exists and is not a report: choose another --out")


def _replace(new: Path, out: Path) -> None:
    old = out.with_name(f".{out.name}-old-{os.getpid()}")
    if out.exists():
        out.rename(old)
    new.rename(out)
    shutil.rmtree(old, ignore_errors=True)


def worker_note(worker: str | None) -> Markup:
    """', played on WORKER' for a game played on a cluster, else nothing."""
    if not worker:
        return Markup("")
    return Markup(", played on <span class=\"mono\">{}</span>").format(worker)


class _Marks(dict):
    """Template values that are placeholders, for a page rendered once and filled per game."""

    def __missing__(self, key: str) -> Markup:
        return Markup(f"\x00{key}\x00")


class _Pages:
    def __init__(self, env: jinja2.Environment, out: Path, outcome: LeagueOutcome,
                 settings: StoredLeague) -> None:
        self.env, self.out, self.outcome, self.settings = env, out, outcome, settings
        self.bot_file = {bot: f"bot-{n}.html" for n, bot in enumerate(outcome.bots)}
        self.facts = {bot: _BotFacts() for bot in outcome.bots}
        self.listed: list[dict[str, Any]] = []
        self.workers: dict[str, dict[str, float]] = defaultdict(
            lambda: {"games": 0, "strikes": 0, "seconds": 0.0})

    def render(self, template: str, path: Path, **context: Any) -> None:
        text = self.env.get_template(template).render(bot_file=self.bot_file, inline_assets=None,
                                                      assets_url=None,
                                                      **context)
        path.write_text(text, encoding="utf-8")

    def games(self, store: LeagueStore) -> None:
        """A replay page per game, holding the game's record as stored; the facts the other
        pages list. The page is rendered once with placeholders and filled in per game (a
        template render per game would cost more than everything else a game needs)."""
        marks = _Marks()
        skeleton = self.env.get_template("replay.html.j2").render(
            game=marks, record_text=marks["record"], root="../", inline_assets=None,
            assets_url=None,
            games_link="../games.html").split("\x00")
        rules = self.settings.rules
        played = {game.index: game for game in self.outcome.games}
        workers = store.workers()
        rows = store.db.execute("SELECT idx, game_id, seed, seconds, record FROM games "
                                "ORDER BY idx")
        for index, game_id, seed, seconds, blob in rows:
            game = played.get(index)
            if game is None:
                continue
            raw = unpack_record(blob)
            hand = (rules.dice, rules.big_dice, rules.neutral_per_player(game.players))
            values = {
                "game_id": escape(game_id), "preset": escape(rules.preset),
                "players": str(game.players), "seed": escape(seed),
                "worker_note": worker_note(workers.get(index)), "hand": ",".join(map(str, hand)),
                "record": script_text(raw),
            }
            page = "".join(part if n % 2 == 0 else values[part]
                           for n, part in enumerate(skeleton))
            (self.out / "games" / f"{index}.html").write_text(page, encoding="utf-8")
            details = json.loads(raw)["decisions"] if any(
                sum(kinds.values()) for kinds in game.strikes) else []
            self._gather(game, game_id, seconds, workers.get(index), details)

    def _gather(self, game: PlayedGame, game_id: str, seconds: float, worker: str | None,
                decisions: list[dict[str, Any]]) -> None:
        names = list(game.bots)
        index = game.index
        strikes = [sum(kinds.values()) for kinds in game.strikes]
        for number_, decision in enumerate(decisions):
            seat = decision.get("seat")
            if (decision.get("strike") and isinstance(seat, int) and seat in range(len(names))
                    and names[seat] in self.facts):
                self.facts[names[seat]].strikes.append(
                    {"game": index, "game_id": game_id, "decision": number_ + 1,
                     "type": decision["strike"], "detail": decision.get("detail", "")})
        for seat, name in enumerate(names):
            if name not in self.facts:
                continue
            latencies = game.latencies_us[seat]
            self.facts[name].games.append({
                "game": index, "game_id": game_id, "seat": seat,
                "players": len(names), "place": game.places[seat], "money": game.money[seat],
                "strikes": strikes[seat], "opponents": [n for n in names if n != name],
                "p50": _ms(percentile(latencies, 50)), "p95": _ms(percentile(latencies, 95)),
                "max": _ms(max(latencies) if latencies else None),
            })
        self.listed.append({"index": index, "game_id": game_id, "bots": names,
                            "places": list(game.places), "money": list(game.money),
                            "strikes": sum(strikes), "seconds": seconds, "worker": worker})
        if worker is not None:
            health = self.workers[str(worker)]
            health["games"] += 1
            health["strikes"] += sum(strikes)
            health["seconds"] += seconds

    def bot_pages(self) -> None:
        rows = {r["bot"]: r for r in
                to_json([*self.outcome.rows, *self.outcome.unranked], {})["table"]}
        history = _history(self.outcome)
        prior = self.settings.ratings_table
        for bot, facts in self.facts.items():
            n = history["bots"].index(bot) if bot in history["bots"] else None
            chart = {"games": history["games"], "bots": [bot], "prior": prior,
                     "series": [history["series"][n] if n is not None else []],
                     "colours": [history["colours"][(n or 0) % len(history["colours"])]]}
            self.render("bot.html.j2", self.out / "bots" / self.bot_file[bot], bot=bot,
                        row=rows.get(bot), facts=facts, root="../", chart=chart,
                        opponents=_opponents(self.outcome, bot),
                        fit_sizes=len({k for r in rows.values() for k in r["games_by_size"]}),
                        names_per_bot=NAMES_PER_BOT)

    def game_list(self) -> None:
        sizes = sorted({len(game["bots"]) for game in self.listed})
        self.render("games.html.j2", self.out / "games.html", games=self.listed,
                    bots=self.outcome.bots, sizes=sizes, root="")

    def index(self, versions: dict[str, str]) -> Path:
        outcome, settings = self.outcome, self.settings
        table = to_json(outcome.rows, outcome.h2h)
        rows = table["table"]
        fitted = any(row.get("strength") is not None for row in rows)
        by_size = fitted and len({k for row in rows for k in row.get("games_by_size", {})}) > 1
        extra_keys = [k for k in (rows[0] if rows else {}) if k not in KNOWN_ROW_KEYS]
        path = self.out / "index.html"
        self.render(
            "index.html.j2", path, rows=rows, extra_keys=extra_keys, table_json=TABLE_JSON,
            scale=_rating_scale(rows), heat=_heat_map(outcome), sizes=_size_wins(outcome),
            fitted=fitted, fit_scale=_fit_scale(rows) if fitted else None, by_size=by_size,
            chances=_chances(outcome),
            seats=max((len(row["seat_win_pct"]) for row in rows), default=0),
            history={**_history(outcome), "prior": settings.ratings_table},
            settings=settings, versions=versions,
            unranked=to_json(outcome.unranked, {})["table"],
            league_toml=league_file_text(settings),
            balance=outcome.balance, recorded=len(outcome.games),
            scheduled=len(outcome.schedule), workers=dict(self.workers),
            worker_health={row.worker: row for row in outcome.workers}, root="",
            extra_data={k: v for k, v in table.items()
                        if k not in ("table", "head_to_head", "pairwise")},
        )
        return path


def _ms(microseconds: float | None) -> float | None:
    return None if microseconds is None else microseconds / 1000


def _rating_scale(rows: list[dict[str, Any]]) -> dict[str, float]:
    """The rating axis the table's uncertainty bars share: mu +- 3 sigma of every bot."""
    if not rows:
        return {"low": 0.0, "high": 1.0}
    low = min(row["mu"] - 3 * row["sigma"] for row in rows)
    high = max(row["mu"] + 3 * row["sigma"] for row in rows)
    return {"low": low, "high": high if high > low else low + 1}


def _fit_scale(rows: list[dict[str, Any]]) -> dict[str, float]:
    """The strength axis the global fit's interval bars share."""
    lows = [row["strength_low"] for row in rows if row.get("strength_low") is not None]
    highs = [row["strength_high"] for row in rows if row.get("strength_high") is not None]
    if not lows or not highs:
        return {"low": 0.0, "high": 1.0}
    low, high = min(lows), max(highs)
    return {"low": low, "high": high if high > low else low + 1}


def _chances(outcome: LeagueOutcome) -> dict[str, Any] | None:
    """The global fit's chance that the row bot finishes ahead of the column bot, in table
    order; None without a fit."""
    pairwise = getattr(outcome, "pairwise", None) or {}
    if not pairwise:
        return None
    names = [row.bot for row in outcome.rows]
    return {"names": names, "cells": {pair: value for pair, value in pairwise.items()}}


def _heat_map(outcome: LeagueOutcome) -> dict[str, Any]:
    """Head-to-head cells in table order: (ahead, behind, share ahead or None)."""
    names = [row.bot for row in outcome.rows]
    cells = {}
    for a in names:
        for b in names:
            if a == b:
                continue
            together, ahead, behind = outcome.h2h.get((a, b), (0, 0, 0))
            decided = ahead + behind
            cells[a, b] = {"games": together, "ahead": ahead, "behind": behind,
                           "share": ahead / decided if decided else None}
    return {"names": names, "cells": cells}


def _opponents(outcome: LeagueOutcome, bot: str) -> list[dict[str, Any]]:
    """A bot's record against each bot it met, in table order: games at the same table, how
    often it finished ahead and behind, and the global fit's chance to finish ahead."""
    pairwise = getattr(outcome, "pairwise", None) or {}
    record = []
    for row in outcome.rows:
        if row.bot == bot:
            continue
        together, ahead, behind = outcome.h2h.get((bot, row.bot), (0, 0, 0))
        if together:
            decided = ahead + behind
            record.append({"bot": row.bot, "games": together, "ahead": ahead, "behind": behind,
                           "share": 100 * ahead / decided if decided else None,
                           "chance": pairwise.get((bot, row.bot))})
    return record


def _size_wins(outcome: LeagueOutcome) -> dict[str, Any]:
    """Win % per bot and table size: {"sizes": [...], "bots": {bot: {size: pct or None}}}."""
    counts: dict[tuple[str, int], list[int]] = defaultdict(lambda: [0, 0])
    for game in outcome.games:
        for seat, bot in enumerate(game.bots):
            cell = counts[bot, game.players]
            cell[0] += 1
            cell[1] += game.places[seat] == 1
    sizes = sorted({game.players for game in outcome.games})
    return {"sizes": sizes, "bots": {
        row.bot: {size: (100 * counts[row.bot, size][1] / counts[row.bot, size][0]
                         if counts[row.bot, size][0] else None) for size in sizes}
        for row in outcome.rows}}


def _history(outcome: LeagueOutcome) -> dict[str, Any]:
    """Each bot's rating after each of its games, for the chart: [game index, mu, sigma]."""
    series: dict[str, list[list[float]]] = {bot: [] for bot in outcome.bots}
    for index, bot, mu, sigma in outcome.ratings.history:
        series.setdefault(bot, []).append([index, round(mu, 3), round(sigma, 3)])
    order = [row.bot for row in outcome.rows]
    return {"games": len(outcome.schedule), "bots": order,
            "series": [series.get(bot, []) for bot in order], "colours": list(SEAT_COLOURS)}


def single_game_html(record: dict[str, Any], assets_url: str | None = None) -> str:
    """One game as a single HTML page: the viewer, its styles and the record (offered as a
    download too). Without `assets_url` the page is self-contained, the viewer's script and
    styles inlined (`referee match --html`); with it, they are linked from that URL prefix
    (`/static/report/` on the club server, whose Content-Security-Policy runs no inline
    script). The template and the assets are read once per process (the club serves it often)."""
    rules = RuleSet.from_dict(record["rules"])
    players = int(record["players"])
    game = {"game_id": record.get("game_id", ""), "preset": rules.preset, "players": players,
            "seed": record["seed"], "worker_note": worker_note(record.get("worker")),
            "hand": ",".join(map(str, (rules.dice, rules.big_dice,
                                       rules.neutral_per_player(players))))}
    return _replay_template().render(
        game=game, record_text=script_json(record), root="",
        inline_assets=_inline_assets() if assets_url is None else None,
        assets_url=assets_url, games_link=None)


@functools.cache
def _replay_template() -> jinja2.Template:
    """The one-game page's template, compiled once per process (the club serves it often)."""
    return environment().get_template("replay.html.j2")


@functools.cache
def _inline_assets() -> dict[str, str]:
    """The viewer's CSS and JavaScript for inlining, read and checked once per process."""
    inline = {"css": asset_text("report.css"), "js": asset_text("viewer.js")}
    if "</script" in inline["js"].lower() or "</style" in inline["css"].lower():
        raise ValueError("a packaged asset cannot be inlined")  # would end its element early
    return inline
