"""`--against REV` of bench/league.py and bench/protocol.py: the options, the one-line errors,
and the baseline's worktree (a real `git worktree` of this repository), there while the
bench runs and gone afterwards. The figures themselves are the benches' (bench/README.md)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import against  # noqa: E402
import league  # noqa: E402
import protocol  # noqa: E402


def worktrees() -> str:
    return subprocess.run(["git", "-C", str(ROOT), "worktree", "list", "--porcelain"],
                          capture_output=True, text=True, check=True).stdout


def test_the_baseline_is_a_worktree_of_the_revision_while_the_block_runs(tmp_path: Path) -> None:
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True,
                          text=True, check=True).stdout.strip()
    with against.baseline_tree(ROOT, "HEAD") as tree:
        assert tree.label == f"HEAD ({head[:7]})"
        assert str(tree.root) in worktrees()
        checked_out = subprocess.run(["git", "-C", str(tree.root), "rev-parse", "HEAD"],
                                     capture_output=True, text=True, check=True).stdout.strip()
        assert checked_out == head
        assert (tree.root / "referee" / "__init__.py").is_file()
        # Its side imports its own referee: the tree first on PYTHONPATH and in BENCH_REPO.
        assert tree.env["PYTHONPATH"] == str(tree.root) == tree.env["BENCH_REPO"]
        imported = subprocess.run([tree.python, "-c", "import referee; print(referee.__file__)"],
                                  env=tree.env, capture_output=True, text=True, check=True,
                                  cwd=tmp_path).stdout.strip()
        assert Path(imported).is_relative_to(tree.root)
    assert not tree.root.exists() and not tree.root.parent.exists()
    assert str(tree.root) not in worktrees()


@pytest.mark.parametrize("bench", ["league.py", "protocol.py"])
def test_an_unknown_revision_is_one_line_and_leaves_no_worktree(bench: str) -> None:
    before = worktrees()
    done = subprocess.run([sys.executable, str(ROOT / "bench" / bench), "--against",
                           "no-such-revision"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        f"error: --against no-such-revision: no such commit in {ROOT}"]
    assert worktrees() == before


@pytest.mark.parametrize("parse", [league.parse_args, protocol.parse_args])
def test_against_and_baseline_are_one_or_the_other(parse: object, capsys: pytest.CaptureFixture
                                                   [str]) -> None:
    with pytest.raises(SystemExit) as exited:
        parse(["--against", "HEAD", "--baseline", "/tmp"])   # type: ignore[operator]
    assert exited.value.code == 2
    assert "--against and --baseline: one baseline at a time" in capsys.readouterr().err


def test_the_options_are_kept() -> None:
    args = league.parse_args(["--against", "9af52b9", "--scale-bots", "4,200"])
    assert args.against == "9af52b9" and args.scale_bots == [4, 200]
    assert league.parse_args([]).scale_bots == [4, 10, 20, 40, 200]
    assert protocol.parse_args(["--against", "9af52b9"]).against == "9af52b9"


def test_a_name_that_moved_is_found_where_it_is() -> None:
    from referee.game.match import play_match
    assert against.imports("play_match", "referee.no_such_module", "referee.game.match") \
        is play_match
    with pytest.raises(ImportError):
        against.imports("play_match", "referee.no_such_module")
