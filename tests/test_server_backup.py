"""`referee backup` copies a running club; `referee restore` brings it back in a new folder,
where a server shows the same results, tokens and passwords (docs/server.md, "Backup")."""

from __future__ import annotations

import stat
import tarfile
from pathlib import Path

from cli_support import referee
from server_support import ServerProcess, WebClient, rated_club

from referee.league.folder import LeagueFolder

PASSWORD = "a long password 1"   # every student Club.student makes
ROUND_GAMES = 4


def bearer(server: ServerProcess, path: str, token: str) -> dict:
    answer = WebClient(server.url).request("GET", path,
                                           headers={"Authorization": f"Bearer {token}"})
    assert answer.status == 200, (path, answer.status, answer.text[:300])
    return answer.json()


def rows(board: dict) -> list[tuple]:
    return [(row["bot"], row["table"]["games"]) for row in board["rows"]]


def test_a_running_club_backed_up_and_restored_shows_the_same_club(tmp_path: Path) -> None:
    with rated_club(tmp_path, {"alice": "ALICE", "bob": "BOB"}, seed=5,
                    round_games=ROUND_GAMES) as club:
        data, server, token = club.data, club.server, club.tokens["alice"]
        board = bearer(server, "/api/leaderboard", token)
        game = bearer(server, "/api/games/0", token)
        organiser = server.organiser_password()
        archive = tmp_path / "saved" / "club.tar.gz"
        archive.parent.mkdir()
        done = referee("backup", "--data", data, archive)   # while the server runs
    in_archive = LeagueFolder(Path("season")).store_path   # the season's store, as archived
    assert done.stdout.startswith(f"backed up {data} to {archive}: 2 databases "
                                  f"(server.sqlite3, {in_archive})"), done.stdout
    assert stat.S_IMODE(archive.stat().st_mode) == 0o600
    with tarfile.open(archive) as saved:
        names = saved.getnames()
    assert "secret_key" in names and "season.toml" in names, names
    assert not [n for n in names if n.startswith("tmp/") or n.endswith(("-wal", "-shm"))]

    restored = tmp_path / "elsewhere" / "club-data"
    done = referee("restore", archive, "--data", restored)
    assert done.stdout.startswith(f"restored {restored} from {archive}: 2 databases"), done
    assert stat.S_IMODE(restored.stat().st_mode) == 0o700
    again = ServerProcess(restored)
    try:
        assert rows(bearer(again, "/api/leaderboard", token)) == rows(board)
        assert bearer(again, "/api/games/0", token) == game
        for name, password in (("alice", PASSWORD), ("organiser", organiser)):
            WebClient(again.url).sign_in(name, password)   # 302: the same passwords
    finally:
        assert again.stop() == 0, again.output()


def test_what_cannot_be_backed_up_or_restored_is_one_line(tmp_path: Path) -> None:
    not_a_club = tmp_path / "empty"
    not_a_club.mkdir()
    done = referee("backup", "--data", not_a_club, tmp_path / "x.tar.gz", check=False)
    assert done.returncode == 1 and done.stderr.strip().splitlines() == [
        f"Error: {not_a_club}: not a club's data folder (no server.sqlite3 in it)"], done
    junk = tmp_path / "junk.tar.gz"
    junk.write_bytes(b"not an archive at all")
    done = referee("restore", junk, "--data", tmp_path / "new", check=False)
    assert done.returncode == 1 and len(done.stderr.strip().splitlines()) == 1, done
    assert done.stderr.startswith(f"Error: {junk}: not a backup of a club"), done
    occupied = tmp_path / "occupied"
    occupied.mkdir()
    (occupied / "keep.txt").write_text("mine")
    done = referee("restore", junk, "--data", occupied, check=False)
    assert done.returncode == 1 and "already holds something" in done.stderr, done
    assert (occupied / "keep.txt").read_text() == "mine"   # nothing touched
