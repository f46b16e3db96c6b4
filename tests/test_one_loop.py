"""One loop plays a schedule (docs/architecture.md): a game's result is written in one place,
`referee.league.playing.record_result`, and games are handed to an executor from one place,
`play_schedule`. Read from the source (ast), every call in the package."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULT_HANDLER = ("referee/league/playing.py", "record_result")
THE_LOOP = ("referee/league/playing.py", "play_schedule")


def calls(root: Path, method: str, receiver: str) -> list[tuple[str, str]]:
    """(file, innermost enclosing function) of every call `<...receiver>.<method>(...)` under
    root/referee, e.g. store.save(...) and season.store.save(...) for ("save", "store")."""
    found = []
    for path in sorted((root / "referee").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        found += [(path.relative_to(root).as_posix(), where)
                  for where, node in _calls_in(tree, "<module>")
                  if isinstance(node.func, ast.Attribute) and node.func.attr == method
                  and ast.unparse(node.func.value).split(".")[-1].endswith(receiver)]
    return sorted(found)


def _calls_in(node: ast.AST, where: str) -> list[tuple[str, ast.Call]]:
    """Every call under `node`, with the name of the function it is written in."""
    found = []
    for child in ast.iter_child_nodes(node):
        inner = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) \
            else where
        if isinstance(child, ast.Call):
            found.append((where, child))
        found += _calls_in(child, inner)
    return found


def test_a_games_result_is_stored_in_one_place() -> None:
    assert calls(ROOT, "save", "store") == [RESULT_HANDLER]


def test_only_the_one_loop_hands_games_to_an_executor() -> None:
    assert calls(ROOT, "play", "executor") == [THE_LOOP]


def plays(root: Path, under: str) -> list[tuple[str, str]]:
    """(file, function) of every call under root/`under` of a function that plays a game
    without the loop (play_one, play_seeded, play_match, play_on_roster), by name or attribute."""
    found = []
    for path in sorted((root / under).rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        found += [(path.relative_to(root).as_posix(), where)
                  for where, node in _calls_in(tree, "<module>")
                  if ast.unparse(node.func).split(".")[-1] in GAME_PLAYERS]
    return sorted(found)


GAME_PLAYERS = {"play_one", "play_seeded", "play_match", "play_on_roster"}


def test_the_club_plays_its_games_and_test_games_through_the_one_loop() -> None:
    """The season runner and the test games hand their games to `play_schedule`; the server
    plays none by itself but in the task a cluster's worker runs for a test game, which the
    loop's executor (remote.TaskExecutor) submits, and a person's game on the play page: one
    game with a human seat, played as `referee play` plays it (referee.game.human), which no
    league store takes (HumanGameRefused)."""
    assert plays(ROOT, "referee/server") == [
        ("referee/server/runner/humangames.py", "play_human_game"),
        ("referee/server/runner/jobs.py", "run_test_game_job")]


def test_a_second_place_that_stores_a_result_is_found(tmp_path: Path) -> None:
    """The check itself: a caller that stores a result on its own is named."""
    (tmp_path / "referee" / "league").mkdir(parents=True)
    (tmp_path / "referee" / "league" / "playing.py").write_text(
        "def record_result(store, game, result):\n    store.save(game, result)\n")
    (tmp_path / "referee" / "league" / "other.py").write_text(
        "async def _play(season, executor, games):\n"
        "    def save(game, result):\n        season.store.save(game, result)\n"
        "    await executor.play(games, None, None, str, save)\n")
    assert calls(tmp_path, "save", "store") == [("referee/league/other.py", "save"),
                                                RESULT_HANDLER]
    assert calls(tmp_path, "play", "executor") == [("referee/league/other.py", "_play")]
