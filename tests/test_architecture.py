"""The house shows the architecture (docs/architecture.md): every module of the package lives in a
room, and every import between rooms runs the way the table below allows, so no room depends on
one above it and no two rooms depend on each other.

Imports are read from the source (ast), every one of them: at module level, inside functions
and under TYPE_CHECKING. A module's room comes from its name; the table knows the grouped
layout (referee/game/, referee/checking/, referee/present/, referee/util/) and the top-level
modules the grouping moves there, so it holds before and after the move.

Inside the server the same holds between its parts (SERVER_ALLOWED): the club (the web process)
and the season runner meet only in the shared module, and no import circle joins its modules.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Module name (a dotted prefix) -> room. The longest prefix wins.
ROOM_OF: dict[str, str] = {
    "referee.errors": "errors",
    "referee.engine": "engine",
    "referee.engine.cache": "engine",          # only the engine uses it: referee/engine/cache.py
    "referee.util": "util",
    "referee.util.seeds": "util",
    "referee.util.resources": "util",
    "referee.util.extras": "util",
    "referee.util.config": "util",
    "referee.util.outdir": "util",
    "referee.util.quiet": "util",
    "referee.present": "present",
    "referee.present.text": "present",
    "referee.present.render": "present",
    "referee.present.notes": "present",
    "referee.protocol": "protocol",
    "referee.sdk": "sdk",
    "referee.bots": "bots",
    "referee.game": "game",
    "referee.game.match": "game",
    "referee.game.single": "game",
    "referee.game.human": "game",
    "referee.game.simulate": "game",
    "referee.checking": "checking",
    "referee.checking.conformance": "checking",
    "referee.checking.isolated": "checking",
    "referee.ratings": "ratings",
    "referee.league": "league",
    "referee.report": "report",
    "referee.server": "server",
    "referee.cli": "cli",
}
PACKAGE_ROOM = "util"   # `referee` itself holds only __version__

# Room -> the rooms it may import. Lower rooms never import higher ones; cli sits on top.
BELOW_GAME = {"engine", "util", "present", "protocol", "bots"}
ALLOWED: dict[str, set[str]] = {
    "errors": set(),
    "engine": set(),
    "util": {"engine"},
    "present": {"engine", "util"},
    "protocol": {"engine"},
    "sdk": {"engine", "protocol"},
    "bots": {"engine", "util", "present", "protocol"},
    "game": BELOW_GAME | {"sdk"},
    "checking": BELOW_GAME | {"game"},
    "ratings": {"util"},
    # The league shows nothing: no presentation. Its displays are handed to it
    # (league/progress.py), its terminal tables are the CLI's, its files' text the report's.
    "league": BELOW_GAME - {"present"} | {"game", "checking", "ratings"},
    "report": {"engine", "util", "present", "bots", "game", "ratings", "league"},
    "server": BELOW_GAME | {"game", "checking", "ratings", "league", "report"},
    "cli": BELOW_GAME | {"sdk", "game", "checking", "ratings", "league", "report", "server"},
}
# The errors (referee/errors.py: the root and its branches) are the foundation: every room,
# the engine included, raises and catches them, and they import nothing.
ALLOWED = {room: below | {"errors"} if room != "errors" else below
           for room, below in ALLOWED.items()}

# Packages outside the referee that only some rooms may import: rich draws on a terminal, and
# only the CLI has one (the progress bar, the league and worker tables).
OUTSIDE_ONLY_IN: dict[str, set[str]] = {
    "rich": {"cli"},
}


def room_of(module: str) -> str | None:
    """The room of a dotted module name, or None if no room claims it."""
    if module == "referee":
        return PACKAGE_ROOM
    parts = module.split(".")
    for end in range(len(parts), 1, -1):
        room = ROOM_OF.get(".".join(parts[:end]))
        if room is not None:
            return room
    return None


def module_name(path: Path, root: Path) -> str:
    """`referee/league/store.py` -> `referee.league.store` (a package is its folder's name)."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports(path: Path, module: str) -> Iterator[tuple[int, str]]:
    """(line, imported module) for every import of `referee...` in the file, at any depth,
    relative imports resolved (`from x import y` counts as `x.y`: y may be a module)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*up, base] if base else up)
            for alias in node.names:
                yield node.lineno, f"{base}.{alias.name}"


def package_modules(root: Path) -> dict[str, Path]:
    """Every module of the package below `root` (generated protobuf code included)."""
    return {module_name(path, root): path for path in sorted((root / "referee").rglob("*.py"))}


def wrong_way_imports(root: Path, allowed: Mapping[str, set[str]] = ALLOWED) -> list[str]:
    """One line per import that crosses rooms against `allowed` (file:line, both modules and
    rooms), and per module that no room claims."""
    problems = []
    modules = package_modules(root)
    for module, path in modules.items():
        room = room_of(module)
        where = path.relative_to(root)
        if room is None:
            problems.append(f"{where}: {module} is in no room (add it to ROOM_OF)")
            continue
        for line, imported in imports(path, module):
            problem = import_problem(room, imported, modules, allowed)
            if problem:
                problems.append(f"{where}:{line}: {problem}")
    return problems


def import_problem(room: str, imported: str, modules: Mapping[str, Path],
                   allowed: Mapping[str, set[str]] = ALLOWED) -> str | None:
    """What is wrong with `room` importing `imported` (a dotted name), or None."""
    top = imported.partition(".")[0]
    if top != "referee":
        rooms = OUTSIDE_ONLY_IN.get(top)
        if rooms is not None and room not in rooms:
            return f"{room} imports {top} ({imported}), which only {', '.join(sorted(rooms))} may"
        return None
    target = room_of(nearest_module(imported, modules))
    if target is None:
        return f"imports {imported}, which is in no room"
    if target == room:
        return None
    if target not in allowed[room]:
        return f"{room} imports {target} ({imported})"
    return None


def nearest_module(name: str, modules: Mapping[str, Path]) -> str:
    """The module `name` is, or is in (`referee.engine.Game` is in `referee.engine`); `name`
    itself if no module holds it."""
    found = name
    while found and found not in modules:
        found = found.rpartition(".")[0]
    return found or name


def circles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """The strongly connected parts of more than one node (import circles), Tarjan's way."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            part = []
            while True:
                top = stack.pop()
                part.append(top)
                if top == node:
                    break
            if len(part) > 1:
                found.append(sorted(part))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def module_graph(root: Path, prefix: str) -> dict[str, set[str]]:
    """Which modules below `prefix` (the package itself included) import which others there."""
    modules = {m: p for m, p in package_modules(root).items()
               if m == prefix or m.startswith(prefix + ".")}
    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        targets = set()
        for _, imported in imports(path, module):
            name = nearest_module(imported, modules)
            if name in modules and name != module:
                targets.add(name)
        graph[module] = targets
    return graph


# Inside the server: the web process (the club) and the season runner meet in the shared
# module, which sits below both (docs/architecture.md). Part of the server -> the parts of the
# server it may import besides its own. The club's models are the database both processes use.
SERVER = "referee.server"
SERVER_PARTS: dict[str, str] = {
    f"{SERVER}.club.models": "models",
    f"{SERVER}.club": "club",
    f"{SERVER}.runner": "runner",
    f"{SERVER}.shared": "shared",
}
SERVER_ALLOWED: dict[str, set[str]] = {
    "models": set(),
    "shared": {"models"},
    "runner": {"models", "shared"},
    "club": {"models", "shared", "server"},
    "server": {"models", "shared", "club", "runner"},   # serve, settings, asgi, backup...
}


def server_part(module: str) -> str:
    """The part of the server a module of it is in: models, club, runner, shared, or server
    (the modules beside them: `referee serve`, Django's settings, the backup...)."""
    parts = module.split(".")
    for end in range(len(parts), 2, -1):
        part = SERVER_PARTS.get(".".join(parts[:end]))
        if part is not None:
            return part
    return "server"


def server_problems(root: Path) -> list[str]:
    """One line per import inside the server against SERVER_ALLOWED (the club importing the
    runner, the runner importing the club's pages...), and per import circle between the
    server's modules, each with the file and line of every import that closes it."""
    modules = package_modules(root)
    inside = {m: p for m, p in modules.items() if m == SERVER or m.startswith(SERVER + ".")}
    problems = []
    edges: dict[tuple[str, str], list[str]] = {}
    for module, path in inside.items():
        part = server_part(module)
        for line, imported in imports(path, module):
            target = nearest_module(imported, inside)
            if target not in inside or target == module:
                continue
            where = f"{path.relative_to(root)}:{line}"
            if where not in edges.setdefault((module, target), []):
                edges[(module, target)].append(where)
            other = server_part(target)
            problem = f"{where}: the server's {part} imports its {other} ({target})"
            if other != part and other not in SERVER_ALLOWED[part] and problem not in problems:
                problems.append(problem)
    graph: dict[str, set[str]] = {module: set() for module in inside}
    for source, target in edges:
        graph[source].add(target)
    for circle in circles(graph):
        places = [where for (source, target), wheres in sorted(edges.items())
                  if source in circle and target in circle for where in wheres]
        problems.append(f"{places[0]}: import circle {' <-> '.join(circle)} "
                        f"(imports: {', '.join(places)})")
    return problems


def test_the_club_and_the_runner_meet_only_in_the_shared_module() -> None:
    """The club imports nothing of the runner, the runner only the club's models (and the
    shared module), the shared module only the models; no import circle inside the server."""
    assert "referee.server.shared.clubfolder" in package_modules(ROOT)
    problems = server_problems(ROOT)
    assert not problems, "imports against docs/architecture.md:\n" + "\n".join(problems)


@pytest.mark.parametrize(("where", "line", "expected"), [
    ("referee/server/club/views/extra.py", "from referee.server.runner.settings import X",
     "the server's club imports its runner (referee.server.runner.settings)"),
    ("referee/server/club/extra.py", "from ..runner import clubdb",
     "the server's club imports its runner (referee.server.runner.clubdb)"),
    ("referee/server/runner/extra.py", "from referee.server.club.views import pages",
     "the server's runner imports its club (referee.server.club.views.pages)"),
    ("referee/server/shared/extra.py", "from referee.server.runner import clubdb",
     "the server's shared imports its runner (referee.server.runner.clubdb)"),
    ("referee/server/club/models.py", "from referee.server.shared import clubfolder",
     "the server's models imports its shared (referee.server.shared.clubfolder)"),
])
def test_a_wrong_way_import_inside_the_server_is_named(tmp_path: Path, where: str, line: str,
                                                      expected: str) -> None:
    """The check itself: a planted import the server's parts do not allow is named, with its
    place; the imports they allow are not."""
    for package in ("referee", "referee/server", "referee/server/club",
                    "referee/server/club/views", "referee/server/runner",
                    "referee/server/shared"):
        (tmp_path / package).mkdir(parents=True, exist_ok=True)
        (tmp_path / package / "__init__.py").write_text("")
    for module in ("club/models.py", "club/views/pages.py", "runner/clubdb.py",
                   "runner/settings.py", "shared/clubfolder.py"):
        (tmp_path / "referee/server" / module).write_text("")
    (tmp_path / "referee/server/runner/fine.py").write_text(
        "from referee.server.club.models import Bot\nfrom ..shared import clubfolder\n")
    (tmp_path / where).write_text(f"{line}\n")
    problems = server_problems(tmp_path)
    assert len(problems) == 1 and expected in problems[0], problems
    assert problems[0].startswith(f"{where}:1: "), problems


def test_an_import_circle_inside_the_server_is_named(tmp_path: Path) -> None:
    """Two views that import each other (one inside a function) are one circle, named with
    the file and line of both imports."""
    views = tmp_path / "referee/server/club/views"
    views.mkdir(parents=True)
    for package in ("referee", "referee/server", "referee/server/club",
                    "referee/server/club/views"):
        (tmp_path / package / "__init__.py").write_text("")
    (views / "pages.py").write_text("import os\nfrom referee.server.club.views import live\n")
    (views / "live.py").write_text("def own():\n    from .pages import helper\n")
    problems = server_problems(tmp_path)
    assert problems == [
        "referee/server/club/views/live.py:2: import circle referee.server.club.views.live <-> "
        "referee.server.club.views.pages (imports: referee/server/club/views/live.py:2, "
        "referee/server/club/views/pages.py:2)"], problems


def test_every_import_between_rooms_runs_the_allowed_way() -> None:
    problems = wrong_way_imports(ROOT)
    assert not problems, "imports against docs/architecture.md:\n" + "\n".join(problems)


def test_the_rooms_have_no_circle() -> None:
    assert set(ALLOWED) == set(ROOM_OF.values()) | {PACKAGE_ROOM}
    assert all(room not in below for room, below in ALLOWED.items())
    assert circles(ALLOWED) == []


def test_the_engine_modules_import_one_way() -> None:
    """The engine's modules form no circle (the game builds views, and games from views)."""
    graph = module_graph(ROOT, "referee.engine")
    assert "referee.engine.game" in graph
    assert circles(graph) == []


@pytest.mark.parametrize(("where", "line", "expected"), [
    ("referee/engine/extra.py", "from referee.league.store import LeagueStore",
     "engine imports league"),
    ("referee/ratings/extra.py", "import referee.league.runner", "ratings imports league"),
    ("referee/report/extra.py", "from referee.server import data_dir", "report imports server"),
    ("referee/league/extra.py", "from ..cli import main", "league imports cli"),
    ("referee/extra.py", "import os", "is in no room"),
    ("referee/league/extra.py", "from rich.table import Table", "league imports rich"),
    ("referee/league/extra.py", "import rich", "league imports rich"),
    ("referee/league/extra.py", "from referee.present.render import fit",
     "league imports present (referee.present.render.fit)"),
    ("referee/league/extra.py", "from referee.present import notes",
     "league imports present (referee.present.notes)"),
    ("referee/league/extra.py", "from referee.present.text import safe_line",
     "league imports present (referee.present.text.safe_line)"),
])
def test_a_wrong_way_import_is_named(tmp_path: Path, where: str, line: str,
                                     expected: str) -> None:
    """The check itself: a planted import against the table is reported with its place."""
    for package in ("referee", "referee/engine", "referee/ratings", "referee/report",
                    "referee/league", "referee/cli", "referee/server", "referee/present"):
        (tmp_path / package).mkdir(parents=True, exist_ok=True)
        (tmp_path / package / "__init__.py").write_text("")
    (tmp_path / where).write_text(f"{line}\n")
    problems = wrong_way_imports(tmp_path)
    assert len(problems) == 1 and expected in problems[0], problems
    assert problems[0].startswith(where)


def test_the_rooms_that_show_may_draw_and_keep_bot_text_safe() -> None:
    """What the rules let through: rich in the CLI, presentation where things are shown."""
    for room, line in (("cli", "from rich.table import Table"),
                       ("cli", "from referee.present.render import fit"),
                       ("report", "from referee.present.text import safe_line"),
                       ("server", "from referee.present import text")):
        imported = next(imports_of(line))
        assert import_problem(room, imported, {}) is None, (room, line)


def imports_of(line: str) -> Iterator[str]:
    """The modules one import line names (as `imports` reads them from a file)."""
    tree = ast.parse(line)
    for node in tree.body:
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            yield from (f"{node.module}.{alias.name}" for alias in node.names)


def test_circles_are_found() -> None:
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []
