"""The season runner: the club server's process that checks, plays and fits.

    python -m referee.server.runner --data DIR [--season FILE] [--cluster URL|local:N]

It talks to the web process only through the club's database and the data folder: it claims
queued checks (a few at a time, each with a time limit) and test games, enters versions that
passed into the season, plays the season's games (here or on a dask cluster) unless the season
is paused or closed (the house bots the season file names play from its first start),
refits the table in the background after every few games, and writes the
closed season's report. Killed at any moment (SIGKILL included) and started again, it loses
nothing: a check or test game it had begun is queued again, every stored game stays stored
once, and the games not stored are played again.
"""

from __future__ import annotations

import asyncio
import dataclasses
import fcntl
import os
import signal
from pathlib import Path
from typing import Any

from referee.bots.diskwatch import WRITE_MAX_ENV
from referee.bots.sandbox import DATA_ENV
from referee.server.runner.logline import log
from referee.server.shared.clubfolder import SEASON_FILE_ENV, ClubFolder
from referee.server.shared.database import Database


def setup_django(data: Path, season_file: Path) -> None:
    """Point Django at the club's data folder and settings, as the web process does."""
    os.environ[DATA_ENV] = str(data)
    os.environ[SEASON_FILE_ENV] = str(season_file)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "referee.server.settings")
    import django

    django.setup()


async def run(data: Path, season_file: Path, cluster: str | None) -> None:
    """The runner's tasks until SIGTERM or SIGINT (or one of them fails), with its connection
    to the season's dask cluster open throughout when there is one."""
    from referee.server.shared.seasonkeys import load_runner_settings

    settings = load_runner_settings(season_file)
    # Every build and bot this runner starts, in checks, games and test games, and in the
    # processes it starts for them (a local:N cluster's workers too, started below) writes at
    # most this much (referee.bots.diskwatch).
    os.environ[WRITE_MAX_ENV] = str(settings.write_max_mb)
    confine(settings)
    address = cluster or settings.league.cluster
    if not address:
        await serve(data, season_file, settings, None, None)
        return
    async with connect(address, settings) as connection:
        await serve(data, season_file, settings, address, connection)


def confine(settings: Any) -> Any:
    """Decide, once, how uploads run (referee.server.shared.confinement) and say it unless they run
    confined; every process the runner starts (a check, a cluster's worker) inherits the
    decision through the environment (referee.bots.confinement). The Confinement."""
    from referee.bots.confinement import UNCONFINED_ENV
    from referee.server.shared.confinement import UNCONFINED, confinement

    decided = confinement(settings)
    if decided.line:
        log(decided.line)
    if decided.state == UNCONFINED:
        os.environ[UNCONFINED_ENV] = "1"
    else:
        os.environ.pop(UNCONFINED_ENV, None)
    return decided


def connect(address: str, settings: Any) -> Any:
    """The runner's one connection to its dask cluster: the season's games, the checks and the
    test games all go through it (`local:N` starts N workers here once, not once each)."""
    from referee.util.extras import require

    require("distributed", "--cluster")
    from referee.league.executors.dask import Cluster

    league = settings.league
    table = league.players[1] if league.players else 4   # the largest table it may play
    return Cluster(address, league.concurrency or league.default_concurrency(table))


async def serve(data: Path, season_file: Path, settings: Any, cluster: str | None,
                connection: Any) -> None:
    """The runner's tasks on the club's database (`connection`: its dask.Cluster, if any)."""
    from referee.league.season import open_season
    from referee.server.runner import clubdb
    from referee.server.runner.checks import check_queue
    from referee.server.runner.competitions import Competitions
    from referee.server.runner.humangames import human_game_queue
    from referee.server.runner.refitloop import refit_loop
    from referee.server.runner.seasonloop import SeasonLoop
    from referee.server.runner.testgames import test_game_queue

    os.environ[WRITE_MAX_ENV] = str(settings.write_max_mb)   # (set by run, too)
    db = Database()
    checks, games = await db(clubdb.requeue_interrupted)
    if checks or games:
        log(f"queued again after an interruption: {checks} checks, {games} test games")
    # A copy: a new season draws its seed into the settings it is given, and the runner's
    # settings must stay what the file says (compared with the file when it changes).
    season = open_season(ClubFolder(data).season, dataclasses.replace(settings.league),
                         settings.round_games, settings.max_rounds or None,
                         settings.max_catch_up)
    moved = season.relocate(await db(clubdb.spec_paths, data))
    if moved:
        log(f"the season reads {len(moved)} entrants' specs from {data} now (the data folder "
            f"was moved or restored elsewhere)")
    others = Competitions(db, data, season_file, cluster, connection)
    await others.read()   # the other competitions' settings: their house bots are kept
    if not season.states():   # the season's first start: the house bots join it
        house = await db(clubdb.add_house_bots, settings.house_bots)
        if house:
            log(f"house bots queued for their checks: {', '.join(house)}")
    else:   # later starts: the season file's house bots, as it says them now
        added, removed = await db(clubdb.sync_house_bots,
                                  settings.house_bots + others.house_bots())
        if added or removed:
            log(f"house bots as the season file names them: "
                f"{', '.join([*(f'+{n}' for n in added), *(f'-{n}' for n in removed)])}")
    loop_ = SeasonLoop(db, data, season, settings, cluster, connection=connection,
                       season_file=season_file, turns=others.turns,
                       elsewhere=others.active_names, other_house=others.house_bots)
    await loop_.apply_limits()   # a [limits] changed while the runner was stopped
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stopping.set)
    tasks = [
        asyncio.create_task(check_queue(db, data, settings.check_concurrency,
                                        settings.check_timeout_s, settings.write_max_mb,
                                        cluster=connection, limits=loop_.limits,
                                        uploads_run=loop_.uploads_run),
                            name="checks"),
        # The stored settings with the loop's live [limits] (changed in place).
        asyncio.create_task(test_game_queue(db, data, dataclasses.replace(
                                                season.stored, limits=loop_.limits),
                                            settings.test_game_timeout_s, cluster=connection),
                            name="test games"),
        asyncio.create_task(human_game_queue(db, data, dataclasses.replace(
                                                 season.stored, limits=loop_.limits), settings),
                            name="human games"),
        asyncio.create_task(refit_loop(db, loop_, settings.refit_games,
                                       settings.refit_seconds), name="refit"),
    ]
    season_task = asyncio.create_task(loop_.run(), name="season")
    tasks.append(asyncio.create_task(others.run(), name="competitions"))
    stop_task = asyncio.create_task(stopping.wait())
    log(f"started on {data} (season file {season_file})")
    try:
        waiting = {stop_task, season_task, *tasks}
        while True:
            done, waiting = await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
            if stop_task in done:
                break
            for task in done:
                task.result()   # a task that failed stops the runner with its error
    finally:
        for task in [*tasks, season_task, stop_task]:
            task.cancel()
        await asyncio.gather(*tasks, season_task, stop_task, return_exceptions=True)
        season.close()
        db.close()
        log("stopped")


def hold_runner_lock(data: Path) -> int:
    """Take the data folder's runner lock (an exclusive flock on DATA/runner.lock, held until
    the process ends), waiting while another runner holds it: one runner plays a season at a
    time, even while an old one still finishes its games after `referee serve` was killed."""
    from referee.util.config import ConfigError

    if not data.is_dir():
        raise ConfigError(f"{data}: no such data folder (referee serve --data {data} makes it)")
    lock = ClubFolder(data).runner_lock
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "?"
        log(f"another season runner (pid {holder}) holds {lock}; waiting for it "
            f"to stop")
        fcntl.flock(fd, fcntl.LOCK_EX)
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return fd


def clean_tmp(data: Path) -> None:
    """Remove the bot instance, check and build folders (DATA/tmp/referee-*) that a runner
    killed with its bots left behind: with the runner lock held, none is in use."""
    from referee.bots.leftovers import clean_leftovers

    tmp = ClubFolder(data).tmp
    removed = clean_leftovers(tmp)
    if removed:
        log(f"removed {len(removed)} folders a stopped runner left in {tmp}")


def main(data: Path, season_file: Path | None = None, cluster: str | None = None) -> None:
    """Run the season runner on the data folder `data` until SIGTERM or SIGINT."""
    # Owner-only, as under `referee serve` (referee.server.serve.OWNER_ONLY), when started alone.
    os.umask(0o077)
    data = Path(data).resolve()
    season_file = Path(season_file or ClubFolder(data).season_file())
    hold_runner_lock(data)
    clean_tmp(data)
    setup_django(data, season_file.resolve())
    asyncio.run(run(data, season_file.resolve(), cluster))
