"""Reading TOML configuration: rule set files (and, later, league files)."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from referee.engine import RuleSet
from referee.engine.errors import RulesError


class ConfigError(ValueError):
    """A configuration file that cannot be used; the message names the file and the key."""


def read_toml(path: Path) -> dict[str, Any]:
    """Parse a TOML file; ConfigError naming the file and line on a syntax error."""
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None


def rules_from_value(value: Any, where: str) -> RuleSet:
    """A rule set from a preset name or a table of options; errors name `where`."""
    try:
        if isinstance(value, str):
            return RuleSet.from_dict({"preset": value})
        if isinstance(value, dict):
            return RuleSet.from_dict(value)
    except (RulesError, TypeError) as exc:
        raise ConfigError(f"{where}: {exc}") from None
    raise ConfigError(f"{where}: expected a preset name or a table of rule options")


def load_rules_file(path: Path) -> RuleSet:
    """A rule set from a TOML file of options (`preset = "classic"`, `slot = true`, ...)."""
    data = read_toml(path)
    return rules_from_value(data.get("rules", data), str(path))
