"""The season's bot names as both processes make them: an upload's (the web process) and a
house bot's (the runner), from a spec's name."""

from __future__ import annotations

import re

HOUSE_PREFIX = "house-"   # the house bots' names: no student's bot may take one


def bot_name_from(spec_name: str) -> str:
    """A season bot name made from a spec's name: lower case, '.' and '_' become '-'."""
    return re.sub(r"[._]+", "-", spec_name.lower()).strip("-")[:32]


def house_name(spec_name: str) -> str:
    """The house bot's name for a spec named `spec_name` (`house-NAME`)."""
    return HOUSE_PREFIX + bot_name_from(spec_name)
