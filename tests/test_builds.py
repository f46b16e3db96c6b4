"""A spec's build runs bot-controlled code: it runs in the bot's sandbox (not root, only its own
folder writable, no referee environment, no host files, no network unless the spec asks), and
the JavaScript sample bot still builds (with `build_network = true`) and plays."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pytest

from referee.bots import build
from referee.bots.build import ensure_built
from referee.bots.process import protocol_env
from referee.bots.sandbox import default_env
from referee.bots.spec import load_spec
from referee.check import processes_with_run_id

ROOT = Path(__file__).resolve().parents[1]
BOTS = ROOT / "tests" / "bots"
SECRET = "REFEREE_TEST_BUILD_SECRET"

needs_sandbox = pytest.mark.sandbox


def _attacker(base: Path, **env: str) -> Path:
    """build_attacker in a folder of its own (as handed in), its spec beside it."""
    folder = base / "bots" / "build_attacker"
    shutil.copytree(BOTS / "build_attacker", folder / "build_attacker")
    shutil.copy(BOTS / "botlib.py", folder / "botlib.py")
    for path in (base, base / "bots", folder, folder / "build_attacker"):
        path.chmod(0o755)
    spec = folder / "build_attacker.toml"
    lines = ['name = "build_attacker"', 'command = ["{python}", "build_attacker/main.py"]',
             'build = ["{python}", "build_attacker/build.py"]', "[env]"]
    lines += [f"{key} = {json.dumps(value)}" for key, value in env.items()]
    spec.write_text("\n".join(lines) + "\n")
    return spec


def _owners(folder: Path) -> dict[str, tuple[int, int]]:
    found = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        for path in (dirpath, *(os.path.join(dirpath, n) for n in (*dirnames, *filenames))):
            st = os.lstat(path)
            found[path] = (st.st_uid, st.st_gid)
    return found


@needs_sandbox
def test_a_build_runs_confined(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    listener.setblocking(False)
    other = tmp_path / "bots" / "other"
    other.mkdir(parents=True)
    (other / "main.py").write_text("SECRET_STRATEGY = 1\n")
    database = tmp_path / "out" / "league.db"
    database.parent.mkdir()
    database.write_text("scores\n")
    spec_path = _attacker(tmp_path, BUILD_READ_PATHS=f"{other / 'main.py'}:{database}:"
                          f"{ROOT / 'pyproject.toml'}:/root/.bash_history",
                          BUILD_WRITE_PATHS=f"{tmp_path}:{tmp_path / 'bots'}:{other}:{ROOT}:"
                          "/tmp:/etc", BUILD_SECRET_NAMES=SECRET, BUILD_PROBE_PORT=str(port))
    folder = spec_path.parent
    monkeypatch.setenv(SECRET, "hunter2")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    private_tmp = tmp_path / "tmp"
    private_tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(private_tmp))
    run_id = f"build-{uuid.uuid4().hex[:8]}"
    monkeypatch.setattr("referee.bots.process.RUN_ID", run_id)
    before = _owners(folder)

    assert ensure_built(load_spec(spec_path), sandbox=True) is True

    report = (folder / "build_report.txt").read_text().splitlines()
    verdicts = {" ".join(line.split()[1:3]): line.split()[3] for line in report
                if line.split()[1] in ("read", "write", "connect")}
    assert report[0].endswith("not-root") and " uid 0 " not in report[0], report[0]
    assert verdicts.pop("read /etc/shadow") == "denied"
    for path in (other / "main.py", database, ROOT / "pyproject.toml"):
        assert verdicts.pop(f"read {path}") == "denied", path
    assert verdicts.pop("read /root/.bash_history") == "denied"
    for place in (tmp_path, tmp_path / "bots", other, ROOT, "/etc"):
        assert verdicts.pop(f"write {place}") == "denied", place
    assert verdicts.pop("write /tmp") == "WROTE"       # its private /tmp, gone afterwards
    assert verdicts.pop(f"connect 127.0.0.1:{port}") == "blocked"
    assert verdicts == {}
    assert f"BUILD: env {SECRET} absent" in report
    names = set(next(x for x in report if x.startswith("BUILD: env count")).split()[5:])
    given = {"BUILD_READ_PATHS", "BUILD_WRITE_PATHS", "BUILD_SECRET_NAMES", "BUILD_PROBE_PORT"}
    # (LASVEGAS_PROTO: the path of the referee's public bot.proto, no secret)
    assert names <= {*default_env(), *protocol_env(), *given, "PWD", "REFEREE_RUN_ID"}, names
    assert "BUILD: own folder WROTE" in report
    # Nothing landed outside; the folder is given back to its owner, new files included.
    for place in (tmp_path, tmp_path / "bots", other, ROOT, Path("/etc")):
        assert not list(place.glob("build-attack-*")), place
    after = _owners(folder)
    assert all(after[path] == owner for path, owner in before.items())
    assert after[str(folder / "build_report.txt")] == before[str(folder)]
    assert list(private_tmp.iterdir()) == []          # no build folder left
    deadline = time.monotonic() + 5
    while processes_with_run_id(run_id) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert processes_with_run_id(run_id) == []        # the daemon it left was ended
    with pytest.raises(BlockingIOError):
        listener.accept()
    listener.close()


@needs_sandbox
def test_the_javascript_sample_bot_builds_with_network_and_plays(tmp_path: Path) -> None:
    if shutil.which("npm") is None or shutil.which("node") is None:
        pytest.skip("needs node and npm")
    bots = tmp_path / "bots"
    shutil.copytree(ROOT / "sample_bots" / "greedy-js", bots / "greedy-js",
                    ignore=shutil.ignore_patterns("node_modules"))
    # Copied as docs/league.md says, spec and folder only: nothing beside them is its proto
    # (the sandbox shows it none); the referee's $LASVEGAS_PROTO leads it to bot.proto.
    shutil.copy(ROOT / "sample_bots" / "greedy-js.toml", bots / "greedy-js.toml")
    shutil.copytree(BOTS / "honest", bots / "honest")
    shutil.copy(BOTS / "botlib.py", bots / "botlib.py")
    shutil.copy(BOTS / "honest.toml", bots / "honest.toml")
    spec = load_spec(bots / "greedy-js.toml")
    assert spec.build_network
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, "-m", "referee.cli", "match",
                           str(bots / "greedy-js.toml"), str(bots / "honest.toml"),
                           "--seed", "71923844416237641235"], env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "greedy-js" in done.stdout and "strikes: none" in done.stdout, done.stdout
    assert (bots / "greedy-js" / "node_modules" / "@grpc" / "grpc-js").is_dir()
    owner = os.stat(bots / "greedy-js").st_uid
    assert os.stat(bots / "greedy-js" / "node_modules").st_uid == owner


@needs_sandbox
def test_without_build_network_the_build_has_no_network(tmp_path: Path) -> None:
    folder = tmp_path / "bot"
    folder.mkdir()
    (folder / "fetch.py").write_text(
        "import socket, sys\n"
        "try:\n    socket.create_connection(('registry.npmjs.org', 443), timeout=5)\n"
        "except OSError as exc:\n    sys.exit(f'no network: {type(exc).__name__}')\n")
    spec_file = folder / "bot.toml"
    spec_file.write_text('name = "fetcher"\ncommand = ["{python}", "fetch.py"]\n'
                         'build = ["{python}", "fetch.py"]\n')
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
        with pytest.raises(build.BotStartError, match="no network"):
            ensure_built(load_spec(spec_file), sandbox=True)


@pytest.mark.parametrize("sandbox", [False, pytest.param(True, marks=needs_sandbox)])
def test_a_build_is_told_where_bot_proto_is_and_can_read_it(tmp_path: Path,
                                                             sandbox: bool) -> None:
    """$LASVEGAS_PROTO leads a build (and a bot: tests/test_guides.py, the JavaScript sample
    above) to the referee's bot.proto, confined or not, wherever the bot's folder is."""
    folder = tmp_path / "bot"
    folder.mkdir()
    (folder / "peek.py").write_text(
        "import os, sys\n"
        "path = os.environ.get('LASVEGAS_PROTO', 'unset')\n"
        "head = open(path).read() if os.path.isfile(path) else 'unreadable'\n"
        "sys.exit(f'proto at {path}: ' + ('syntax = \"proto3\"' in head and 'readable' or head))\n")
    spec_file = folder / "bot.toml"
    spec_file.write_text('name = "peek"\ncommand = ["{python}", "peek.py"]\n'
                         'build = ["{python}", "peek.py"]\n')
    proto = ROOT / "proto" / "lasvegas" / "v1" / "bot.proto"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
        with pytest.raises(build.BotStartError, match=f"proto at {proto}: readable"):
            ensure_built(load_spec(spec_file), sandbox=sandbox)
