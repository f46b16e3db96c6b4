"""The parts of cluster leagues that need no cluster: packs, the store's refusal of a second
record, league files, and that a league without --cluster never imports dask."""

from __future__ import annotations

import io
import shutil
import subprocess
import sys
import tarfile
from dataclasses import replace
from pathlib import Path

import pytest
from cli_support import referee

from referee.bots.errors import BotStartError
from referee.bots.spec import BotSpecError, load_spec, moved_to
from referee.league.config import load_league_file
from referee.league.executors.packs import pack_tree, pack_version, place_archive, unpack
from referee.league.folder import LeagueFolder
from referee.util.config import ConfigError

ROOT = Path(__file__).resolve().parents[1]


def test_a_pack_holds_exactly_the_files_the_version_covers(tmp_path: Path) -> None:
    spec = load_spec(ROOT / "sample_bots" / "greedy-js.toml")
    pack = pack_tree(spec.workdir)
    assert pack.version == spec.files_hash() == pack_version(pack.data)
    with tarfile.open(fileobj=io.BytesIO(pack.data)) as tar:
        names = tar.getnames()
    assert "main.js" in names and not any(n.startswith("node_modules") for n in names)
    where = unpack(pack.data, pack.version, tmp_path / "cache", "greedy-js")
    assert (where / "main.js").read_bytes() == (spec.workdir / "main.js").read_bytes()
    assert unpack(pack.data, pack.version, tmp_path / "cache", "greedy-js") == where


def test_a_pack_of_other_files_is_refused(tmp_path: Path) -> None:
    bot = tmp_path / "bot"
    bot.mkdir()
    (bot / "main.py").write_text("print('v1')\n")
    league_version = pack_tree(bot).version
    (bot / "main.py").write_text("print('v2')\n")
    changed = pack_tree(bot)
    with pytest.raises(BotStartError, match="changed since the league began"):
        unpack(changed.data, league_version, tmp_path / "cache", "bot")
    assert not (tmp_path / "cache" / league_version.replace(":", "-")).exists()


def test_a_pack_cannot_write_outside_its_directory(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        info = tarfile.TarInfo("../escaped.txt")
        info.size = 2
        tar.addfile(info, io.BytesIO(b"hi"))
    data = buffer.getvalue()
    with pytest.raises(tarfile.TarError):
        unpack(data, pack_version(data), tmp_path / "cache", "bot")
    assert not (tmp_path / "escaped.txt").exists()


def test_a_pack_keeps_modes_and_never_carries_what_the_bot_cannot_read(tmp_path: Path) -> None:
    """Issue 22, item 2: modes survive the pack; a root-only file, a hard link to one and a
    file in a folder others cannot enter travel empty and arrive as unreadable as they were;
    the version agrees on both sides."""
    import os

    bot = tmp_path / "bot"
    (bot / "closed").mkdir(parents=True)
    (bot / "main.py").write_text("print('hi')\n")
    (bot / "run.sh").write_text("#!/bin/sh\n")
    (bot / "run.sh").chmod(0o755)
    (bot / "secret.txt").write_text("SECRET-ONE\n")
    (bot / "secret.txt").chmod(0o600)
    outside = tmp_path / "organiser"
    outside.write_text("SECRET-TWO\n")
    outside.chmod(0o600)
    os.link(outside, bot / "linked.txt")
    (bot / "closed" / "inner.txt").write_text("SECRET-THREE\n")
    (bot / "closed").chmod(0o700)
    pack = pack_tree(bot)
    assert pack_version(pack.data) == pack.version
    with tarfile.open(fileobj=io.BytesIO(pack.data)) as tar:
        members = {m.name: m for m in tar.getmembers()}
        contents = {name: tar.extractfile(m).read() for name, m in members.items() if m.isfile()}
    assert {name: oct(m.mode) for name, m in members.items()} == {
        "closed": "0o700", "closed/inner.txt": "0o644", "linked.txt": "0o600",
        "main.py": "0o644", "run.sh": "0o755", "secret.txt": "0o600"}
    assert contents["secret.txt"] == contents["linked.txt"] == contents["closed/inner.txt"] == b""
    where = unpack(pack.data, pack.version, tmp_path / "cache", "bot")
    modes = {path.relative_to(where).as_posix(): oct(path.stat().st_mode & 0o777)
             for path in where.rglob("*")}
    assert modes["closed"] == "0o700" and modes["secret.txt"] == "0o600"
    assert modes["linked.txt"] == "0o600" and modes["run.sh"] == "0o755"
    assert (where / "main.py").read_text() == "print('hi')\n"


def test_an_image_archive_is_placed_on_a_worker_only_with_its_digest(tmp_path: Path) -> None:
    """An image archive travels as bytes and their SHA-256: bytes that are not the ones the
    coordinator read (damaged, or swapped on the way) are refused in one line, nothing
    written; the right ones are stored under their digest, once."""
    import hashlib

    data = b"an image archive, as podman save wrote it"
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    cache = tmp_path / "archives"
    with pytest.raises(BotStartError, match="its image archive arrived as sha256:"):
        place_archive(data + b"!", digest, "alice.tar", cache, "alice")
    assert not cache.exists() or not any(cache.rglob("*.tar"))
    path = place_archive(data, digest, "alice.tar", cache, "alice")
    assert path == cache / digest.replace(":", "-") / "alice.tar"
    assert path.read_bytes() == data
    path.write_bytes(b"damaged on the worker's disk")
    assert place_archive(data, digest, "alice.tar", cache, "alice").read_bytes() == data


def test_the_store_refuses_a_second_record_of_a_game(tmp_path: Path) -> None:
    from referee.engine import preset
    from referee.game.match import MatchResult, SeatResult
    from referee.league.schedule import ScheduledGame
    from referee.league.store import GameAlreadyStored

    store = LeagueFolder(tmp_path).open_store()
    game = ScheduledGame(0, ("a", "b"), 5, 0)
    store.create({"seed": 1}, {"a": ("v", None), "b": ("v", None)}, [game])
    from referee.engine import Game

    played = Game(preset("classic"), 2, 5)
    record = played.record(game_id="g0", worker="w1")
    result = MatchResult("g0", record, [1, 2], [0, 0], [SeatResult("a", "v"),
                                                          SeatResult("b", "v")], 0.1)
    store.save(game, result)
    with pytest.raises(GameAlreadyStored, match="game 0 is recorded already"):
        store.save(game, result)
    assert store.done() == {0} and store.workers() == {0: "w1"}


def test_a_league_file_may_name_a_cluster(tmp_path: Path) -> None:
    league = tmp_path / "season.toml"
    league.write_text(f'bots = ["{ROOT}/sample_bots/random.toml", '
                      f'"{ROOT}/sample_bots/greedy.toml"]\ncluster = "local:2"\n')
    assert load_league_file(league).cluster == "local:2"
    league.write_text(f'bots = ["{ROOT}/sample_bots/random.toml"]\ncluster = 3\n')
    with pytest.raises(ConfigError, match="cluster"):
        load_league_file(league)


@pytest.mark.slow
def test_a_league_without_cluster_never_imports_dask(tmp_path: Path) -> None:
    script = f"""
import sys
from referee.cli import main
try:
    main(["league", "{ROOT}/sample_bots/random.toml", "{ROOT}/sample_bots/greedy.toml",
          "--games", "2", "--quiet", "--out", "{tmp_path / 'out'}"], standalone_mode=False)
finally:
    print(sorted(m for m in sys.modules if m.split(".")[0] in ("dask", "distributed")))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert "2/2 games recorded" in done.stdout
    assert done.stdout.strip().splitlines()[-1] == "[]"


@pytest.mark.slow
def test_a_bad_cluster_address_is_one_line(tmp_path: Path) -> None:
    done = referee(
        "league", f"{ROOT}/sample_bots/random.toml",
        f"{ROOT}/sample_bots/greedy.toml", "--games", "2", "--quiet", "--out",
        tmp_path / "out", "--cluster", "local:zero", timeout=300, check=False)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "local:N" in done.stderr


def test_a_spec_moved_to_a_workers_copy_runs_that_copys_programs(tmp_path: Path) -> None:
    """A program of the bot's folder is made absolute where the spec loads (the coordinator):
    moved to a worker's copy it is the same path in the copy, checked there as at load; the
    runtime's programs and `{python}` stay. A link in the copy that leads out (a build's) is
    refused with one line naming the spec's file and key."""
    home = tmp_path / "home"
    (home / "bot" / "bin").mkdir(parents=True)
    (home / "bot" / "bin" / "run").write_text("#!/bin/sh\n")
    (home / "bot.toml").write_text('name = "bot"\ncommand = ["bin/run", "--fast"]\n'
                                   'build = ["./bin/run"]\nworkdir = "bot"\n')
    spec = load_spec(home / "bot.toml")
    assert spec.command == (str(home / "bot" / "bin" / "run"), "--fast")
    copy = tmp_path / "worker" / "sha256-0123"
    shutil.copytree(home / "bot", copy)
    moved = moved_to(spec, copy)
    assert moved.workdir == copy
    assert moved.command == (str(copy / "bin" / "run"), "--fast")
    assert moved.build == (str(copy / "bin" / "run"),)
    for command in (("{python}", "main.py"), ("/bin/sh", "run.sh"), ("node", "main.js")):
        assert moved_to(replace(spec, command=command), copy).command == command
    shutil.rmtree(copy / "bin")
    (copy / "bin").symlink_to("/usr/bin")   # as a build on the worker may leave it
    with pytest.raises(BotSpecError) as refused:
        moved_to(spec, copy)
    said = str(refused.value)
    assert said.startswith(f"{home / 'bot.toml'}: key 'command': expected a program inside "
                           f"the bot's folder {copy}") and "\n" not in said, said
