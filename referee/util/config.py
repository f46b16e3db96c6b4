"""Reading TOML configuration: rule set files (and, later, league files)."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from referee.engine import RuleSet
from referee.engine.errors import RulesError
from referee.errors import UserError


class ConfigError(UserError, ValueError):
    """A configuration file that cannot be used; the message names the file and the key."""


MAX_TOML_BYTES = 1024 * 1024   # a spec, league or rules file is a few lines: refuse far more


def read_toml(path: Path) -> dict[str, Any]:
    """Parse a TOML file; ConfigError naming the file (and the line, for a syntax error) on a
    file that is missing, too big, not UTF-8 text, not TOML, or nested too deeply to parse."""
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_TOML_BYTES + 1)
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise ConfigError(f"{path}: is a directory, not a TOML file") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None
    if len(raw) > MAX_TOML_BYTES:
        raise ConfigError(f"{path}: larger than {MAX_TOML_BYTES // 1024} KiB: not a TOML file")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not a text file (invalid UTF-8 at byte {exc.start})") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    except RecursionError:
        lines = text.splitlines() or [""]
        deepest = max(range(len(lines)), key=lambda i: lines[i].count("[") + lines[i].count("{"))
        raise ConfigError(f"{path}: invalid TOML: arrays or tables nested too deeply (at line "
                          f"{deepest + 1})") from None


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
