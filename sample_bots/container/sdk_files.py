"""Copy the referee's Python SDK into a folder, with every module of the referee that it, or
the bot, imports.

Usage: python3 sdk_files.py REPO DEST [BOT_DIR]

The modules are found by reading the imports of `referee/sdk` and of the bot's own Python files
(`referee.engine.policies` for the greedy sample bot) and, in turn, of every module of the
referee that they name (at module level or inside functions), so the copy follows the SDK
wherever its imports move. Only the standard library is used, so any Python 3.11 on the host
runs it, with or without grpcio.
"""

from __future__ import annotations

import ast
import shutil
import sys
from pathlib import Path


def module_file(repo: Path, name: str) -> Path | None:
    """The file of the referee's module `name` (a package's __init__.py), if it exists."""
    base = repo.joinpath(*name.split("."))
    for candidate in (base / "__init__.py", base.with_suffix(".py")):
        if candidate.is_file():
            return candidate
    return None


def imported(path: Path, name: str) -> set[str]:
    """The referee's modules that the module `name` (in `path`) imports, anywhere in it."""
    found: set[str] = set()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:   # relative: from the module's package upwards
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1])
                module = f"{base}.{node.module}" if node.module else base
            else:
                module = node.module or ""
            found.add(module)
            # `from referee.protocol import pb`: pb may be a module of its own.
            found.update(f"{module}.{alias.name}" for alias in node.names)
    return {item for item in found if item == "referee" or item.startswith("referee.")}


def bot_imports(bot: Path) -> list[str]:
    """The referee's modules that the bot's own Python files import."""
    found: set[str] = set()
    for path in sorted(bot.rglob("*.py")):
        found |= imported(path, path.stem)
    return sorted(found)


def sdk_closure(repo: Path, roots: list[str] | None = None) -> list[Path]:
    """Every file of the referee that `referee.sdk` (and the modules `roots`) need: their
    modules, those they import, and each package's __init__.py on the way (importing a module
    runs them)."""
    todo = ["referee.sdk", *(roots or [])]
    seen: set[str] = set()
    files: set[Path] = set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        path = module_file(repo, name)
        if path is None:   # a name imported from a module, not a module
            continue
        files.add(path)
        parts = name.split(".")
        todo += [".".join(parts[:end]) for end in range(1, len(parts))]
        todo += sorted(imported(path, name))
        if path.name == "__init__.py" and name == "referee.sdk":   # the SDK's own modules
            todo += [f"{name}.{p.stem}" for p in path.parent.glob("*.py") if p.stem != "__init__"]
    return sorted(files)


def main(argv: list[str]) -> int:
    if len(argv) not in (2, 3):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    repo, dest = Path(argv[0]).resolve(), Path(argv[1])
    roots = bot_imports(Path(argv[2])) if len(argv) == 3 else []
    for path in sdk_closure(repo, roots):
        target = dest / path.relative_to(repo)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
