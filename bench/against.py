"""`--against REV` for the benches: a baseline commit measured in the same run as this tree.

`baseline_tree(REV)` checks REV out in a detached `git worktree` in a temp folder (removed, and
git's note of it, when the run ends). A `Tree` says how to run a bench side against a
checkout: this very bench file, by the current interpreter, with that checkout first on
PYTHONPATH and BENCH_REPO set to it (bench/protocol.py puts BENCH_REPO first on sys.path), so
the checkout's `referee` package and SDK bots are the ones measured while the measuring code is
the same on both sides. `imports` lets the bench files import names that moved between
releases (referee.match became referee.game.match).
"""

from __future__ import annotations

import contextlib
import importlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any


class AgainstError(Exception):
    """The baseline cannot be checked out (not a git checkout, an unknown revision)."""


@dataclass(frozen=True)
class Tree:
    """A checkout a bench side runs against: its root, the interpreter and the environment."""

    label: str          # "working tree", or the revision asked for
    root: Path
    python: str
    env: dict[str, str]


def working_tree(root: Path) -> Tree:
    """This checkout, run by the current interpreter with it first on PYTHONPATH."""
    return Tree("working tree", root, sys.executable, tree_env(root))


def tree_env(root: Path) -> dict[str, str]:
    """The environment of a bench side for the checkout at `root`: it first on PYTHONPATH (so
    that neither an editable install elsewhere nor the other side's tree is imported) and in
    BENCH_REPO."""
    return {**os.environ, "BENCH_REPO": str(root), "PYTHONPATH": str(root)}


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                          check=False)
    if done.returncode != 0:
        message = (done.stderr.strip().splitlines() or ["git failed"])[-1]
        raise AgainstError(f"git {args[0]}: {message}")
    return done.stdout.strip()


def resolve_revision(repo: Path, revision: str) -> str:
    """The full commit id of `revision` in the repository at `repo`; AgainstError if none."""
    if not revision or revision.startswith("-"):
        raise AgainstError(f"--against {revision!r}: not a revision")
    try:
        return _git(repo, "rev-parse", "--verify", "--quiet", f"{revision}^{{commit}}")
    except AgainstError:
        raise AgainstError(f"--against {revision}: no such commit in {repo}") from None


@contextlib.contextmanager
def baseline_tree(repo: Path, revision: str) -> Iterator[Tree]:
    """`revision` checked out in a detached worktree of `repo` in a temp folder, as a Tree;
    the worktree (its folder and git's note of it) is removed when the block ends."""
    commit = resolve_revision(repo, revision)
    parent = Path(tempfile.mkdtemp(prefix="bench-against-"))
    os.chmod(parent, 0o755)   # sandboxed bots (other uids) read the baseline's package
    root = parent / commit[:12]
    try:
        _git(repo, "worktree", "add", "--detach", "--quiet", str(root), commit)
        label = commit[:7] if commit.startswith(revision) else f"{revision} ({commit[:7]})"
        yield Tree(label, root, sys.executable, tree_env(root))
    finally:
        with contextlib.suppress(AgainstError):
            _git(repo, "worktree", "remove", "--force", str(root))
        shutil.rmtree(parent, ignore_errors=True)


def imports(name: str, *modules: str) -> Any:
    """`name` from the first of `modules` that has it (a name that moved between releases)."""
    for module in modules:
        with contextlib.suppress(ImportError, AttributeError):
            return getattr(importlib.import_module(module), name)
    raise ImportError(f"{name} is in none of {', '.join(modules)}")
