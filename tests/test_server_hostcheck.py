"""`referee serve` checks the host at start: one line per missing piece, saying which bots will
fail and what to install, printed and shown on the organiser's page."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from server_support import ServerProcess, club_django

club_django()

from django.contrib.auth.models import User  # noqa: E402
from django.test import Client, override_settings  # noqa: E402
from django.utils.html import escape  # noqa: E402

from referee.server.hostcheck import (  # noqa: E402
    HOST_CHECK_FILE,
    INSTALL_ALL,
    host_problems,
    save,
)


def test_a_host_without_node_or_a_cpp_tool_chain_is_told_what_each_breaks(
        tmp_path: Path) -> None:
    """Bots' programs looked for on a PATH that holds only `make` (as a bare machine's
    sandbox would see): Node.js and the C++ tool chain are each one line naming the guide
    whose bots fail and the packages that install what is missing."""
    bare = tmp_path / "bin"
    bare.mkdir()
    os.symlink("/usr/bin/make", bare / "make")
    lines = {missing.piece.split(" (")[0]: missing.line()
             for missing in host_problems(bot_path=str(bare))}
    assert "JavaScript bots" in lines["Node.js"] and "apt-get install nodejs npm" in \
        lines["Node.js"], lines
    cpp = lines["the C++ tool chain"]
    assert "g++" in cpp and "make," not in cpp and "C++ bots (the C++ guide)" in cpp, cpp
    assert "libgrpc++-dev" in cpp
    for packages in ("nodejs npm", "libgrpc++-dev", "slirp4netns", "bubblewrap", "podman"):
        assert packages in INSTALL_ALL


def test_the_organiser_page_shows_what_the_start_found(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    bare = tmp_path / "bin"
    bare.mkdir()
    found = host_problems(bot_path=str(bare))
    save(tmp_path, found)
    monkeypatch.setenv("REFEREE_SEASON_FILE", str(tmp_path / "season.toml"))
    with override_settings(DATA_DIR=tmp_path):
        organiser = User.objects.create_superuser("org-hostcheck", password="a long one 77")
        client = Client()
        client.force_login(organiser)
        page = client.get("/organiser/").content.decode()
    assert 'id="host-missing"' in page and INSTALL_ALL in page
    for missing in found:
        assert escape(missing.line()) in page


@pytest.mark.slow
def test_serve_prints_each_missing_piece_at_start_and_keeps_them(tmp_path: Path) -> None:
    found = host_problems()
    expected = [missing.line() for missing in found]
    server = ServerProcess(tmp_path / "club")
    try:
        said = server.output()
    finally:
        server.stop()
    saved = json.loads((tmp_path / "club" / HOST_CHECK_FILE).read_text())
    assert [item["piece"] for item in saved] == [missing.piece for missing in found]
    for line in expected:
        assert line in said, said
    assert ("everything the guides need" in said) == bool(expected), said


def test_the_install_line_of_the_server_docs_is_the_one_the_server_prints() -> None:
    docs = (Path(__file__).resolve().parents[1] / "docs" / "server.md").read_text()
    assert f"```sh\n{INSTALL_ALL}\n" in docs
    ci = (Path(__file__).resolve().parents[1] / ".ci" / "run").read_text()
    containers = (Path(__file__).resolve().parents[1] / ".ci" / "setup-containers.sh").read_text()
    for package in INSTALL_ALL.removeprefix("apt-get install ").split():
        assert package in ci or package in containers, package
