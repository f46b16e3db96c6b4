"""Which specs can play in one league together: one name per bot, one folder per submission.

A bot sees its whole folder (its `workdir`), and its build may write there, so a spec whose
folder is another spec's folder, or holds it, could read that bot's code into its output (the
records, the public report) or change it. Within one league such specs are refused, each with
one line naming both files, unless the league file says they are one submission under two
settings (`shared_folders`, docs/league.md).

Which folder belongs to which spec follows the layout docs/league.md recommends: `NAME/` belongs
to the spec `NAME.toml` beside it, and a folder that holds a spec file belongs to that spec
(`alice/bot.toml` with `workdir = "."`). A spec whose folder belongs to another spec of the
league by the first rule is refused. When two specs use one folder, the one it belongs to keeps
it (when exactly one does) and the other is refused; when it belongs to neither or to both,
both are refused. A spec whose folder holds another spec's folder is refused.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from pathlib import Path

from referee.bots.spec import BotSpec, BotSpecError

HOW = ("a bot runs only in its own submission's folder: bots/NAME/ beside bots/NAME.toml "
       "(docs/league.md); if they are one submission under two settings, list both files in "
       "the league file's shared_folders")


def owns(spec: BotSpec, folder: Path) -> bool:
    """Whether `folder` belongs to `spec` by the layout: NAME/ beside NAME.toml, or the folder
    that holds the spec file."""
    assert spec.path is not None
    return folder in (spec.path.parent / spec.path.stem, spec.path.parent)


def refusals(specs: Sequence[BotSpec], shared: Collection[Collection[Path]] = (),
             names: bool = True) -> list[tuple[BotSpec, BotSpecError]]:
    """The specs that cannot play with the others, in the order given, each with its one-line
    reason naming both files: a spec giving a name an earlier one gave (the earlier one plays;
    not with `names=False`, for callers that rename), and specs whose folders are the same as,
    or hold, another's (see the module's rules). `shared` lists groups of spec files (resolved
    paths) that may share folders."""
    refused: dict[int, BotSpecError] = {}
    seen: dict[str, BotSpec] = {}
    for n, spec in enumerate(specs):
        first = seen.setdefault(spec.name, spec)
        if names and first is not spec and first.path != spec.path:
            refused[n] = BotSpecError(f"{spec.path}: key 'name': {spec.name!r} is already the "
                                      f"name of the bot in {first.path}")
    folders = [(n, spec, spec.workdir) for n, spec in enumerate(specs)
               if n not in refused and spec.kind == "command" and spec.workdir is not None
               and spec.path is not None]

    def refuse(n: int, spec: BotSpec, other: BotSpec, why: str) -> None:
        if spec.path == other.path:
            return   # one spec in two roles (a gauntlet's baseline in its field)
        if not any(spec.path in group and other.path in group for group in shared):
            refused.setdefault(n, BotSpecError(f"{spec.path}: key 'workdir': {why} the bot in "
                                               f"{other.path}; {HOW}"))

    by_path = {spec.path: spec for _, spec, _ in folders}
    for n, spec, folder in folders:   # bots/alice/ belongs to bots/alice.toml, used or not
        owner = by_path.get(folder.parent / f"{folder.name}.toml")
        if owner is not None and owner is not spec:
            refuse(n, spec, owner, f"its folder {folder} belongs to")
    for i, (n, a, a_dir) in enumerate(folders):
        for m, b, b_dir in folders[i + 1:]:
            for k, spec, other, why in _clashes(n, a, a_dir, m, b, b_dir):
                refuse(k, spec, other, why)
    return [(specs[n], refused[n]) for n in sorted(refused)]


def _clashes(n: int, a: BotSpec, a_dir: Path, m: int, b: BotSpec, b_dir: Path
             ) -> list[tuple[int, BotSpec, BotSpec, str]]:
    """(index, refused spec, the other spec, why) for a pair of specs' folders."""
    if a_dir == b_dir:
        why = f"its folder {a_dir} is also the folder of"
        keeper = [spec for spec in (a, b) if owns(spec, a_dir)]
        pairs = [(n, a, b), (m, b, a)]
        return [(k, spec, other, why) for k, spec, other in pairs
                if len(keeper) != 1 or keeper[0] is not spec]
    if b_dir.is_relative_to(a_dir):
        return [(n, a, b, f"its folder {a_dir} holds {b_dir}, the folder of")]
    if a_dir.is_relative_to(b_dir):
        return [(m, b, a, f"its folder {b_dir} holds {a_dir}, the folder of")]
    return []
