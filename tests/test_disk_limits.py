"""What a confined bot and a build write is bounded by the kernel, every byte of it: a bot's
instance folder (its /tmp and socket folder) and a build's copy of its folder (with its /tmp)
are size-limited tmpfs mounts (`referee.bots.scratch`). Each attack that beat the old measuring
watch (files unlinked but held open, folders nested past PATH_MAX, sparse files, many small
files, hard links) gets ENOSPC at the limit, and nothing lands on the host's disk. A build's
result is copied back normalised: no setuid bit, no second name, no fifo, the owner's."""

from __future__ import annotations

import asyncio
import os
import re
import stat
import subprocess
import tempfile
from pathlib import Path

import pytest
from cli_support import referee

from referee.bots import scratch
from referee.bots.build import ensure_built
from referee.bots.errors import BotStartError
from referee.bots.process import BotProcess
from referee.bots.spec import load_spec

pytestmark = [pytest.mark.slow, pytest.mark.sandbox,
              pytest.mark.skipif(os.geteuid() != 0, reason="the kernel bound needs root")]

LIMIT_MB = 8
MIB = 1024 * 1024
ATTACKS = ["unlinked", "deep", "sparse", "small", "hardlinks"]

# Writes into the folders it is given, round robin, by one of ATTACKS, until a write fails or it
# has made 8 times the limit; then prints what it made and why it stopped, and (as a bot) holds
# every file open until it is stopped, or (as a build) exits 1.
FILL = r'''import errno, os, signal, sys, time

signal.signal(signal.SIGXFSZ, signal.SIG_IGN)     # RLIMIT_FSIZE: EFBIG, not death
mode, role, limit = sys.argv[1], sys.argv[2], int(sys.argv[3]) * 1024 * 1024
if role == "bot":
    places = ["/tmp", os.path.dirname(os.environ["REFEREE_BOT_ADDRESS"][len("unix:"):])]
else:
    places = [".", "/tmp"]
block = bytes(range(256)) * 4096                  # 1 MiB that no file system stores as a hole
held, data, entries, why = [], 0, 0, "NONE"
roots = [os.open(place, os.O_RDONLY | os.O_DIRECTORY) for place in places]
try:
    if mode == "hardlinks":
        first = os.path.join(places[0], "linked")
        with open(first, "wb") as out:
            out.write(block)
        data, entries = len(block), 1
    i = 0
    while data <= 8 * limit and entries <= 8 * limit // 4096:
        i += 1
        where = roots[i % len(roots)]
        name = f"f{i}"
        if mode == "unlinked":
            fd = os.open(name, os.O_WRONLY | os.O_CREAT, 0o600, dir_fd=where)
            os.unlink(name, dir_fd=where)
            held.append(fd)
            for _ in range(4):
                try:
                    data += os.write(fd, block)
                except OSError as exc:
                    if exc.errno != errno.EFBIG:
                        raise
                    break
        elif mode == "deep":
            os.mkdir("d" * 200, dir_fd=where)     # 20 levels pass PATH_MAX
            entries += 1
            roots[i % len(roots)] = where = os.open("d" * 200, os.O_RDONLY, dir_fd=where)
            fd = os.open(name, os.O_WRONLY | os.O_CREAT, 0o600, dir_fd=where)
            entries += 1
            data += os.write(fd, block)
            os.close(fd)
        elif mode == "sparse":
            fd = os.open(name, os.O_WRONLY | os.O_CREAT, 0o600, dir_fd=where)
            entries += 1
            os.lseek(fd, 4 * 1024 * 1024, os.SEEK_SET)      # a 4 MiB hole, then data
            data += os.write(fd, block[:256 * 1024])
            os.close(fd)
        elif mode == "small":
            fd = os.open(name, os.O_WRONLY | os.O_CREAT, 0o600, dir_fd=where)
            entries += 1
            data += os.write(fd, b"x")
            os.close(fd)
        elif mode == "hardlinks":
            os.link(first, os.path.join(places[0], f"link{i}"))
            entries += 1
except OSError as exc:
    why = errno.errorcode.get(exc.errno, str(exc.errno))
print(f"STOPPED why={why} data={data} entries={entries}", flush=True)
if role == "bot":
    while True:
        time.sleep(60)
sys.exit(1)
'''


def _stopped(text: str) -> tuple[str, int, int]:
    """(why, data, entries) from FILL's last report in `text`."""
    found = re.findall(r"STOPPED why=(\w+) data=(\d+) entries=(\d+)", text)
    assert found, text[-2000:]
    why, data, entries = found[-1]
    return why, int(data), int(entries)


def _tmp_mounts(below: Path) -> list[str]:
    """Mount points of tmpfs mounts below `below` (this test's own temporary folder)."""
    with open("/proc/self/mountinfo") as info:
        return [line.split()[4] for line in info
                if " - tmpfs " in line and line.split()[4].startswith(f"{below}/")]


def _bot(folder: Path, attack: str) -> Path:
    folder.mkdir()
    (folder / "fill.py").write_text(FILL)
    (folder / "bot.toml").write_text(f'name = "filler"\ncommand = ["{{python}}", "fill.py", '
                                     f'"{attack}", "bot", "{LIMIT_MB}"]\n')
    return folder / "bot.toml"


@pytest.mark.parametrize("attack", ATTACKS)
def test_a_bot_gets_enospc_at_its_write_limit_and_nothing_reaches_the_disk(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, attack: str) -> None:
    """A confined bot writing by `attack` into its /tmp and its socket folder under a limit
    of 8 MiB gets ENOSPC having made at most 8 MiB (and one entry per 4 KiB of it); while it
    holds all it made, its instance folder is a tmpfs of 8 MiB (its bytes are not on the
    host's disk) no fuller than that; its log says in one line that it ran out of its write
    limit; once stopped, its folder and its mount are gone."""
    monkeypatch.setenv("REFEREE_WRITE_MAX_MB", str(LIMIT_MB))
    own_tmp = tmp_path / "tmp"
    own_tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(own_tmp))
    spec = load_spec(_bot(tmp_path / "bot", attack))

    async def run() -> tuple[str, os.statvfs_result, bool, Path]:
        bot = BotProcess(spec, sandbox=True)
        await bot.start()
        assert bot._dir is not None and bot.proc is not None
        folder = bot._dir
        for _ in range(3000):   # until it reports (or ends): it is not killed any more
            if "STOPPED" in bot.log.since(0) or not bot.alive:
                break
            await asyncio.sleep(0.1)
        held = os.statvfs(folder)
        mounted = str(folder) in _tmp_mounts(own_tmp)
        await bot.stop()
        return bot.log.since(0), held, mounted, folder

    text, held, mounted, folder = asyncio.run(run())
    why, data, entries = _stopped(text)
    assert why == "ENOSPC", text[-2000:]
    assert data <= LIMIT_MB * MIB and entries <= scratch.inodes_for(LIMIT_MB * MIB), text
    assert mounted and held.f_blocks * held.f_frsize == LIMIT_MB * MIB
    assert (held.f_blocks - held.f_bfree) * held.f_frsize <= LIMIT_MB * MIB
    assert f"the bot ran out of its write limit of {LIMIT_MB} MiB" in text, text[-2000:]
    assert text.count("ran out of its write limit") == 1, text[-2000:]
    assert not folder.exists() and not _tmp_mounts(own_tmp)
    assert list(own_tmp.iterdir()) == []


def _build(folder: Path, attack: str) -> Path:
    folder.mkdir()
    (folder / "fill.py").write_text(FILL)
    (folder / "main.py").write_text("print('hello')\n")
    (folder / "bot.toml").write_text(f'name = "filler"\ncommand = ["{{python}}", "main.py"]\n'
                                     f'build = ["{{python}}", "fill.py", "{attack}", "build", '
                                     f'"{LIMIT_MB}"]\n')
    return folder / "bot.toml"


def _tree(folder: Path) -> dict[str, tuple[int, int, int]]:
    """Each path below `folder`: (mode, size, links)."""
    found = {}
    for path in folder.rglob("*"):
        st = os.lstat(path)
        found[str(path.relative_to(folder))] = (st.st_mode, st.st_size, st.st_nlink)
    return found


@pytest.mark.parametrize("attack", ATTACKS)
def test_a_build_gets_enospc_at_its_write_limit_and_leaves_its_folder_as_it_was(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, attack: str) -> None:
    """A build writing by `attack` into its folder and its /tmp under a limit of 8 MiB gets
    ENOSPC having made at most 8 MiB (and one entry per 4 KiB); it fails saying in one line
    that it ran out of its write limit of 8 MiB; the bot's folder is as it was before (the
    build wrote into a copy of it in a tmpfs), and no scratch folder or mount is left."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    own_tmp = tmp_path / "tmp"
    own_tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(own_tmp))
    spec_file = _build(tmp_path / "bot", attack)
    before = _tree(spec_file.parent)
    lines: list[str] = []
    with pytest.raises(BotStartError) as failed:
        ensure_built(load_spec(spec_file), sandbox=True, write_max_mb=LIMIT_MB,
                     on_line=lambda _name, line: lines.append(line))
    why, data, entries = _stopped("\n".join(lines))
    assert why == "ENOSPC", lines[-20:]
    _size, count = scratch.measure(spec_file.parent)
    assert data <= LIMIT_MB * MIB, lines[-5:]
    assert entries <= count + scratch.inodes_for(LIMIT_MB * MIB) + 16, lines[-5:]
    assert (f"build failed: it ran out of its write limit of {LIMIT_MB} MiB"
            in str(failed.value)), str(failed.value)
    assert _tree(spec_file.parent) == before
    assert list(own_tmp.iterdir()) == [] and not _tmp_mounts(own_tmp)


LEAVE_ODD_FILES = r'''import os, stat
os.makedirs("out/shared", exist_ok=True)
with open("out/tool", "w") as tool:
    tool.write("#!/bin/sh\necho hi\n")
os.chmod("out/tool", 0o4755)                      # setuid
os.chmod("out/shared", 0o3777)                    # setgid and sticky, writable by all
os.link("out/tool", "out/tool-again")             # a second name
os.link("main.py", "main-again.py")               # a second name of a file it was given
os.chmod("main.py", 0o4755)                       # and setuid
os.mkfifo("out/pipe")
os.symlink("tool", "out/link")
print("left them")
'''


def test_a_builds_result_is_normalised(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What a passed build leaves in the bot's folder (owned by uid 4321, not the referee's)
    has no setuid, setgid or sticky bit, no file with a second name, no fifo, and is all owned
    by the folder's owner; symlinks stay."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    folder = tmp_path / "bot"
    folder.mkdir()
    (folder / "odd.py").write_text(LEAVE_ODD_FILES)
    (folder / "main.py").write_text("print('hello')\n")
    (folder / "bot.toml").write_text('name = "odd"\ncommand = ["{python}", "main.py"]\n'
                                     'build = ["{python}", "odd.py"]\n')
    for path in (folder, *folder.iterdir()):
        os.chown(path, 4321, 4321)
    assert ensure_built(load_spec(folder / "bot.toml"), sandbox=True) is True
    made = {str(path.relative_to(folder)): os.lstat(path) for path in folder.rglob("*")}
    assert {"out/tool", "out/tool-again", "main-again.py", "out/link"} <= set(made), made
    for name, st in made.items():
        assert stat.S_IMODE(st.st_mode) & 0o7000 == 0, (name, oct(st.st_mode))
        assert stat.S_ISDIR(st.st_mode) or st.st_nlink == 1, (name, st.st_nlink)
        assert stat.S_ISDIR(st.st_mode) or stat.S_ISREG(st.st_mode) or \
            stat.S_ISLNK(st.st_mode), (name, oct(st.st_mode))
        assert (st.st_uid, st.st_gid) == (4321, 4321), (name, st.st_uid)
    assert os.readlink(folder / "out/link") == "tool"
    assert (folder / "out/tool-again").read_text() == (folder / "out/tool").read_text()


# A build that passes, leaving in its folder what would take more than its limit once copied
# back to the host's disk: one file under many names, or files that are mostly holes.
GROWS_ON_THE_WAY_BACK = r'''import os, sys
block = bytes(range(256)) * 4096 * 3                # 3 MiB
if sys.argv[1] == "hardlinks":
    with open("big", "wb") as out:
        out.write(block)
    for i in range(8):
        os.link("big", f"big{i}")
else:
    for i in range(8):
        with open(f"holes{i}", "wb") as out:
            out.seek(7 * 1024 * 1024)
            out.write(b"x")
print("done")
'''


@pytest.mark.parametrize("kind", ["hardlinks", "sparse"])
def test_a_build_whose_result_would_grow_on_the_way_back_fails(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    """A build under a limit of 8 MiB that leaves a 3 MiB file under 9 names, or 8 files of
    7 MiB that are holes but for a byte, passes by itself (its tmpfs holds them), but copied
    back each name and each hole would take its full size on the host's disk: it fails with
    its write-limit line, and the bot's folder is as it was."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    folder = tmp_path / "bot"
    folder.mkdir()
    (folder / "grow.py").write_text(GROWS_ON_THE_WAY_BACK)
    (folder / "bot.toml").write_text(f'name = "grow"\ncommand = ["{{python}}", "grow.py"]\n'
                                     f'build = ["{{python}}", "grow.py", "{kind}"]\n')
    before = _tree(folder)
    with pytest.raises(BotStartError) as failed:
        ensure_built(load_spec(folder / "bot.toml"), sandbox=True, write_max_mb=LIMIT_MB)
    assert (f"build failed: it ran out of its write limit of {LIMIT_MB} MiB"
            in str(failed.value)), str(failed.value)
    assert _tree(folder) == before


DEEP_AND_DONE = r'''import os
fd = os.open(".", os.O_RDONLY)
for _ in range(25):                                  # 25 * 201 bytes: past PATH_MAX
    os.mkdir("d" * 200, dir_fd=fd)
    fd = os.open("d" * 200, os.O_RDONLY, dir_fd=fd)
os.close(os.open("hidden", os.O_WRONLY | os.O_CREAT, 0o600, dir_fd=fd))
print("done")
'''


def test_a_build_that_leaves_a_path_past_path_max_fails(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A passed build that leaves a file below a path longer than the kernel can name (which
    every walk by path would skip) fails saying so, and the bot's folder is as it was."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    folder = tmp_path / "bot"
    folder.mkdir()
    (folder / "deep.py").write_text(DEEP_AND_DONE)
    (folder / "bot.toml").write_text('name = "deep"\ncommand = ["{python}", "deep.py"]\n'
                                     'build = ["{python}", "deep.py"]\n')
    before = _tree(folder)
    with pytest.raises(BotStartError) as failed:
        ensure_built(load_spec(folder / "bot.toml"), sandbox=True, write_max_mb=LIMIT_MB)
    assert "build failed: the build left a path longer than 4095 bytes" in str(failed.value), \
        str(failed.value)
    assert _tree(folder) == before


def test_releasing_a_scratch_folder_unmounts_it_and_never_enters_another_mount(
        tmp_path: Path) -> None:
    """`release_instance_dir` on the folder a killed run left (a tmpfs on it, another below
    it, and a bind of a folder of the host's in it, and a path past PATH_MAX) unmounts them
    all and removes the folder, leaving the host's folder whole; on a symbolic link to a
    mount it removes the link and leaves the mount."""
    host = tmp_path / "host"
    host.mkdir()
    (host / "keep").write_text("precious\n")
    left = tmp_path / "referee-left"
    left.mkdir()
    assert scratch.mount_bounded(left, LIMIT_MB * MIB)
    (left / "tmp" / "inner").mkdir(parents=True)
    assert scratch.mount_bounded(left / "tmp" / "inner", MIB)
    (left / "shown").mkdir()
    subprocess.run(["mount", "--bind", str(host), str(left / "shown")], check=True)
    fd = os.open(left / "tmp", os.O_RDONLY)
    for _ in range(25):
        os.mkdir("d" * 200, dir_fd=fd)
        fd = os.open("d" * 200, os.O_RDONLY, dir_fd=fd)
    os.close(fd)
    other = tmp_path / "other"
    other.mkdir()
    assert scratch.mount_bounded(other, MIB)
    (other / "kept").write_text("kept\n")
    link = tmp_path / "referee-link"
    link.symlink_to(other)
    plain = tmp_path / "referee-plain"   # no mount: a folder a fallback run wrote in
    plain.mkdir()
    fd = os.open(plain, os.O_RDONLY)
    for _ in range(25):
        os.mkdir("d" * 200, dir_fd=fd)
        fd = os.open("d" * 200, os.O_RDONLY, dir_fd=fd)
    os.close(os.open("hidden", os.O_WRONLY | os.O_CREAT, 0o600, dir_fd=fd))
    os.close(fd)
    try:
        for folder in (left, link, plain):
            scratch.release_instance_dir(folder)
        assert not left.exists() and not link.is_symlink() and not plain.exists()
        assert (host / "keep").read_text() == "precious\n"
        assert os.path.ismount(other) and (other / "kept").read_text() == "kept\n"
        assert not [point for point in _mount_points() if point.startswith(str(left))]
    finally:
        scratch.release_instance_dir(other)
    assert not os.path.ismount(other)


def _mount_points() -> list[str]:
    with open("/proc/self/mountinfo") as info:
        return [line.split()[4] for line in info]


# A bot that fills its /tmp with many small files as it starts, then ends on the error.
FILLS_AND_DIES = r'''import os
for i in range(100000):
    with open(f"/tmp/f{i}", "wb") as out:
        out.write(b"x" * 4096)
'''


def test_referee_check_says_in_one_line_that_the_bot_ran_out_of_its_write_limit(
        tmp_path: Path) -> None:
    """`referee check --write-limit-mb 8` on a bot that fills its /tmp as it starts and dies of
    it: the check's FAIL line for its start-up says it ran out of its write limit of 8 MiB."""
    folder = tmp_path / "bot"
    folder.mkdir()
    (folder / "fill.py").write_text(FILLS_AND_DIES)
    (folder / "bot.toml").write_text('name = "filler"\ncommand = ["{python}", "fill.py"]\n')
    done = referee("check", folder / "bot.toml", "--write-limit-mb", str(LIMIT_MB),
                   check=False, timeout=600)
    failed = [line for line in done.stdout.splitlines() if line.startswith("FAIL")]
    assert failed and f"ran out of its write limit of {LIMIT_MB} MiB" in failed[0], done.stdout
    assert "No space left on device" in failed[0], done.stdout


READS_ITS_LINK = r'''import sys
try:
    print("READ", open("linked").read().strip())
except OSError as exc:
    print("DENIED", exc.errno)
'''


def test_a_file_with_a_second_name_outside_stays_as_unreadable_to_the_build(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file of the bot's folder that is also a root-only file elsewhere (a hard link): the
    build, copying the folder, does not get to read it, and it stays as it was, both names."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    secret = tmp_path / "secret"
    secret.write_text("hunter2\n")
    secret.chmod(0o600)
    folder = tmp_path / "bot"
    folder.mkdir()
    os.link(secret, folder / "linked")
    (folder / "read.py").write_text(READS_ITS_LINK)
    (folder / "bot.toml").write_text('name = "reader"\ncommand = ["{python}", "read.py"]\n'
                                     'build = ["{python}", "read.py"]\n')
    lines: list[str] = []
    assert ensure_built(load_spec(folder / "bot.toml"), sandbox=True,
                        on_line=lambda _name, line: lines.append(line)) is True
    assert any(line.startswith("DENIED") for line in lines), lines
    assert os.stat(secret).st_nlink == 2 and secret.read_text() == "hunter2\n"
    assert stat.S_IMODE(os.stat(secret).st_mode) == 0o600 and os.stat(secret).st_uid == 0
