"""The season page (what the season is: rules, table sizes, limits, schedule, seed policy,
house bots, pace, the store's size) and the organiser's form that changes the pace, the limits
and the house bots in the season file.

The season file is the one place these live: the form rewrites it (keeping the organiser's
comments) after the runner's own loader accepted the new text, and the runner applies it
between rounds.
"""

from __future__ import annotations

import contextlib
import os
import re
from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from referee.bots.spec import DEFAULT_FILES_BOUND, Limits
from referee.league.stored import StoredLeague, read_league
from referee.server.club.games import season_folder, season_store
from referee.server.club.models import Bot
from referee.server.club.people import is_organiser
from referee.server.club.views.common import leaderboard_open, organiser_only
from referee.server.shared.diskuse import RULE as RETENTION_RULE
from referee.server.shared.seasonfile import pace_words, runner_values
from referee.server.shared.seasonkeys import START_FAILURES_OUT, ServerLimits
from referee.server.shared.seasonread import season_file, season_read, server_limits
from referee.util import numbers
from referee.util.config import ConfigError

# The limits the organiser's form sets (a ceiling on every bot's own; blank: the server's
# default ceiling, referee.server.shared.seasonkeys.CEILINGS).
FORM_LIMITS = ("decision_ms", "game_bank_ms", "startup_ms", "memory_mb")
LIMIT_WORDS = {"decision_ms": "time per decision (ms)", "game_bank_ms": "time bank per game (ms)",
               "startup_ms": "start-up time (ms)", "memory_mb": "memory (MiB)",
               "cpu_seconds": "CPU time per game (s)", "max_processes": "processes",
               "build_seconds": "build time (s)"}


def file_settings() -> tuple[Any, str]:
    """The runner's settings from the season file, and "" or the one line saying why the file
    cannot be used (then the last good file's: limits.season_read). The line names the file:
    only the organiser is shown it."""
    read = season_read()
    return read.runner, read.problem


def stored_season() -> tuple[StoredLeague | None, int] | None:
    """The season as its store holds it (its settings, None while it holds none yet) and the
    games recorded, or None before the runner first started it."""
    with season_store() as store:
        if store is None:
            return None
        return read_league(store), store.count()


def store_bytes() -> int:
    """What the season's store takes on disk: the store and its write-ahead log."""
    total = 0
    for part in season_folder().store_parts:
        with contextlib.suppress(OSError):   # no store yet, or no log at the moment
            total += part.stat().st_size
    return total


def limit_rows(ceiling: dict[str, int]) -> list[dict[str, Any]]:
    """Each bot limit: the season's ceiling (the server's default ceiling where the season
    file leaves the key out), the bot's own default, and that default ceiling."""
    from referee.server.shared.seasonkeys import CEILINGS

    rows = []
    for name, words in LIMIT_WORDS.items():
        default = getattr(Limits(), name)
        rows.append({"name": name, "words": words,
                     "ceiling": ceiling.get(name, CEILINGS[name]),
                     "default": "none" if default is None else default,
                     "server_default": CEILINGS[name]})
    return rows


def season_facts() -> dict[str, Any]:
    """What the season page shows. The keys that define the season's games come from its
    store once it started (what it plays); the others from the season file (what applies)."""
    runner, problem = file_settings()
    values = runner_values(runner)
    found = stored_season()
    stored, recorded = found if found is not None else (None, 0)
    if stored is not None:
        values.update(_stored_values(stored))
    pace = runner.games_per_bot_per_hour
    size = store_bytes()
    return {
        "values": values, "problem": problem, "stored": stored,
        "name": _file_name(), "file": season_file(),
        "limit_rows": limit_rows(values["limits"]),
        "pace_words": pace_words(pace),
        "round_gap_minutes": round(values["round_games"] * 60 / pace, 1) if pace else 0,
        "house": Bot.objects.filter(house=True).order_by("name"),
        "rounds": stored.season.rounds if stored is not None and stored.season else 0,
        "recorded": recorded, "store_bytes": size,
        "bytes_per_game": size // recorded if recorded else None,
        "disk_budget_mb": _disk_budget_mb(), "retention_rule": RETENTION_RULE,
        "files_bound": DEFAULT_FILES_BOUND.words(), "start_failures_out": START_FAILURES_OUT,
    }


def _disk_budget_mb() -> int:
    """Each student's disk budget (`student_disk_mb`); the default when the file is unusable
    (the page says why elsewhere)."""
    try:
        return server_limits().student_disk_mb
    except ValueError:
        return ServerLimits().student_disk_mb


def _stored_values(stored: StoredLeague) -> dict[str, Any]:
    """The page's values that define the season's games, as its store holds them."""
    low, high = stored.players
    values: dict[str, Any] = {
        "rules": stored.rules_table, "limits": stored.limits,
        "strikes_to_forfeit": stored.strikes_to_forfeit,
        "autoplay_forced": stored.autoplay_forced, "duplicate": stored.duplicate}
    if stored.season is not None:
        season = stored.season
        values.update(round_games=season.round_games or 0, max_rounds=season.max_rounds or 0)
        if season.max_catch_up is not None:   # a season stored before it was kept: the file's
            values["max_catch_up"] = season.max_catch_up or 0
    if low:
        values["players"] = f"{low}-{high}" if low != high else str(low)
    return values


def _file_name() -> str:
    from referee.server.shared.seasonread import season_table

    try:
        name = season_table().get("name", "")
    except ValueError:
        return ""
    return name if isinstance(name, str) else ""


@leaderboard_open
def season_page(request: HttpRequest) -> HttpResponse:
    """GET /season/: what the season is (open as the leaderboard is). Why the season file
    cannot be used is the organiser's to read (it names a path on the server)."""
    facts = season_facts()
    if not is_organiser(request.user):
        facts["problem"], facts["file"] = "", None
    return render(request, "club/season.html", facts)


# ------------------------------------------------------------------------- the organiser's form

def public_switch() -> bool:
    """The public switch as the season file sets it (off where the file does not say)."""
    from referee.server.shared.seasonread import public_leaderboard

    try:
        return public_leaderboard()
    except ValueError:
        return False


def form_initial(runner: Any) -> dict[str, Any]:
    """The organiser form's fields as the season file sets them now."""
    from referee.server.shared.seasonfile import house_label

    initial = {"games_per_bot_per_hour": str(runner.games_per_bot_per_hour),
               "house_bots": ", ".join(house_label(p) for p in runner.house_bots),
               "house_in_final_table": runner.house_in_final_table,
               "public_leaderboard": public_switch()}
    for name in FORM_LIMITS:
        value = runner.league.limits.get(name)
        initial[name] = "" if value is None else str(value)
    return initial


def whole_number(text: str, what: str) -> int:
    """A form field's whole number; ValueError, one line naming the field, otherwise."""
    text = text.strip()
    try:
        return numbers.whole_number(text, what, digits=9)
    except numbers.NumberError:
        raise ValueError(f"{what}: expected a whole number, got {text[:40]!r}") from None


def new_file_text(old: str, form: dict[str, str]) -> str:
    """The season file `old` with the form's pace, limits and house bots (the organiser's
    comments and other keys kept). ValueError, one line, for a field that is no value."""
    import tomlkit

    try:
        doc = tomlkit.parse(old)
    except tomlkit.exceptions.ParseError as exc:
        raise ValueError(f"the season file cannot be read as TOML ({exc}); fix it by hand "
                         f"first") from None
    doc["games_per_bot_per_hour"] = whole_number(form.get("games_per_bot_per_hour", ""),
                                                 "pace (games per bot per hour)")
    names = [n for n in re.split(r"[\s,]+", form.get("house_bots", "")) if n]
    doc["house_bots"] = names
    doc["house_in_final_table"] = form.get("house_in_final_table") == "on"
    doc["public_leaderboard"] = form.get("public_leaderboard") == "on"
    limits = doc.get("limits")
    if limits is None:
        limits = tomlkit.table()
        doc["limits"] = limits
    for name in FORM_LIMITS:
        text = form.get(name, "").strip()
        if text:
            limits[name] = whole_number(text, LIMIT_WORDS[name])
        elif name in limits:
            del limits[name]
    return tomlkit.dumps(doc)


def change_season_file(form: dict[str, str]) -> str:
    """Rewrite the season file with the form's values, once the runner's own loader accepted
    the new text; the one line saying what changed. ValueError, one line, and the file as it
    was, for a value it refuses."""
    from referee.server.shared.seasonfile import changes
    from referee.server.shared.seasonkeys import load_runner_settings

    path = season_file()
    try:
        old_text = path.read_text()
    except FileNotFoundError:
        old_text = ""
    old, problem = file_settings()
    text = new_file_text(old_text, form)
    # Beside the file: a house bot's spec path is relative to the file's folder.
    trial = path.with_name(f".{path.name}.{os.getpid()}.new")
    try:
        trial.write_text(text)
        try:
            new = load_runner_settings(trial)
        except ConfigError as exc:
            raise ValueError(str(exc).replace(str(trial), str(path))) from None
        os.replace(trial, path)
    finally:
        trial.unlink(missing_ok=True)
    if problem:   # what it held was never applied: no change to tell from it
        return f"season file written: it can be used again (it could not: {problem})"
    said = changes(old, new)
    if not said:
        return "the season file is unchanged"
    return "season file changed: " + "; ".join(said) + \
        " (the runner applies it between rounds)"


@organiser_only
@require_POST
def season_settings(request: HttpRequest) -> HttpResponse:
    """POST from the organiser page: new pace, limits and house bots."""
    from referee.present.text import safe_line

    try:
        text = change_season_file({key: str(request.POST.get(key, ""))
                                   for key in ("games_per_bot_per_hour", "house_bots",
                                               "house_in_final_table", "public_leaderboard",
                                               *FORM_LIMITS)})
    except ValueError as exc:
        messages.error(request, "not changed: " + safe_line(str(exc), limit=300))
    else:
        messages.success(request, safe_line(text, limit=600))
    return redirect("club:organiser")
