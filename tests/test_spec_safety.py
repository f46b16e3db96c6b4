"""Bad and hostile bot specs fail cleanly: one line naming the file and the key, a FAIL line in
`referee check`, no traceback, no temporary folder left; every path stays inside the submission.

The specs are test bots in tests/bots/ (bad_*.toml, dup_name_*.toml, escape_*.toml)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from referee.bots.process import BotProcess
from referee.bots.spec import BotSpecError, check_unique_names, load_spec

ROOT = Path(__file__).resolve().parents[1]
BOTS = ROOT / "tests" / "bots"

# spec -> what its one-line error must say (besides the file's name)
BAD = {
    "bad_nul": "key 'command[1]': a string with a NUL character",
    "bad_env_key": "key 'env.LD_PRELOAD=/tmp/evil.so X': expected a variable name",
    "bad_binary": "not a text file (invalid UTF-8 at byte 0)",
    "bad_deep": "nested too deeply (at line 4)",
    "escape_workdir": "key 'workdir': expected a folder inside the spec's folder",
    "escape_program": "key 'command': expected a program inside the bot's folder",
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_a_bad_spec_is_refused_with_one_line_naming_file_and_key(name: str) -> None:
    with pytest.raises(BotSpecError) as info:
        load_spec(BOTS / f"{name}.toml")
    message = str(info.value)
    assert message.startswith(f"{BOTS / name}.toml: "), message
    assert BAD[name] in message, message
    assert "\n" not in message and "\x00" not in message


def _private_tmp(tmp_path: Path) -> dict[str, str]:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    return {**os.environ, "TMPDIR": str(tmp)}


@pytest.mark.parametrize("name", sorted(BAD))
def test_referee_check_prints_a_fail_line_and_leaves_no_temporary_folder(
        name: str, tmp_path: Path) -> None:
    env = _private_tmp(tmp_path)
    done = subprocess.run([sys.executable, "-m", "referee.cli", "check",
                           str(BOTS / f"{name}.toml")], env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 1, done.stdout + done.stderr
    fails = [line for line in done.stdout.splitlines() if line.startswith("FAIL")]
    assert len(fails) == 1 and fails[0].split()[1] == "spec", done.stdout
    assert BAD[name] in fails[0]
    assert "Traceback" not in done.stdout + done.stderr
    assert list(Path(env["TMPDIR"]).iterdir()) == []


def test_two_specs_with_one_name_name_both_files(tmp_path: Path) -> None:
    a, b = load_spec(BOTS / "dup_name_a.toml"), load_spec(BOTS / "dup_name_b.toml")
    with pytest.raises(BotSpecError) as info:
        check_unique_names([a, b])
    assert str(BOTS / "dup_name_a.toml") in str(info.value)
    assert str(BOTS / "dup_name_b.toml") in str(info.value)
    assert "key 'name'" in str(info.value)
    env = _private_tmp(tmp_path)
    league = tmp_path / "league.toml"
    league.write_text(f'bots = ["{BOTS / "dup_name_a.toml"}", "{BOTS / "dup_name_b.toml"}", '
                      f'"{BOTS / "honest.toml"}"]\ngames = 1\nout = "{tmp_path / "out"}"\n')
    done = subprocess.run([sys.executable, "-m", "referee.cli", "league", str(league), "-q"],
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "dup_name_a.toml" in lines[0] and "dup_name_b.toml" in lines[0]
    assert list(Path(env["TMPDIR"]).iterdir()) == []
    check = subprocess.run([sys.executable, "-m", "referee.cli", "check",
                            str(BOTS / "dup_name_a.toml"), "--opponent",
                            str(BOTS / "dup_name_b.toml"), "--no-probes", "--games", "1",
                            "--preset", "classic"], env=env, capture_output=True, text=True,
                           timeout=120)
    assert check.returncode == 1
    fails = [line for line in check.stdout.splitlines() if line.startswith("FAIL")]
    assert len(fails) == 1 and "dup_name_b.toml" in fails[0] and "dup_name_a.toml" in fails[0]


def _spec(folder: Path, text: str) -> Path:
    path = folder / "bot.toml"
    path.write_text('name = "bot"\n' + text)
    return path


def test_paths_resolve_against_the_spec_folder_not_the_referees(tmp_path: Path,
                                                                  monkeypatch) -> None:
    bot = tmp_path / "submission"
    (bot / "target").mkdir(parents=True)
    program = bot / "target" / "mybot"
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    elsewhere = tmp_path / "organiser"
    (elsewhere / "target").mkdir(parents=True)
    monkeypatch.chdir(elsewhere)   # a `target/mybot` here must not be what runs
    spec = load_spec(_spec(bot, 'command = ["target/mybot"]\n'))
    assert spec.command == (str(program),)
    assert spec.workdir == bot


@pytest.mark.parametrize("text, key", [
    ('command = ["../outside/bot"]\n', "command"),
    ('command = ["{python}", "main.py"]\nworkdir = ".."\n', "workdir"),
    ('command = ["{python}", "main.py"]\nworkdir = "/etc"\n', "workdir"),
    ('command = ["{python}", "main.py"]\nbuild = ["tools/../../x"]\n', "build"),
    ('command = ["{python}", "main.py"]\nworkdir = "link"\n', "workdir"),
    ('command = ["bin/run"]\n', "command"),
    ('image_archive = "link/../../etc/hostname"\n', "image_archive"),
    ('image_archive = "/etc/hostname"\n', "image_archive"),
])
def test_a_path_that_leads_outside_is_refused(tmp_path: Path, text: str, key: str) -> None:
    bot = tmp_path / "submission"
    (bot / "bin").mkdir(parents=True)
    (bot / "link").symlink_to(tmp_path)
    (bot / "bin" / "run").symlink_to("/usr/bin/env")
    with pytest.raises(BotSpecError) as info:
        load_spec(_spec(bot, text))
    assert f"key '{key}'" in str(info.value) and str(bot / "bot.toml") in str(info.value)


def test_nested_tables_and_nul_in_keys_are_refused(tmp_path: Path) -> None:
    with pytest.raises(BotSpecError, match=r"key 'env\.A\.B\.C': nested more than 3"):
        load_spec(_spec(tmp_path, 'command = ["x"]\n[env.A.B.C]\nD = "1"\n'))
    with pytest.raises(BotSpecError, match=r"key 'env\.A\\x00B': a key name with a NUL"):
        load_spec(_spec(tmp_path, 'command = ["x"]\n[env]\n"A\\u0000B" = "1"\n'))


@pytest.mark.sandbox
def test_the_sandbox_binds_the_bots_folder_and_not_the_referees(tmp_path: Path,
                                                                 monkeypatch) -> None:
    """A relative program was resolved against the referee's folder, which was then shown to
    the bot: the sandbox's binds hold the bot's folder and nothing of the referee's cwd."""
    bot = tmp_path / "submission"
    (bot / "target").mkdir(parents=True)
    (bot / "target" / "mybot").write_text("#!/bin/sh\n")
    (bot / "target" / "mybot").chmod(0o755)
    organiser = tmp_path / "organiser" / "private"
    organiser.mkdir(parents=True)
    monkeypatch.chdir(organiser)
    process = BotProcess(load_spec(_spec(bot, 'command = ["target/mybot"]\n')), sandbox=True)
    argv = process._sandboxed(process._prepare())
    process._remove_dir()
    bound = {argv[i + 1] for i, part in enumerate(argv) if part in ("--bind", "--ro-bind")}
    assert str(bot) in bound
    assert not any(Path(p) in (organiser, organiser.parent, tmp_path) or
                   organiser.is_relative_to(p) and p != "/" for p in bound), bound
