"""The C++ sample bot (sample_bots/cpp, docs/bots/cpp.md): it builds with its Makefile, passes
`referee check` and plays in a league.

Needs g++, make, pkg-config, libgrpc++-dev, libprotobuf-dev, protobuf-compiler and
protobuf-compiler-grpc (`.ci/run` installs them). Without them the tests are skipped with the
reason, unless REFEREE_REQUIRE_CPP=1 (as `.ci/run` sets), where that is a failure.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from cli_support import referee

from referee.league.folder import LeagueFolder

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "sample_bots" / "cpp" / "greedy-cpp.toml"
SAMPLES = ROOT / "sample_bots"


def _missing_toolchain() -> str | None:
    for tool in ("g++", "make", "pkg-config", "protoc", "grpc_cpp_plugin"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed"
    done = subprocess.run(["pkg-config", "--exists", "grpc++", "protobuf"], check=False)
    return "pkg-config finds no grpc++/protobuf (libgrpc++-dev)" if done.returncode else None


def _require_toolchain() -> None:
    missing = _missing_toolchain()
    if missing is None:
        return
    if os.environ.get("REFEREE_REQUIRE_CPP") == "1":
        pytest.fail(f"the C++ toolchain is required here: {missing}")
    pytest.skip(f"no C++ toolchain: {missing}")


def test_cpp_bot_passes_referee_check() -> None:
    _require_toolchain()
    # builds first (cached by a hash of its files)
    done = referee("check", SPEC, "--json", timeout=900, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["ok"] is True
    assert report["hello"]["bot_name"] == "greedy-cpp"
    statuses = {check["name"]: check["status"] for check in report["checks"]}
    assert statuses["build"] == "PASS" and statuses["shutdown"] == "PASS"
    # Every rule option the proto can send: big dice, white and grey neutral dice, the slot.
    for game in ("game biggy-slot 6p seat 5", "game classic-white 5p seat 4",
                 "game classic-neutral-discard 4p seat 3", "game boulevard 8p seat 7"):
        assert statuses[game] == "PASS"
    assert any(name.startswith("probe: ") for name in statuses)
    assert not (ROOT / "target").exists()   # the build wrote only inside the bot's folder


def test_cpp_bot_plays_a_league_and_its_notes_are_kept(tmp_path: Path) -> None:
    _require_toolchain()
    out = tmp_path / "league"
    done = referee("league", SAMPLES / "random.toml", SAMPLES / "greedy.toml", SPEC,
                   "--games", "6", "--players", "3", "--rules", "boulevard", "--seed", "3",
                   "--out", out, "--quiet")
    assert done.returncode == 0, done.stdout + done.stderr
    table = json.loads(LeagueFolder(out).table_json.read_text())["table"]
    rows = {row["bot"]: row for row in table}
    cpp = rows["greedy-cpp"]
    assert cpp["games"] == 6 and cpp["forfeits"] == 0
    assert sum(cpp["strikes"].values()) == 0
    assert cpp["avg_place"] < rows["random"]["avg_place"]
    # It sends the gain of its move as a named number: recorded, shown, averaged in the table.
    assert set(cpp["note_values"]) == {"gain"} and rows["random"]["note_values"] == {}
    shown = referee("show", out, "0")
    assert shown.returncode == 0 and "values: gain=" in shown.stdout
