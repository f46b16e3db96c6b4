"""Nothing ends in an internal error, a silent wait or an empty folder,
through the real command line: a missing optional extra names the extra to install, a build
says that it is building and a failed build shows its own error output, and a command that
fails leaves no folder it created behind."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from cli_support import referee
from test_league import ROOT, bot_spec

SAMPLES = ROOT / "sample_bots"

# `distributed` as a plain `pip install referee` leaves it: not importable.
WITHOUT_DISTRIBUTED = ("import sys; sys.modules['distributed'] = None\n"
                       "from referee.cli import main; main()")


def without_distributed(*args: str | Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "REFEREE_RUN_ID": uuid.uuid4().hex[:12]}
    return subprocess.run([sys.executable, "-c", WITHOUT_DISTRIBUTED, *map(str, args)],
                          capture_output=True, text=True, timeout=240, env=env)


def test_cluster_without_its_extra_names_the_extra_and_leaves_no_folder(tmp_path: Path) -> None:
    out = tmp_path / "new" / "league"
    bots = [bot_spec(tmp_path, "honest-a"), bot_spec(tmp_path, "honest-b")]
    done = without_distributed("league", *bots, "--cluster", "local:2", "--games", "2",
                               "--out", out)
    assert done.returncode != 0
    assert "internal error" not in done.stderr and "Traceback" not in done.stderr
    assert "--cluster needs the cluster extra: pip install -e '.[cluster]' in the referee's " \
        "clone" in done.stderr
    assert not (tmp_path / "new").exists()
    league_file = tmp_path / "season.toml"
    league_file.write_text('bots = ["honest-*.toml"]\ngames = 2\ncluster = "local:2"\n'
                           f'out = "{out}"\n')
    done = without_distributed("league", league_file)
    assert "key 'cluster' needs the cluster extra: pip install -e '.[cluster]' in the referee's " \
        "clone" in \
        done.stderr, done.stderr
    assert not (tmp_path / "new").exists()


@pytest.mark.parametrize("command", [
    ["league", "{bots}", "--out", "{out}/league"],
    ["gauntlet", "{bot}", "--baseline", "{missing}", "--field", "{bot}", "--out",
     "{out}/gauntlet"],
    ["export", "{empty}", "--out", "{out}/export"],
    ["export", "{empty}", "--out", "{out}/sel.json"],
    ["report", "{empty}", "--out", "{out}/report"],
    ["match", "{bot}", "{missing}", "--replay", "{out}/game.json", "--html", "{out}/game.html"],
])
def test_a_failed_command_leaves_no_folder(tmp_path: Path, command: list[str]) -> None:
    bot = bot_spec(tmp_path, "honest-a")
    empty = tmp_path / "not-a-league"
    empty.mkdir()
    names = {"bot": str(bot), "missing": str(tmp_path / "missing.toml"), "empty": str(empty),
             "out": str(tmp_path / "a" / "b")}
    args = []
    for part in command:
        if part == "{bots}":
            args += [str(bot), names["missing"]]
        else:
            args.append(part.format(**names))
    done = referee(*args, check=False)
    assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr
    assert not (tmp_path / "a").exists(), sorted(map(str, (tmp_path / "a").rglob("*")))
    assert list(empty.iterdir()) == []


BROKEN_BUILD = """\
import sys
print("compiling main.c")
print("main.c:3: error: expected ';' before 'return'", file=sys.stderr)
print("make: *** [main] Error 1", file=sys.stderr)
print("A complete log of this run can be found in: /tmp/.npm/_logs/debug-0.log",
      file=sys.stderr)
sys.exit(2)
"""


@pytest.mark.sandbox
def test_a_build_says_it_is_building_and_a_failed_one_shows_its_errors(tmp_path: Path) -> None:
    folder = tmp_path / "bot"
    folder.mkdir()
    (folder / "build.py").write_text(BROKEN_BUILD)
    spec = folder / "bot.toml"
    spec.write_text('name = "unbuildable"\ncommand = ["{python}", "main.py"]\n'
                    'build = ["{python}", "build.py"]\n')
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    honest = bot_spec(tmp_path, "honest-a")
    for command in (["check", spec, "--no-probes"],
                    ["league", spec, honest, "--out", tmp_path / "l"],
                    # a new gauntlet that cannot start its bots leaves no gauntlet to --resume
                    ["gauntlet", spec, "--baseline", honest, "--field", honest, "--out",
                     tmp_path / "g" / "gauntlet"]):
        done = referee(*command, merged=True, timeout=240, env=env, check=False)
        assert done.returncode != 0
        output = done.stdout
        building = output.index("building unbuildable: {python} build.py")
        # `check` shows the build tool's lines as lines under its FAIL line; one line of
        # a league's or gauntlet's error joins them.
        joiner = "\n        " if command[0] == "check" else " | "
        error = output.index(f"main.c:3: error: expected ';' before 'return'{joiner}"
                             f"make: *** [main] Error 1")
        assert building < error, output
        # A compile error is no network failure: no hint to turn the network on.
        assert "build_network" not in output, output
        assert "/tmp/.npm" not in output and "the build's private /tmp, removed" in output
        assert not (tmp_path / "l").exists() and not (tmp_path / "g").exists()


@pytest.mark.sandbox
def test_check_shows_the_build_output_line_by_line_as_it_runs(tmp_path: Path) -> None:
    # What the club server's check queue runs: the owner reads the build as it goes, its own
    # error lines included, before the build's FAIL line; the build's text is escaped.
    folder = tmp_path / "bot"
    folder.mkdir()
    (folder / "build.py").write_text(
        "import sys\nprint('compiling step 1', flush=True)\n"
        "print('odd \\x1b[31mred\\x1b[0m text', flush=True)\n" + BROKEN_BUILD)
    spec = folder / "bot.toml"
    spec.write_text('name = "unbuildable"\ncommand = ["{python}", "main.py"]\n'
                    'build = ["{python}", "build.py"]\n')
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    done = referee("check", "--build-output", spec, "--no-probes", merged=True, timeout=240,
                   env=env, check=False)
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    # Each of the build's two streams is printed in its own order, all before the FAIL line
    # (the build's stdout and stderr are two pipes: how their lines interleave is not kept).
    first = lines.index("build| compiling step 1")
    odd = lines.index("build| odd \\x1b[31mred\\x1b[0m text")
    error = lines.index("build| main.c:3: error: expected ';' before 'return'")
    make = lines.index("build| make: *** [main] Error 1")
    failed = next(i for i, line in enumerate(lines) if "FAIL" in line and "build" in line)
    assert first < odd < failed and error < make < failed, done.stdout
    assert "\x1b" not in done.stdout and "build| odd \\x1b[31mred" in done.stdout
    # Without the flag the build's lines are not printed, only the tail in the FAIL line.
    quiet = referee("check", spec, "--no-probes", merged=True, timeout=240, env=env,
                    check=False)
    assert "build| " not in quiet.stdout and "main.c:3: error" in quiet.stdout


def test_serve_without_its_extra_names_the_install_that_works(tmp_path: Path) -> None:
    """docs/server.md's install line is the one this names: the referee is installed from its
    clone, where `pip install 'referee[server]'` found no package."""
    done = subprocess.run([sys.executable, "-c", "import sys; sys.modules['django'] = None\n"
                           "from referee.cli import main; main()", "serve", "--data",
                           str(tmp_path / "data")], capture_output=True, text=True, timeout=240)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    line = "referee serve needs the server extra: pip install -e '.[server]' in the referee's clone"
    assert line in done.stderr and done.stderr.count("\n") == 1, done.stderr
    assert "pip install -e '.[server]'" in (ROOT / "docs" / "server.md").read_text()
