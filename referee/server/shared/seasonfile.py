"""The season file's keys in words: what each one means, the file the first start of
`referee serve` writes from them (every key with its default, a comment above each), and a
changed file's differences as the runner says them.

The keys and their defaults live in `seasonkeys` (RunnerSettings, ServerLimits) and the rooms
below (LeagueSettings, Limits, RatingParams); this table adds the words, so the written file,
the season page and docs/server.md never hold a copy of a default that could drift.
"""

from __future__ import annotations

import dataclasses
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tomli_w

from referee.bots.spec import Limits
from referee.league.config import LeagueSettings
from referee.league.season import season_table_sizes
from referee.ratings.trueskill import RatingParams
from referee.server.shared.seasonkeys import (
    AT_START,
    CEILINGS,
    DEFAULT_HOUSE,
    LIVE,
    SAMPLES,
    RunnerSettings,
    ServerLimits,
)

HEADER = """\
# season.toml: the club's season ({where}).
# `referee serve` wrote this file on its first start, with every key at its default; change
# what you like (the Organiser page changes the pace, the limits and the house bots for you).
# The web server reads its keys at each request; the runner reads the file again between
# rounds and prints one line saying what changed. Keys marked "new season" are fixed when the
# season starts: a change applies to the next season (a new data folder).
"""


@dataclass(frozen=True)
class Key:
    """One key of the season file: its name, its `[table]` ("" at the top), and one line on
    what it does. `written=False`: it has no value to write by default (the line is a
    commented-out example)."""

    name: str
    about: str
    table: str = ""
    written: bool = True
    example: Any = None


KEYS: tuple[Key, ...] = (
    # -- the season's games (new season)
    Key("name", "the season's name, shown on the season page"),
    Key("rules", "the rule set: a preset (classic, ...) or a table of options (docs/rules.md); "
                 "new season"),
    Key("players", "table sizes: a number (4) or a range (\"2-4\"); new season"),
    Key("seed", "the season's secret; by default drawn at its first start and stored, so "
                "nobody can know a game's dice in advance; new season",
        written=False, example=123456789),
    Key("strikes_to_forfeit", "strikes (late or bad answers) before a bot forfeits a game; "
                              "new season"),
    Key("forfeits_to_take_out", "season games a bot forfeits in a row before its version is "
                                "taken out of the season (a finished game ends the row; a new "
                                "upload or the organiser puts it back)"),
    Key("autoplay_forced", "true: a forced move is made for the bot without asking it; "
                           "new season"),
    Key("duplicate", "true: each deal is played again with the seats turned; new season"),
    Key("concurrency", "games at once; by default from the cores and the table size",
        written=False, example=4),
    Key("sandbox", "false: bots run without bubblewrap; by default wherever it works (an "
                   "upload only with unconfined_uploads = true)",
        written=False, example=True),
    Key("unconfined_uploads", "true: where bubblewrap does not work (or sandbox = false), "
                              "uploads are built and run WITHOUT a sandbox (every organiser "
                              "page says so); false: they are stored, but not built or run"),
    Key("cluster", "play on dask: an address or local:N (docs/cluster.md); by default here",
        written=False, example="local:2"),
    # -- pace and rounds
    Key("games_per_bot_per_hour", "the pace: rounds start no faster than this many games per "
                                  "bot an hour (0: as fast as the machine goes); a newcomer's "
                                  "first games are never held back"),
    Key("round_games", "games per active bot in each round; new season"),
    Key("max_rounds", "0: rounds go on until the season is closed; new season"),
    Key("max_catch_up", "most games a newcomer gets at once, before the next round; "
                        "new season"),
    Key("refit_games", "refit the table after this many new games..."),
    Key("refit_seconds", "...or this long after the last refit with new games"),
    # -- house bots
    Key("house_bots", "house bots: sample bot names (random, greedy, montecarlo, greedy-js) or "
                      "spec files; [] for none"),
    Key("house_in_final_table", "false: the tables and report written at close leave them "
                                "out"),
    # -- checks and test games
    Key("check_concurrency", "checks at once"),
    Key("check_timeout_s", "a check, its build included, is stopped after this (seconds)"),
    Key("write_max_mb", "most a build, or a bot in its /tmp, writes (MiB, all files)"),
    Key("test_game_timeout_s", "a test game, its bots' start-up included (seconds)"),
    # -- games students play in the browser (docs/play.md)
    Key("human_move_seconds", "a player's time for one move in the browser (seconds)"),
    Key("human_bank_seconds", "... and their bank for the game, used past the move's time"),
    Key("human_games_at_once", "games in the browser the runner plays at once (one per "
                               "student: the others wait, taken in turn between students)"),
    Key("human_idle_seconds", "a player who has not answered this long has left: their seat "
                              "forfeits and the bots finish the game (seconds)"),
    Key("human_game_seconds", "... and a player's whole game: past this they leave at their "
                              "next move (seconds)"),
    # -- the web server (read at each request)
    Key("max_bots_per_student", "a new student's cap on bots (the admin changes it per "
                                "student)"),
    Key("test_games_per_hour", "test games a student may ask for in an hour"),
    Key("upload_max_bytes", "one upload as sent; bigger is refused before it is read"),
    Key("unpacked_max_bytes", "a folder bot unpacked: a zip bomb stops here"),
    Key("max_files", "entries in an archive"),
    Key("uploads_per_hour", "uploads a student may make in an hour"),
    Key("student_disk_mb", "all a student's uploads may take on disk, archives and built "
                           "folders (MiB); an upload past it is refused. A replaced, failed or "
                           "retired version keeps its archive and check report; its built "
                           "folder is removed"),
    Key("sign_in_failures_per_address", "failed sign-ins an hour from one address"),
    Key("sign_in_failures_per_name_and_address", "... for one name from one address"),
    Key("sign_in_failures_per_name", "... for one name from browsers new to it"),
    Key("streams_per_student", "live games one student (or one address) watches at once; "
                               "the organiser's big screen is not held to it"),
    Key("api_requests_per_hour", "requests an hour with one API token"),
    Key("public_leaderboard", "true: anyone, signed in or not, sees the leaderboard and the "
                              "season page"),
    Key("play_against_students", "true: a student may play in the browser against other "
                                 "students' current bots, not only their own and the house's"),
    # -- [limits]: a ceiling on every bot's own limits (a key left out: its default ceiling)
    *(Key(f.name, f"ceiling on {f.name}; a bot's own default is "
                  f"{'none' if f.default is None else f.default}", table="limits")
      for f in dataclasses.fields(Limits) if f.name != "given"),
    # -- [ratings]: the TrueSkill environment (new season)
    *(Key(f.name, f"TrueSkill's {f.name}; new season", table="ratings")
      for f in dataclasses.fields(RatingParams)),
)


def defaults() -> dict[str, Any]:
    """Every written key's default as the file spells it ({table: {key: value}} for tables),
    read from the settings classes themselves."""
    runner, league, web = RunnerSettings(), LeagueSettings(bots=[]), ServerLimits()
    rules = league.rules
    top: dict[str, Any] = {
        "name": "", "rules": rules.preset,
        "players": season_table_sizes(league)[0],   # what a season makes of no `players`
        "strikes_to_forfeit": league.strikes_to_forfeit,
        "autoplay_forced": league.autoplay_forced, "duplicate": league.duplicate,
        "house_bots": list(DEFAULT_HOUSE), "public_leaderboard": False,
        "play_against_students": False,
    }
    for holder in (runner, web):
        for item in dataclasses.fields(holder):
            if item.name not in top and item.name not in ("league", "house_bots"):
                top[item.name] = getattr(holder, item.name)
    return {**top, "limits": dict(CEILINGS), "ratings": dataclasses.asdict(league.ratings)}


def _line(key: str, value: Any) -> str:
    return tomli_w.dumps({key: value}).strip()


def default_text(where: str = "") -> str:
    """The season file with every key of KEYS: its comment, then its default (or, for a key
    without one, a commented-out example)."""
    values = defaults()
    lines = [HEADER.format(where=where or "the club server's data folder")]
    table = ""
    for key in KEYS:
        if key.table != table:
            table = key.table
            lines.append(f"\n[{table}]")
            lines.append({"limits": "# A ceiling on every bot's own limits, in its check, "
                                    "its test games and its games;\n# a key left out is its "
                                    "default ceiling, the value written here.",
                          "ratings": "# The TrueSkill environment the table is fitted with."}
                         [table])
        lines.extend(textwrap.wrap(key.about, 96, initial_indent="# ",
                                   subsequent_indent="#   "))
        if key.written:
            value = values[key.table][key.name] if key.table else values[key.name]
            lines.append(_line(key.name, value))
        else:
            lines.append("# " + _line(key.name, key.example))
    return "\n".join(lines) + "\n"


def write_default(path: Path) -> bool:
    """Write the default season file at `path` unless a file is there; True if written."""
    if path.exists():
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(default_text(str(path)))
    return True


def house_label(spec: Path) -> str:
    """A house bot as the file names it: a sample bot's name, else its spec's path."""
    spec = Path(spec)
    return spec.stem if spec.parent.resolve() == SAMPLES.resolve() else str(spec)


def runner_values(settings: Any) -> dict[str, Any]:
    """Every key the runner reads, with the value `settings` (a RunnerSettings) gives it in
    effect: a season that leaves out `players` has the table size it will play."""
    league = settings.league
    values = {item.name: getattr(settings, item.name) for item in dataclasses.fields(settings)
              if item.name != "league"}
    rules = league.rules
    low, high = season_table_sizes(league)
    values.update(
        house_bots=[house_label(spec) for spec in settings.house_bots],
        rules=rules.to_dict(), players=f"{low}-{high}" if low != high else str(low),
        seed="drawn at the first start" if league.seed is None else "set in the file",
        strikes_to_forfeit=league.strikes_to_forfeit, autoplay_forced=league.autoplay_forced,
        duplicate=league.duplicate, concurrency=league.concurrency, sandbox=league.sandbox,
        cluster=league.cluster, limits=dict(sorted(league.limits.items())),
        ratings=dataclasses.asdict(league.ratings))
    return values


def pace_words(per_hour: int) -> str:
    """The pace as the season page and the runner say it."""
    if per_hour == 0:
        return "as fast as the machine goes"
    return f"about {per_hour} game{'' if per_hour == 1 else 's'} per bot per hour"


# How a key's value reads where it is not a plain number or name.
_WORDS: dict[str, dict[Any, str]] = {
    "sandbox": {None: "wherever bubblewrap works (the default)", True: "always",
                False: "never"},
}


def value_words(key: str, value: Any) -> str:
    """A key's value as a person reads it: a key left out of the file is its default, never
    "None"; true and false as the file writes them."""
    words = _WORDS.get(key, {})
    if value in words and (value is not None or None in words):
        return words[value]
    if value is None:
        return "not set (the default)"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def changes(old: Any, new: Any) -> list[str]:
    """What differs between two RunnerSettings, one short phrase per key, with when it
    applies for the keys the runner does not apply between rounds."""
    before, after = runner_values(old), runner_values(new)
    said = []
    for key in after:
        was, now = before[key], after[key]
        if was == now:
            continue
        if key == "games_per_bot_per_hour":
            text = f"pace: {was} -> {now} games per bot per hour"
        elif key == "limits":
            text = "limits: " + ", ".join(
                f"{name} {was.get(name, 'none')} -> {now.get(name, 'none')}"
                for name in sorted({*was, *now}) if was.get(name) != now.get(name))
        elif key == "house_bots":
            gone, came = [b for b in was if b not in now], [b for b in now if b not in was]
            if not gone and not came:
                continue   # the same bots in another order
            text = "house bots: " + ", ".join([*(f"+{b}" for b in came),
                                               *(f"-{b}" for b in gone)])
        elif key in ("rules", "ratings"):
            text = f"{key} changed"
        else:
            text = f"{key}: {value_words(key, was)} -> {value_words(key, now)}"
        if key in AT_START:
            text += " (from the runner's next start)"
        elif key not in LIVE:
            text += " (for the next season: this one keeps its own)"
        said.append(text)
    return said
