"""The trusted side takes nothing from a submission: a hostile folder (tests/hostile_support.py)
that shadows every module name the referee's trusted processes import, fakes every program they
run by name with `PATH = ".:..."`, and sets LD_PRELOAD, LD_LIBRARY_PATH, BASH_ENV, PYTHONSTARTUP
and PYTHONHOME in its spec, goes through `referee check`, a league, a league on a `local:2`
cluster, and a club's season (its check, season games, a test game, a browser game), on one
machine and on `local:2`. Its bot plays honestly, so each path runs to its end; whatever of the
folder ran outside the sandbox would leave a marker, and none does."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_support import referee
from hostile_support import make_hostile_bot, markers_found
from runner_support import Club, RunnerProcess, sample, season_rows, write_season
from wait_support import wait_for

from referee.bots.spec import BotSpecError, load_spec
from referee.util.trusted import bot_command, python_module, trusted_env

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]
HONEST = Path(__file__).resolve().parent / "bots" / "honest.toml"


@pytest.fixture
def hostile(tmp_path: Path) -> tuple[Path, Path]:
    """(the hostile bot's spec, the markers folder outside its folder)."""
    markers = tmp_path / "markers"
    return make_hostile_bot(tmp_path / "hostile", markers), markers


def test_referee_check_runs_nothing_of_the_folder_outside_the_sandbox(
        hostile: tuple[Path, Path]) -> None:
    spec, markers = hostile
    done = referee("check", spec, timeout=600, check=False, merged=True)
    assert done.returncode == 0, done.stdout
    assert "conforms" in done.stdout, done.stdout
    assert (spec.parent / "bot" / "built.txt").exists()   # its build ran, in the sandbox
    assert markers_found(markers) == []


@pytest.mark.parametrize("where", ["here", "local:2"])
def test_a_league_runs_nothing_of_the_folder_outside_the_sandbox(
        hostile: tuple[Path, Path], tmp_path: Path, where: str) -> None:
    spec, markers = hostile
    cluster = [] if where == "here" else ["--cluster", "local:2"]
    done = referee("league", spec, HONEST, "--games", "4", "--out", tmp_path / "out",
                   *cluster, timeout=900, check=False, merged=True)
    assert done.returncode == 0, done.stdout
    assert "4/4 games recorded" in done.stdout, done.stdout
    assert "games 4/4" in done.stdout and "strikes 0, forfeits 0" in done.stdout, done.stdout
    assert markers_found(markers) == []


@pytest.mark.parametrize("cluster", ["", "local:2"])
def test_a_season_runs_nothing_of_an_upload_outside_the_sandbox(
        tmp_path: Path, cluster: str) -> None:
    """The upload's check, its season games, a test game and a browser game against it."""
    data = tmp_path / "club"
    markers = tmp_path / "markers"
    club = Club(data)
    write_season(data, f"""
        seed = 5
        players = 2
        round_games = 2
        max_rounds = 1
        {f'cluster = "{cluster}"' if cluster else ''}
    """)
    eve = club.student("eve")
    folder = make_hostile_bot(tmp_path / "upload", markers).parent
    spec_text = (folder / "hostile.toml").read_text().replace('name = "hostile"',
                                                             'name = "eve-bot"')
    club.version(eve, "eve-bot", folder, spec_text=spec_text)
    club.version(club.student("ann"), "ann-bot", sample("random"), passed=True)
    runner = RunnerProcess(data)
    try:
        wait_for("the upload's check", lambda: club.value(
            "BotVersion.objects.get(league_name='eve-bot.v1').check_state") != "queued"
            and club.value("BotVersion.objects.get(league_name='eve-bot.v1').check_state")
            != "running", runner, timeout=600)
        lines = club.value("list(CheckLine.objects.filter(run__version__league_name="
                           "'eve-bot.v1').order_by('seq').values_list('text', flat=True))")
        assert club.value("BotVersion.objects.get(league_name='eve-bot.v1').check_state") \
            == "passed", lines
        wait_for("season games", lambda: _season_games(data) >= 2, runner, timeout=600)
        test_game = club("""
            from django.db import transaction
            with transaction.atomic():
                game = TestGame.objects.create(
                    requester=User.objects.get(username="eve"),
                    version=BotVersion.objects.get(league_name="eve-bot.v1"))
                game.opponents.add(BotVersion.objects.get(league_name="ann-bot.v1"))
            result = game.pk
        """)
        wait_for("the test game", lambda: club.value(
            f"TestGame.objects.get(pk={test_game}).finished_at is not None"), runner,
            timeout=600)
        assert club.value(f"TestGame.objects.get(pk={test_game}).state") == "done", \
            club.value(f"TestGame.objects.get(pk={test_game}).error")
        browser_game = club("""
            from django.db import transaction
            with transaction.atomic():
                game = HumanGame.objects.create(owner=User.objects.get(username="ann"))
                game.opponents.add(BotVersion.objects.get(league_name="eve-bot.v1"))
            result = game.pk
        """)
        # Its bots start when the game does; it then waits for the person's first answer.
        wait_for("the browser game's start", lambda: club.value(
            f"HumanGame.objects.get(pk={browser_game}).state") != "queued", runner,
            timeout=600)
        assert club.value(f"HumanGame.objects.get(pk={browser_game}).state") == "running"
    finally:
        runner.stop()
        club.close()
    assert markers_found(markers) == []


def _season_games(data: Path) -> int:
    rows = season_rows(data, "SELECT COUNT(*) FROM games")
    return rows[0][0] if rows else 0


@pytest.mark.parametrize("name", ["PYTHONPATH", "REFEREE_BOT_ADDRESS", "REFEREE_ANYTHING"])
def test_a_spec_may_not_set_the_variables_the_referee_owns(tmp_path: Path, name: str) -> None:
    (tmp_path / "bot").mkdir()
    spec = tmp_path / "bot.toml"
    spec.write_text(f'name = "b"\ncommand = ["{{python}}", "main.py"]\nworkdir = "bot"\n'
                    f'env = {{ {name} = "." }}\n')
    with pytest.raises(BotSpecError, match=f"env.{name}.*the referee sets those"):
        load_spec(spec)
    done = referee("check", spec, check=False, merged=True)
    assert done.returncode == 1 and "Traceback" not in done.stdout
    said = [line for line in done.stdout.splitlines() if f"env.{name}" in line]
    assert len(said) == 1 and "the referee sets those" in said[0], done.stdout


def test_a_container_bot_may_set_its_own_pythonpath(tmp_path: Path) -> None:
    """The referee sets PYTHONPATH only for command bots (the SDK): an image has its own."""
    spec = tmp_path / "boxed.toml"
    spec.write_text('name = "boxed"\nimage = "localhost/x:1"\nenv = { PYTHONPATH = "/opt" }\n')
    assert load_spec(spec).env == {"PYTHONPATH": "/opt"}
    spec.write_text('name = "boxed"\nimage = "localhost/x:1"\nenv = { REFEREE_X = "1" }\n')
    with pytest.raises(BotSpecError, match="env.REFEREE_X"):
        load_spec(spec)


def test_trusted_commands_are_isolated_and_absolute(monkeypatch: pytest.MonkeyPatch) -> None:
    """The command lines themselves: an isolated interpreter, absolute programs, and no
    code-loading variable of the referee's own environment passed on."""
    monkeypatch.setenv("LD_PRELOAD", "/x/evil.so")
    monkeypatch.setenv("PYTHONPATH", "/x")
    monkeypatch.setenv("BASH_ENV", "/x/evil.sh")
    command = python_module("referee.cli", "check", "x.toml")
    assert command[1] == "-I" and "-m" not in command
    env = trusted_env({"COLUMNS": "120"})
    assert env["COLUMNS"] == "120" and not {"LD_PRELOAD", "PYTHONPATH", "BASH_ENV"} & set(env)
    wrapped = bot_command(["python3", "main.py"], {"PATH": ".", "LD_PRELOAD": "./e.so"}, "/b")
    assert wrapped[0].startswith("/") and wrapped[1] == "--ignore-environment"
    assert wrapped[-4:] == ["PATH=.", "LD_PRELOAD=./e.so", "python3", "main.py"]
