"""Optional extras: features whose libraries a plain `pip install referee` leaves out.

A feature asked for without its extra stops with one line naming the extra to install, before
anything is started or written, instead of an import error from deep inside the program.
"""

from __future__ import annotations

import importlib

from referee.util.config import ConfigError

# module -> (the extra that installs it, the option or feature that needs it)
EXTRAS = {"distributed": ("cluster", "--cluster"), "django": ("server", "referee serve")}


class MissingExtraError(ConfigError):
    """A feature was asked for whose optional extra is not installed."""


def missing_extra_message(module: str, feature: str | None = None) -> str | None:
    """"--cluster needs the cluster extra: pip install -e '.[cluster]' in the referee's clone"
    for a module of an extra (None for any other module). The referee is installed from its
    clone (it is on no package index, where `pip install 'referee[cluster]'` finds nothing)."""
    top = module.split(".")[0]
    if top not in EXTRAS:
        return None
    extra, default_feature = EXTRAS[top]
    return (f"{feature or default_feature} needs the {extra} extra: "
            f"pip install -e '.[{extra}]' in the referee's clone")


def require(module: str, feature: str | None = None) -> None:
    """MissingExtraError naming the extra unless `module` can be imported."""
    try:
        importlib.import_module(module)
    except ImportError:
        message = missing_extra_message(module, feature)
        raise MissingExtraError(message or f"{feature or module} needs the module {module}") \
            from None
