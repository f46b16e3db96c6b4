"""Where the files beside the package are: `proto/` (bot.proto) and `sample_bots/`.

In a source checkout (an editable install included) they are the checkout's top-level folders;
a built wheel carries copies of them inside the package, in `referee/bundled/` (setup.py puts
them there at build time). `resource` is the one place that decides which.
"""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1]   # referee/ (this is referee/util/)
CHECKOUT = PACKAGE.parent            # the source tree, when the package runs from one
BUNDLED = PACKAGE / "bundled"        # only in an installed wheel
BUNDLED_FOLDERS = ("proto", "sample_bots")


def resource(name: str) -> Path:
    """The folder `name` (one of BUNDLED_FOLDERS): the copy the installed wheel carries, else
    the checkout's."""
    assert name in BUNDLED_FOLDERS, name
    bundled = BUNDLED / name
    return bundled if bundled.is_dir() else CHECKOUT / name


def proto_file() -> Path:
    """bot.proto, the protocol's definition (it may be missing from a stripped-down tree)."""
    return resource("proto") / "lasvegas" / "v1" / "bot.proto"


def sample_bots() -> Path:
    """The folder of the sample bots' specs (random.toml, greedy.toml...)."""
    return resource("sample_bots")
