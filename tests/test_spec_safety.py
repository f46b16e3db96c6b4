"""Bad and hostile bot specs fail cleanly: one line naming the file and the key, a FAIL line in
`referee check`, no traceback, no temporary folder left; every path stays inside the submission.

The specs are test bots in tests/bots/ (bad_*.toml, dup_name_*.toml, escape_*.toml)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_support import referee
from league_support import install_test_bot

from referee.bots.lineup import HOW
from referee.bots.process import BotProcess
from referee.bots.spec import BotSpecError, check_unique_names, load_spec
from referee.league.folder import LeagueFolder
from referee.server.shared.clubfolder import ClubFolder

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
    tmp.mkdir(exist_ok=True)
    return {**os.environ, "TMPDIR": str(tmp)}


@pytest.mark.parametrize("name", sorted(BAD))
@pytest.mark.slow
def test_referee_check_prints_a_fail_line_and_leaves_no_temporary_folder(
        name: str, tmp_path: Path) -> None:
    env = _private_tmp(tmp_path)
    done = referee("check", BOTS / f"{name}.toml", env=env, timeout=120, check=False)
    assert done.returncode == 1, done.stdout + done.stderr
    fails = [line for line in done.stdout.splitlines() if line.startswith("FAIL")]
    assert len(fails) == 1 and fails[0].split()[1] == "spec", done.stdout
    assert BAD[name] in fails[0]
    assert "Traceback" not in done.stdout + done.stderr
    assert list(Path(env["TMPDIR"]).iterdir()) == []


@pytest.mark.slow
def test_two_specs_with_one_name_name_both_files(tmp_path: Path) -> None:
    a, b = load_spec(BOTS / "dup_name_a.toml"), load_spec(BOTS / "dup_name_b.toml")
    with pytest.raises(BotSpecError) as info:
        check_unique_names([a, b])
    assert str(BOTS / "dup_name_a.toml") in str(info.value)
    assert str(BOTS / "dup_name_b.toml") in str(info.value)
    assert "key 'name'" in str(info.value)
    env = _private_tmp(tmp_path)
    league = _dup_league(tmp_path)
    done = referee("league", league, "-q", env=env, timeout=120, check=False)
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "dup_name_a.toml" in lines[0] and "dup_name_b.toml" in lines[0]
    assert list(Path(env["TMPDIR"]).iterdir()) == []
    check = referee("check", BOTS / "dup_name_a.toml", "--opponent", BOTS / "dup_name_b.toml",
                    "--no-probes", "--games", "1", "--preset", "classic", env=env, timeout=120,
                    check=False)
    assert check.returncode == 1
    fails = [line for line in check.stdout.splitlines() if line.startswith("FAIL")]
    assert len(fails) == 1 and "dup_name_b.toml" in fails[0] and "dup_name_a.toml" in fails[0]


def _dup_league(base: Path, extra: str = "") -> Path:
    """A league file and its bots, each in a folder of its own: dup_name_a and dup_name_b (the
    honest test bot, both named 'dup_name') and honest."""
    specs = [install_test_bot(base / "bots", name, "honest")
             for name in ("dup_name_a", "dup_name_b", "honest")]
    for spec in specs[:2]:
        spec.write_text(spec.read_text().replace(f'name = "{spec.stem}"', 'name = "dup_name"'))
    league = base / "league.toml"
    league.write_text(f'bots = ["bots/*.toml"]\ngames = 2\nplayers = 2\nout = "out"\n{extra}')
    return league


@pytest.mark.parametrize("how", ["--skip-broken", "skip_broken = true"])
@pytest.mark.slow
def test_skip_broken_leaves_out_the_second_spec_of_a_name_and_plays(how: str,
                                                                     tmp_path: Path) -> None:
    """Issue 22, item 5: with --skip-broken (or skip_broken = true in the league file) two
    specs that give one name stopped the league, although they are left out like any broken
    spec: the second is left out with one line naming both files, and the league plays."""
    league = _dup_league(tmp_path, how + "\n" if how.startswith("skip_") else "")
    flags = [how] if how.startswith("--") else []
    done = referee("league", league, "-q", *flags, env=_private_tmp(tmp_path), timeout=600,
                   check=False)
    assert done.returncode == 0, done.stderr
    bots = tmp_path / "bots"
    assert done.stderr.splitlines() == [
        f"skipped bot 'dup_name': {bots / 'dup_name_b.toml'}: key 'name': 'dup_name' is "
        f"already the name of the bot in {bots / 'dup_name_a.toml'}"], done.stderr
    assert "2/2 games recorded, finished" in done.stdout
    table = json.loads(LeagueFolder(tmp_path / "out").table_json.read_text())["table"]
    assert sorted(row["bot"] for row in table) == ["dup_name", "honest"]


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


@pytest.mark.parametrize("key", ["command", "build"])
@pytest.mark.parametrize("program", [
    "{earlier}/evil/bin/sh",             # through a link an earlier version left
    "{earlier}/evil/usr/bin/env",        # looks like the runtime once past the link
    "{bot}/../../1/bot/evil/bin/sh",     # `..` out of the bot's own folder
    "{bot}/evil/usr/bin/env",            # its own folder lexically, / by resolution
    "/usr/../etc/passwd",                # the runtime lexically only at first sight
    "/etc/passwd",                       # neither the bot's folder nor the runtime
    "{earlier}/mine/main.py",            # its own folder by resolution, not as written
])
def test_a_program_outside_the_bots_folder_and_the_runtime_is_refused(
        tmp_path: Path, key: str, program: str) -> None:
    """A spec's program, given by an absolute path, must lie in the bot's folder or in the
    system's runtime both as written and with links resolved: one line names file and key."""
    club = ClubFolder(tmp_path)
    earlier, bot = (club.version_upload("alice", 1) / "bot",
                    club.version_upload("alice", 2) / "bot")
    earlier.mkdir(parents=True)
    bot.mkdir(parents=True)
    (earlier / "evil").symlink_to("/")
    (bot / "evil").symlink_to("/")
    (earlier / "mine").symlink_to(bot)
    (bot / "main.py").write_text("")
    named = program.format(earlier=earlier, bot=bot)
    text = (f'command = ["{named}"]\n' if key == "command" else
            f'command = ["{{python}}", "main.py"]\nbuild = ["{named}"]\n')
    with pytest.raises(BotSpecError) as info:
        load_spec(_spec(bot, text))
    message = str(info.value)
    assert message.startswith(f"{bot / 'bot.toml'}: key '{key}': expected a program inside "
                              f"the bot's folder"), message
    assert "\n" not in message


@pytest.mark.parametrize("program", ["{python}", "node", "/bin/sh", "/usr/bin/env",
                                     "./run.sh", "{bot}/run.sh", "{python_path}"])
def test_a_program_in_the_bots_folder_or_the_runtime_is_accepted(tmp_path: Path,
                                                                 program: str) -> None:
    (tmp_path / "run.sh").write_text("#!/bin/sh\n")
    named = program.format(bot=tmp_path, python_path=sys.executable, python="{python}")
    spec = load_spec(_spec(tmp_path, f'command = ["{named}"]\nbuild = ["{named}"]\n'))
    assert spec.command[0] in (named, str(tmp_path / "run.sh"))


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


def _submissions(base: Path, league_extra: str = "") -> Path:
    """bots/alice and bots/bob (honest test bots, each in its own folder), and two specs beside
    them that reach into other folders: intruder (tests/bots/intruder.toml: workdir "alice")
    and nester (workdir ".", the shared bots/ folder that holds every bot)."""
    bots = base / "bots"
    for name in ("alice", "bob"):
        install_test_bot(bots, name, "honest")
    (bots / "intruder.toml").write_text((BOTS / "intruder.toml").read_text().replace(
        'workdir = "honest"', 'workdir = "alice"').replace('"main.py"', '"honest/main.py"'))
    (bots / "nester.toml").write_text('name = "nester"\n'
                                      'command = ["{python}", "alice/honest/main.py"]\n')
    league = base / "league.toml"
    league.write_text(f'bots = ["bots/*.toml"]\ngames = 2\nplayers = 2\nout = "out"\n'
                      f'{league_extra}')
    return league


def _league(league: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    return referee("league", league, "-q", *flags, env=_private_tmp(league.parent),
                   timeout=600, check=False)


@pytest.mark.slow
def test_a_spec_runs_only_in_its_own_submission(tmp_path: Path) -> None:
    """Issue 22, item 7: a spec in the shared bots/ folder with a plain workdir = "alice" ran in
    alice's folder and copied her code into the records and the report. Within one league a
    spec whose folder is another's, or holds another's, is refused with one line naming both
    files; the bot the folder belongs to (bots/alice/ beside bots/alice.toml) plays."""
    league = _submissions(tmp_path)
    bots = tmp_path / "bots"
    stopped = _league(league)
    assert stopped.returncode != 0
    assert stopped.stderr.splitlines() == [
        f"Error: {bots / 'intruder.toml'}: key 'workdir': its folder {bots / 'alice'} belongs "
        f"to the bot in {bots / 'alice.toml'}; {HOW}"], stopped.stderr
    assert not LeagueFolder(tmp_path / "out").store_path.exists()
    skipped = _league(league, "--skip-broken")
    assert skipped.returncode == 0, skipped.stderr
    lines = skipped.stderr.splitlines()
    assert len(lines) == 2, skipped.stderr
    assert lines[0].startswith(f"skipped bot 'intruder': {bots / 'intruder.toml'}: ")
    assert str(bots / "alice.toml") in lines[0]
    assert lines[1].startswith(f"skipped bot 'nester': {bots / 'nester.toml'}: key 'workdir': "
                               f"its folder {bots} holds ")
    table = json.loads(LeagueFolder(tmp_path / "out").table_json.read_text())["table"]
    assert sorted(row["bot"] for row in table) == ["alice", "bob"]


@pytest.mark.slow
def test_one_submission_under_two_settings_may_share_its_folder(tmp_path: Path) -> None:
    """shared_folders in the league file: intruder and alice are one submission; they play
    together, and nester (whose folder holds both) is still refused."""
    shared = 'shared_folders = [["bots/alice.toml", "bots/intruder.toml"]]\n'
    league = _submissions(tmp_path, f"skip_broken = true\n{shared}")
    done = _league(league)
    assert done.returncode == 0, done.stderr
    assert [line.split(":")[0] for line in done.stderr.splitlines()] == ["skipped bot 'nester'"]
    table = json.loads(LeagueFolder(tmp_path / "out").table_json.read_text())["table"]
    assert sorted(row["bot"] for row in table) == ["alice", "bob", "intruder"]
    wrong = tmp_path / "wrong.toml"
    wrong.write_text('bots = ["bots/alice.toml", "bots/bob.toml"]\n'
                     'shared_folders = [["bots/alice.toml", "bots/carol.toml"]]\n')
    refused = _league(wrong)
    assert refused.returncode != 0
    assert refused.stderr.strip() == (f"Error: {wrong}: key 'shared_folders': "
                                      f"{tmp_path / 'bots' / 'carol.toml'} is not one of the "
                                      f"league's bots")


@pytest.mark.slow
def test_one_spec_in_two_roles_is_not_refused_and_a_gauntlet_may_rename(tmp_path: Path) -> None:
    """A gauntlet may seat one spec twice (its baseline in its field) and test a new version
    under an old name: refusals(names=False) then looks at folders only."""
    from referee.bots.lineup import refusals

    alice = load_spec(install_test_bot(tmp_path / "v1", "alice", "honest"))
    again = load_spec(install_test_bot(tmp_path / "v2", "alice", "honest"))
    assert refusals([alice, alice]) == []
    assert [str(error) for _, error in refusals([alice, again])] == [
        f"{again.path}: key 'name': 'alice' is already the name of the bot in {alice.path}"]
    assert refusals([alice, again], names=False) == []
