"""The command line's own parameter types and option checks: rule sets (a preset or a rules
TOML file), secret seeds, table sizes, a season's limits, files to write.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click

from referee.engine import PRESETS, RuleSet, preset
from referee.errors import UserError
from referee.util.numbers import is_whole


class RulesParam(click.ParamType):
    """A preset name, or a TOML file holding a rule set (`preset = ...` plus options)."""

    name = "rules"

    def convert(self, value: Any, param: Any, ctx: Any) -> RuleSet:
        if isinstance(value, RuleSet):
            return value
        try:
            if value in PRESETS:
                return preset(value)
            path = Path(value)
            if path.suffix == ".toml" and path.exists():
                from referee.util.config import load_rules_file

                return load_rules_file(path)
            return preset(value)
        except UserError as exc:   # an unknown preset, a rules file that cannot be used
            self.fail(str(exc), param, ctx)


RULES = RulesParam()


class SecretParam(click.ParamType):
    """A secret seed: a whole number from 0 to 2^256-1 (help says so in words: the range's 78
    digits would not fit a line)."""

    name = "seed"

    def get_metavar(self, param: Any, ctx: Any = None) -> str:
        return "SEED"

    def convert(self, value: Any, param: Any, ctx: Any) -> int:
        if isinstance(value, int) and not isinstance(value, bool):
            number = value
        else:
            text = str(value).strip()
            if not is_whole(text, digits=78):
                self.fail(f"{value!r} is not a whole number (0 to 2^256-1)", param, ctx)
            number = int(text)
        if not 0 <= number < 2**256:
            self.fail(f"{value} is not in the range 0 to 2^256-1", param, ctx)
        return number


SECRET = SecretParam()


def players_option(ctx: Any, param: Any, value: str | None) -> tuple[int, int] | None:
    """--players as a table size or a range like 2-5, checked like a league file's."""
    if value is None:
        return None
    from referee.league.config import parse_players

    try:
        return parse_players(value, "--players")
    except UserError as exc:
        raise click.BadParameter(str(exc)) from None


def limit_options(ctx: click.Context, param: click.Parameter,
                   values: tuple[str, ...]) -> dict[str, int]:
    """--limit KEY=N options as a table of limits, checked like a league's [limits]."""
    from referee.league.config import check_limits
    from referee.util.config import ConfigError

    table: dict[str, int] = {}
    for value in values:
        key, _, number = value.partition("=")
        if not is_whole(number):
            raise click.BadParameter(f"expected KEY=N (a whole number), got {value!r}")
        table[key] = int(number)
    try:
        check_limits(table, "--limit")
    except ConfigError as exc:
        raise click.BadParameter(str(exc)) from None
    return table


def check_writable(path: Path, option: str) -> None:
    """UsageError naming `option` and `path` unless a file can be written at `path`."""
    parent = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise click.UsageError(f"{option} {path}: is a directory")
    if not parent.is_dir():
        raise click.UsageError(f"{option} {path}: no directory {parent}")
    if not os.access(path if path.exists() else parent, os.W_OK):
        raise click.UsageError(f"{option} {path}: cannot write there (permission denied)")
