"""A student's container follows docs/containers.md ("Submitting your bot") to a passed check:
the `greedy` sample bot (written with the SDK and the engine's policies) built with
`WITH_REFEREE_SDK=1 sample_bots/container/build-image.sh`, saved with `podman save`, described
by the guide's two-line spec, then `referee check`, a league, and a club's check and season
games with it."""

from __future__ import annotations

import os
import subprocess
import uuid
from pathlib import Path

import pytest
from cli_support import referee
from container_support import BUILD_SCRIPT, ROOT, need_runtime
from runner_support import Club, RunnerProcess, sample, season_rows, write_season
from wait_support import wait_for

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def handed_in(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """alice.tar and alice.toml, made as the guide's steps 1 to 3 say; the spec's path."""
    runtime = need_runtime()
    folder = tmp_path_factory.mktemp("alice")
    tag = f"localhost/alice-{uuid.uuid4().hex[:8]}:1"
    built = subprocess.run([str(BUILD_SCRIPT), str(ROOT / "sample_bots" / "greedy"), tag],
                           env={**os.environ, "WITH_REFEREE_SDK": "1"}, cwd=ROOT,
                           stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=900)
    assert built.returncode == 0, built.stderr
    try:
        subprocess.run([runtime, "save", "-o", str(folder / "alice.tar"), tag], check=True,
                       capture_output=True, timeout=300)
    finally:
        subprocess.run([runtime, "rmi", tag], capture_output=True, check=False)
    spec = folder / "alice.toml"
    spec.write_text('name = "alice"\nimage_archive = "alice.tar"      # relative to this file\n')
    return spec


def test_the_guides_image_passes_referee_check_and_plays_a_league(handed_in: Path,
                                                                   tmp_path: Path) -> None:
    checked = referee("check", handed_in, timeout=900, check=False, merged=True)
    assert checked.returncode == 0 and "conforms" in checked.stdout, checked.stdout
    league = referee("league", handed_in, ROOT / "sample_bots" / "random.toml", "--games", "4",
                     "--out", tmp_path / "league", timeout=900, check=False, merged=True)
    assert league.returncode == 0, league.stdout
    assert "games 4/4" in league.stdout and "forfeits 0" in league.stdout, league.stdout


def test_the_guides_image_passes_a_clubs_check_and_plays_its_season(handed_in: Path,
                                                                      tmp_path: Path) -> None:
    data = tmp_path / "club"
    club = Club(data)
    write_season(data, """
        seed = 3
        players = 2
        round_games = 2
        max_rounds = 1
        [limits]
        startup_ms = 60000
    """)
    alice = club.student("alice")
    club.version(alice, "alice-bot", handed_in.parent, spec_text=(
        'name = "alice-bot"\nimage_archive = "alice.tar"\n[limits]\nstartup_ms = 60000\n'))
    club.version(club.student("ann"), "ann-bot", sample("random"), passed=True)
    runner = RunnerProcess(data)
    try:
        wait_for("alice's check", lambda: club.value(
            "BotVersion.objects.get(league_name='alice-bot.v1').check_state")
            not in ("queued", "running"), runner, timeout=900)
        lines = club.value("list(CheckLine.objects.filter(run__version__league_name="
                           "'alice-bot.v1').order_by('seq').values_list('text', flat=True))")
        assert club.value("BotVersion.objects.get(league_name='alice-bot.v1').check_state") \
            == "passed", lines
        wait_for("season games", lambda: _games_with(data, "alice-bot.v1") >= 1, runner,
                 timeout=900)
    finally:
        runner.stop()
        club.close()


def _games_with(data: Path, bot: str) -> int:
    rows = season_rows(data, "SELECT COUNT(*) FROM games WHERE bots LIKE ?", (f"%{bot}%",))
    return rows[0][0] if rows else 0
