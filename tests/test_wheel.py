"""The installed package is the product: a wheel and an sdist built from the checkout carry what
a user needs (bot.proto, the sample bots, templates, static files, migrations, the records'
dictionary, py.typed), and the wheel, installed into a fresh virtual environment, plays a league
with the JavaScript sample bot (which loads bot.proto at run time from $LASVEGAS_PROTO) and
serves a club, from outside the checkout.

Slow: the build, the install of the dependencies (from pip's cache where it has them) and the
JavaScript bot's `npm ci` each take a minute or so; the limits are generous.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import urllib.request
import zipfile
from pathlib import Path

import pytest
from server_support import ServerProcess

from referee.league.folder import LeagueFolder

ROOT = Path(__file__).resolve().parents[1]
INSTALL_TIMEOUT_S = 1800   # a cold pip cache downloads Django, grpcio, numpy...

# What the package must carry, as paths inside it (the wheel's and the sdist's referee/).
NEEDED = (
    "py.typed",
    "bundled/proto/lasvegas/v1/bot.proto",
    "bundled/sample_bots/random.toml",
    "bundled/sample_bots/random/main.py",
    "bundled/sample_bots/greedy.toml",
    "bundled/sample_bots/greedy/main.py",
    "bundled/sample_bots/montecarlo.toml",
    "bundled/sample_bots/montecarlo/main.py",
    "bundled/sample_bots/greedy-js.toml",
    "bundled/sample_bots/greedy-js/main.js",
    "bundled/sample_bots/greedy-js/package.json",
    "bundled/sample_bots/greedy-js/package-lock.json",
    "league/record.zdict",
    "protocol/lasvegas/v1/bot_pb2.pyi",
    "report/templates/replay.html.j2",
    "report/static/viewer.js",
    "server/club/templates/club/login.html",
    "server/club/static/club/club.css",
    "server/club/migrations/0001_initial.py",
    "server/club/templatetags/club.py",
)
# The sdist holds the source tree's own folders, from which the wheel's bundled/ is made.
SDIST_NEEDED = ("setup.py", "MANIFEST.in", "proto/lasvegas/v1/bot.proto",
                "sample_bots/greedy-js.toml", "sample_bots/greedy-js/main.js")


def _run(argv: list[str], timeout: float, cwd: Path | None = None,
         env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """`argv` run to its end; its output, or a failure showing it."""
    done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, cwd=cwd,
                          env=env, check=False)
    assert done.returncode == 0, f"{argv}:\n{done.stdout}\n{done.stderr}"
    return done


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sdist and the wheel (built from the sdist, as `python -m build` does) of the
    checkout."""
    out = tmp_path_factory.mktemp("dist")
    source = tmp_path_factory.mktemp("source") / "referee"
    # A copy of the files git keeps (tracked, or new and not ignored): what a fresh clone
    # builds, without node_modules, caches or build/.
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                           cwd=ROOT, capture_output=True,
                           check=True).stdout.decode().split("\0")
    for name in filter(None, files):
        if (ROOT / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
    _run([sys.executable, "-m", "build", "--outdir", str(out), str(source)],
         timeout=INSTALL_TIMEOUT_S)
    return out


def _wheel(dist: Path) -> Path:
    [wheel] = dist.glob("referee-*.whl")
    return wheel


def test_wheel_and_sdist_carry_what_a_user_needs(dist: Path) -> None:
    in_wheel = set(zipfile.ZipFile(_wheel(dist)).namelist())
    missing = [name for name in NEEDED if f"referee/{name}" not in in_wheel]
    assert not missing, f"the wheel lacks {missing}"
    assert not any("node_modules" in name for name in in_wheel)
    [sdist] = dist.glob("referee-*.tar.gz")
    with tarfile.open(sdist) as archive:
        in_sdist = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    missing = [name for name in (*(f"referee/{name}" for name in NEEDED
                                   if not name.startswith("bundled/")), *SDIST_NEEDED)
               if name not in in_sdist]
    assert not missing, f"the sdist lacks {missing}"


@pytest.mark.sandbox
def test_installed_wheel_plays_a_league_with_the_js_bot_and_serves(
        dist: Path, tmp_path: Path) -> None:
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("needs node and npm (the JavaScript sample bot)")
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", str(venv)], timeout=300)
    python, referee = str(venv / "bin" / "python"), str(venv / "bin" / "referee")
    # Nothing of the checkout: no PYTHONPATH, another venv, a folder outside the tree.
    env = {key: value for key, value in os.environ.items()
           if key not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env.update(PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}",
               XDG_CACHE_HOME=str(tmp_path / "cache"))
    _run([python, "-m", "pip", "install", "--quiet", f"{_wheel(dist)}[server]"],
         timeout=INSTALL_TIMEOUT_S, env=env, cwd=tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    # As docs/league.md has it: sample bots copied, spec and folder (no bot.proto beside the
    # JavaScript bot: it loads the one $LASVEGAS_PROTO names, the installed package's).
    for name in ("greedy-js", "random"):
        shutil.copytree(ROOT / "sample_bots" / name, work / name,
                        ignore=shutil.ignore_patterns("node_modules", "__pycache__"))
        shutil.copy(ROOT / "sample_bots" / f"{name}.toml", work / f"{name}.toml")
    league = _run([referee, "league", "greedy-js.toml", "random.toml", "--games", "4",
                   "--seed", "11", "--out", "out", "--quiet"],
                  timeout=INSTALL_TIMEOUT_S, env=env, cwd=work)
    table = json.loads(LeagueFolder(work / "out").table_json.read_text())["table"]
    rows = {row["bot"]: row for row in table}
    assert set(rows) == {"greedy-js", "random"}, league.stdout
    for row in rows.values():
        assert row["games"] == 4 and row["forfeits"] == 0, row
        assert sum(row["strikes"].values()) == 0, row

    # The defaults that name sample bots (house bots, `referee check`'s opponents) and the
    # protocol file resolve inside the installation.
    found = _run([python, "-c", "import referee.util.resources as r; print(r.sample_bots()); "
                  "print(r.proto_file())"], timeout=120, env=env, cwd=work).stdout.split()
    samples, proto = Path(found[0]), Path(found[1])
    assert samples.is_relative_to(venv) and proto.is_relative_to(venv) and proto.is_file()
    assert (samples / "montecarlo.toml").is_file()

    # The club server: its pages (templates, static files) and its database (migrations).
    server = ServerProcess(work / "club", program=(referee,), cwd=work, env=env)
    try:
        with urllib.request.urlopen(f"{server.url}/login/", timeout=60) as answer:
            page = answer.read().decode()
        assert answer.status == 200 and "<form" in page, page
        with urllib.request.urlopen(f"{server.url}/static/club/club.css", timeout=60) as answer:
            assert answer.status == 200
    finally:
        assert server.stop() == 0, server.output()
