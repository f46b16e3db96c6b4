"""A bot's files are bounded before anything reads them, and hashing them takes flat memory
(docs/security.md, "Untrusted uploads, round 5"): huge sparse files (a few KiB on disk,
hundreds of MiB as they read) are refused in one line by the real `referee check`, with or
without a build that makes them."""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_support import referee

from referee.bots.spec import hash_entries, hash_tree

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
MIB = 1024 * 1024
SPARSE = 3        # files of SPARSE_MB each: past the default bound in all, each under it
SPARSE_MB = 120
MAKE_SPARSE = (f"import os\nfor n in range({SPARSE}):\n"
               f"    with open(f'huge{{n}}.bin', 'wb') as out:\n"
               f"        out.truncate({SPARSE_MB} * 1024 * 1024)\n")


@pytest.fixture
def folder() -> Iterator[Path]:
    """A folder others may read (the sandboxed bot runs as a uid of its own)."""
    root = Path(tempfile.mkdtemp(prefix="bounds-", dir="/tmp"))
    root.chmod(0o755)
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


def random_bot(root: Path, build: bool) -> Path:
    """The sample random bot in `root`/bot with its spec beside it; `build`: its build makes
    the sparse files, else they are there from the start. The spec's path."""
    bot = root / "bot"
    shutil.copytree(ROOT / "sample_bots/random", bot)
    spec = root / "bot.toml"
    text = 'name = "sparse"\ncommand = ["{python}", "main.py"]\nworkdir = "bot"\n'
    if build:
        (bot / "make.py").write_text(MAKE_SPARSE)
        text += 'build = ["{python}", "make.py"]\n'
    else:
        for n in range(SPARSE):
            with (bot / f"huge{n}.bin").open("wb") as out:
                out.truncate(SPARSE_MB * MIB)
    spec.write_text(text)
    for path in (bot, *bot.rglob("*")):
        path.chmod(0o755 if path.is_dir() else 0o644)
    return spec


@pytest.mark.parametrize("build", [False, True], ids=["uploaded", "built"])
def test_referee_check_refuses_huge_sparse_files_in_one_line(folder: Path, build: bool) -> None:
    spec = random_bot(folder, build)
    done = referee("check", spec, "--no-probes", check=False, timeout=600, merged=True)
    assert done.returncode != 0, done.stdout
    total = SPARSE * SPARSE_MB
    said = [line for line in done.stdout.splitlines()
            if re.search(rf"/bot: \d+ files of {total} MiB in all; ", line)]
    assert len(said) == 1, done.stdout
    assert "at most 256 MiB in all, 128 MiB a file and 10,000 files" in said[0], said
    assert ("FAIL  build" if build else "FAIL  spec") in done.stdout, done.stdout
    assert "Traceback" not in done.stdout
    # Never started: the bound came before the bot (nor its files' hash) was run.
    assert "start" not in [line.split()[1] for line in done.stdout.splitlines()
                           if line.startswith(("PASS", "FAIL"))], done.stdout


def test_hashing_a_large_file_keeps_memory_flat(folder: Path) -> None:
    """A file of 100 MiB (sparse: no disk taken) hashes with a peak of Python memory far
    below its size, to the digest the whole bytes give."""
    size = 100 * MIB
    with (folder / "big.bin").open("wb") as out:
        out.truncate(size)
    os.chmod(folder / "big.bin", 0o644)
    tracemalloc.start()
    try:
        digest = hash_tree(folder)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 * MIB, f"hashing took a peak of {peak / MIB:.0f} MiB"
    assert digest == hash_entries([("big.bin", bytes(size))])
