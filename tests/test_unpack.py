"""The upload unpacker against real hostile archives made here: each is refused with its one
line, and nothing is left behind, neither at the destination nor anywhere beside it."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import stat
import struct
import tarfile
import zipfile
from pathlib import Path

import pytest

from referee.bots.spec import load_spec
from referee.server.shared.clubfolder import ClubFolder
from referee.server.unpack import UnpackedBot, UploadLimits, UploadRefused, unpack_upload

ROOT = Path(__file__).resolve().parent.parent
SPEC = b'name = "alice"\ncommand = ["{python}", "main.py"]\n'
MAIN = (ROOT / "sample_bots" / "random" / "main.py").read_bytes()
SMALL = UploadLimits(upload_max_bytes=1 << 20, unpacked_max_bytes=256 * 1024, max_files=50)


def snapshot(root: Path) -> set[str]:
    """Every path below `root` (links not followed)."""
    return {str(p.relative_to(root)) for p in root.rglob("*")}


@pytest.fixture
def place(tmp_path: Path):
    """(archive path, dest, the folder around both) with a marker file beside them."""
    site = tmp_path / "site"
    uploads = ClubFolder(site).bot_uploads("alice") / "1"
    uploads.mkdir(parents=True)
    (site / "precious.txt").write_text("keep me")
    return site, uploads / "archive", uploads / "bot"


def add_file(tar: tarfile.TarFile, name: str, data: bytes, mode: int = 0o644) -> None:
    info = tarfile.TarInfo(name)
    info.size, info.mode = len(data), mode
    tar.addfile(info, io.BytesIO(data))


def add_entry(tar: tarfile.TarFile, name: str, kind: bytes, linkname: str = "") -> None:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, linkname
    tar.addfile(info)


def make_tar(path: Path, entries, mode: str = "w:gz") -> Path:
    with tarfile.open(path, mode) as tar:
        for entry in entries:
            entry(tar)
    return path


def bot_entries(prefix: str = "") -> list:
    return [lambda t: add_file(t, prefix + "bot.toml", SPEC),
            lambda t: add_file(t, prefix + "main.py", MAIN)]


def refused(place, archive_bytes_or_path, limits=SMALL) -> str:
    """Unpack, expecting a refusal; check nothing was left; return the line."""
    site, archive, dest = place
    data = archive_bytes_or_path
    archive.write_bytes(data if isinstance(data, bytes) else data.read_bytes())
    before = snapshot(site)
    with pytest.raises(UploadRefused) as caught:
        unpack_upload(archive, dest, limits)
    assert snapshot(site) == before, "a refused upload left files behind"
    assert not dest.exists()
    assert (site / "precious.txt").read_text() == "keep me"
    line = str(caught.value)
    assert "\n" not in line and line
    return line


# ------------------------------------------------------------------------- accepted uploads

def test_a_zip_of_a_bot_folder_unpacks_and_its_spec_loads(place) -> None:
    site, archive, dest = place
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zipped:
        zipped.writestr("bot.toml", SPEC)
        zipped.writestr("main.py", MAIN)
        zipped.writestr("lib/helpers.py", b"X = 1\n")
    bot = unpack_upload(archive, dest, SMALL)
    assert bot == UnpackedBot(dest, "bot.toml", "folder", "alice", 3, len(SPEC) + len(MAIN) + 6)
    assert (dest / "lib" / "helpers.py").read_bytes() == b"X = 1\n"
    assert load_spec(dest / bot.spec).workdir == dest.resolve()
    assert sorted(p.name for p in dest.parent.iterdir()) == ["archive", "bot"]   # no temp left


def test_a_tar_gz_of_the_folder_itself_is_looked_into(place) -> None:
    site, archive, dest = place
    make_tar(archive, [lambda t: add_entry(t, "mybot", tarfile.DIRTYPE),
                       *bot_entries("mybot/"),
                       lambda t: add_entry(t, "mybot/same.py", tarfile.LNKTYPE, "mybot/main.py"),
                       lambda t: add_entry(t, "mybot/lib", tarfile.SYMTYPE, "."),
                       lambda t: add_file(t, "mybot/run.sh", b"#!/bin/sh\n", 0o4755)])
    bot = unpack_upload(archive, dest, SMALL)
    assert bot.spec == "mybot/bot.toml" and bot.kind == "folder"
    assert (dest / "mybot" / "same.py").read_bytes() == MAIN        # a hard link is a copy
    assert os.readlink(dest / "mybot" / "lib") == "."                # a link inside stays
    mode = (dest / "mybot" / "run.sh").stat().st_mode
    assert mode & 0o111 and not mode & stat.S_ISUID                 # no setuid bit kept


def test_an_image_archive_is_stored_as_it_is_with_a_spec(place, tmp_path: Path) -> None:
    site, archive, dest = place
    config = "a" * 64
    manifest = json.dumps([{"Config": f"{config}.json", "RepoTags": ["alice:1"],
                            "Layers": ["layer/layer.tar"]}]).encode()
    make_tar(archive, [lambda t: add_file(t, "manifest.json", manifest),
                       lambda t: add_file(t, f"{config}.json", b"{}"),
                       lambda t: add_file(t, "layer/layer.tar", b"\0" * 1024)], mode="w")
    bot = unpack_upload(archive, dest, SMALL, name="alice-bot")
    assert (bot.kind, bot.spec, bot.name) == ("image", "bot.toml", "alice-bot")
    assert (dest / "archive.tar").read_bytes() == archive.read_bytes()
    spec = load_spec(dest / "bot.toml")
    assert spec.image_archive == (dest / "archive.tar").resolve()


# ------------------------------------------------------------------------- hostile uploads

def test_a_path_out_is_refused(place, tmp_path: Path) -> None:
    archive = make_tar(tmp_path / "a.tgz", [*bot_entries(),
                                             lambda t: add_file(t, "../../../precious.txt",
                                                                b"owned")])
    assert "leads out of the folder ('..')" in refused(place, archive)
    with zipfile.ZipFile(tmp_path / "a.zip", "w") as zipped:
        zipped.writestr("bot.toml", SPEC)
        zipped.writestr("sub/../../escape.txt", b"owned")
    assert "'sub/../../escape.txt' leads out of the folder" in refused(place, tmp_path / "a.zip")


def test_an_absolute_path_is_refused(place, tmp_path: Path) -> None:
    target = tmp_path / "absolute.txt"
    archive = make_tar(tmp_path / "a.tgz", [*bot_entries(),
                                             lambda t: add_file(t, str(target), b"owned")])
    assert "has an absolute path" in refused(place, archive)
    assert not target.exists()


def test_a_link_out_is_refused(place, tmp_path: Path) -> None:
    outside = make_tar(tmp_path / "a.tgz",
                       [*bot_entries(), lambda t: add_entry(t, "up", tarfile.SYMTYPE, "../..")])
    assert "'up' is a link that leads out of the folder" in refused(place, outside)
    absolute = make_tar(tmp_path / "b.tgz",
                        [*bot_entries(), lambda t: add_entry(t, "etc", tarfile.SYMTYPE, "/etc")])
    assert "'etc' is a link to an absolute path" in refused(place, absolute)
    # A link to the top, then one through it: each looks inside alone, but `top/..` is out.
    chained = make_tar(tmp_path / "c.tgz", [*bot_entries(),
                                             lambda t: add_entry(t, "top", tarfile.SYMTYPE, "."),
                                             lambda t: add_entry(t, "out", tarfile.SYMTYPE,
                                                                 "top/..")])
    assert "'out' is a link that leads out of the folder" in refused(place, chained)
    # Writing through a link: the file is refused, nothing lands where the link points.
    through = make_tar(tmp_path / "d.tgz", [*bot_entries(),
                                             lambda t: add_entry(t, "sub", tarfile.SYMTYPE, "."),
                                             lambda t: add_file(t, "sub/x.txt", b"x")])
    refused(place, through)
    with zipfile.ZipFile(tmp_path / "e.zip", "w") as zipped:
        zipped.writestr("bot.toml", SPEC)
        link = zipfile.ZipInfo("escape")
        link.external_attr = (stat.S_IFLNK | 0o777) << 16
        zipped.writestr(link, "../../../")
    assert "'escape' is a link that leads out of the folder" in refused(place, tmp_path / "e.zip")


def test_a_hard_link_out_is_refused(place, tmp_path: Path) -> None:
    archive = make_tar(tmp_path / "a.tgz", [*bot_entries(),
                                             lambda t: add_entry(t, "passwd", tarfile.LNKTYPE,
                                                                 "/etc/passwd")])
    assert "'passwd' is a hard link that leads out of the folder" in refused(place, archive)
    upward = make_tar(tmp_path / "b.tgz", [*bot_entries(),
                                            lambda t: add_entry(t, "p", tarfile.LNKTYPE,
                                                                "../precious.txt")])
    assert "hard link that leads out" in refused(place, upward)
    missing = make_tar(tmp_path / "c.tgz", [*bot_entries(),
                                             lambda t: add_entry(t, "p", tarfile.LNKTYPE,
                                                                 "nothing")])
    assert "which is no earlier file of the archive" in refused(place, missing)


def test_device_files_and_fifos_are_refused(place, tmp_path: Path) -> None:
    for kind, word in ((tarfile.CHRTYPE, "a device file"), (tarfile.BLKTYPE, "a device file"),
                       (tarfile.FIFOTYPE, "a fifo")):
        archive = make_tar(tmp_path / "a.tgz", [*bot_entries(),
                                                 lambda t, k=kind: add_entry(t, "dev", k)])
        assert f"entry 'dev' is {word}" in refused(place, archive)
    with zipfile.ZipFile(tmp_path / "b.zip", "w") as zipped:
        zipped.writestr("bot.toml", SPEC)
        fifo = zipfile.ZipInfo("pipe")
        fifo.external_attr = (stat.S_IFIFO | 0o644) << 16
        zipped.writestr(fifo, b"")
    assert "'pipe' is a device file or fifo" in refused(place, tmp_path / "b.zip")


def test_a_bomb_stops_at_the_unpacked_cap(place, tmp_path: Path) -> None:
    big = b"\0" * (8 << 20)    # 8 MiB of zeros: a few kB packed, 32 times the cap
    archive = make_tar(tmp_path / "a.tgz", [*bot_entries(), lambda t: add_file(t, "z", big)])
    assert archive.stat().st_size < 64 * 1024
    assert "'z' declares 8388608 bytes, more than the limit of 1048576" in refused(place, archive)
    half = big[: 1 << 19]   # below the per-entry limit, but twice the unpacked cap
    smaller = make_tar(tmp_path / "b.tgz", [*bot_entries(), lambda t: add_file(t, "z", half)])
    assert "more than the limit of 262144" in refused(place, smaller)
    with zipfile.ZipFile(tmp_path / "b.zip", "w", zipfile.ZIP_DEFLATED) as zipped:
        zipped.writestr("bot.toml", SPEC)
        for n in range(4):    # each below the cap, together above it
            zipped.writestr(f"z{n}", b"\0" * (100 * 1024))
    assert "unpack to more than 262144 bytes" in refused(place, tmp_path / "b.zip")


def test_a_zip_that_understates_its_sizes_stops_at_the_cap(place, tmp_path: Path) -> None:
    """The declared sizes are lies: 2 MiB of zeros declared as 1,000 bytes in both headers."""
    path = tmp_path / "liar.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zipped:
        zipped.writestr("bot.toml", SPEC)
        zipped.writestr("z", b"\0" * (2 << 20))
    data = bytearray(path.read_bytes())
    real = struct.pack("<I", 2 << 20)
    assert data.count(real) == 2                 # local header and central directory
    path.write_bytes(bytes(data).replace(real, struct.pack("<I", 1000)))
    assert "damaged (Bad CRC-32 for file 'z')" in refused(place, path)


def test_a_huge_declared_size_is_refused_before_reading(place, tmp_path: Path) -> None:
    path = tmp_path / "huge.tar"
    with tarfile.open(path, "w") as tar:
        add_file(tar, "bot.toml", SPEC)
        info = tarfile.TarInfo("huge.bin")
        info.size = 10**12                      # a terabyte declared, nothing behind it
        tar.fileobj.write(info.tobuf(tarfile.GNU_FORMAT))
    assert "'huge.bin' declares 1000000000000 bytes" in refused(place, path)
    with zipfile.ZipFile(tmp_path / "b.zip", "w") as zipped:
        zipped.writestr("bot.toml", SPEC)
        zipped.writestr("huge.bin", b"x" * 100)
    data = bytearray((tmp_path / "b.zip").read_bytes())
    data = bytes(data).replace(struct.pack("<I", 100), struct.pack("<I", 0xFFFFFF00))
    (tmp_path / "b.zip").write_bytes(data)
    assert "'huge.bin' declares 4294967040 bytes" in refused(place, tmp_path / "b.zip")


def test_a_file_that_is_no_archive_is_refused(place, tmp_path: Path) -> None:
    assert "not a zip or tar archive" in refused(place, b"print('hello')\n" * 40)
    assert "not a zip or tar archive" in refused(place, b"")
    cut = make_tar(tmp_path / "a.tgz", [*bot_entries(), lambda t: add_file(t, "x", os.urandom(
        40000))]).read_bytes()
    assert "damaged or cut short" in refused(place, cut[: len(cut) // 2])
    assert "damaged" in refused(place, b"PK\x03\x04" + b"\0" * 100)


def test_a_spec_that_points_outside_is_refused(place, tmp_path: Path) -> None:
    for key, spec, word in (
        ("workdir", b'name = "a"\ncommand = ["{python}", "main.py"]\nworkdir = "../.."\n',
         "a folder inside the spec's folder"),
        ("command", b'name = "a"\ncommand = ["../../../bin/sh"]\n', "a program inside"),
        # An absolute program through a link an earlier version left: never the runtime.
        ("command", b'name = "a"\ncommand = ["/srv/club/uploads/a/1/bot/evil/bin/sh"]\n',
         "a program inside the bot's folder or in the system's runtime"),
        ("build", b'name = "a"\ncommand = ["{python}", "main.py"]\nbuild = ["/etc/x"]\n',
         "a program inside the bot's folder or in the system's runtime"),
        ("image_archive", b'name = "a"\nimage_archive = "../archive"\n', "a file inside"),
        ("address", b'name = "a"\naddress = "10.0.0.1:50051"\n', "runs on the server"),
        ("sandbox", b'name = "a"\ncommand = ["{python}", "main.py"]\nsandbox = "none"\n',
         "always runs in the sandbox"),
    ):
        archive = make_tar(tmp_path / "a.tgz", [lambda t, s=spec: add_file(t, "bot.toml", s),
                                                 lambda t: add_file(t, "main.py", MAIN)])
        line = refused(place, archive)
        assert f"bot.toml: key '{key}'" in line and word in line, line
        assert str(place[0]) not in line      # neither the upload's folder nor the server's


def test_a_missing_or_ambiguous_spec_is_refused(place, tmp_path: Path) -> None:
    none = make_tar(tmp_path / "a.tgz", [lambda t: add_file(t, "main.py", MAIN)])
    assert "no bot spec at the top" in refused(place, none)
    two = make_tar(tmp_path / "b.tgz", [lambda t: add_file(t, "a.toml", SPEC),
                                         lambda t: add_file(t, "b.toml", SPEC)])
    assert "2 bot specs at the top of the archive (a.toml, b.toml)" in refused(place, two)
    # Thousands of TOML files are not each read to find the spec: refused unread.
    many = make_tar(tmp_path / "m.tgz", [lambda t, n=n: add_file(t, f"s{n:02}.toml", SPEC)
                                         for n in range(40)])
    assert "40 bot specs at the top of the archive (s00.toml, s01.toml" in refused(place, many)
    broken = make_tar(tmp_path / "c.tgz", [lambda t: add_file(t, "bot.toml", b"name = \n")])
    assert refused(place, broken).startswith("bot.toml:")


def test_too_many_files_are_refused(place, tmp_path: Path) -> None:
    many = [lambda t, n=n: add_file(t, f"f{n}", b"") for n in range(60)]
    assert "more than 50 entries" in refused(place, make_tar(tmp_path / "a.tgz",
                                                             [*bot_entries(), *many]))
    with zipfile.ZipFile(tmp_path / "b.zip", "w") as zipped:
        for n in range(60):
            zipped.writestr(f"f{n}", b"")
    assert "60 entries, more than the limit of 50" in refused(place, tmp_path / "b.zip")


def test_a_too_big_upload_and_a_duplicate_entry_are_refused(place, tmp_path: Path) -> None:
    assert "more than the limit of 1048576" in refused(place, b"PK\x03\x04" + b"\0" * (2 << 20))
    twice = make_tar(tmp_path / "a.tgz", [*bot_entries(), lambda t: add_file(t, "main.py", b"")])
    assert "'main.py' appears twice" in refused(place, twice)


def test_an_image_archive_with_two_images_is_refused(place, tmp_path: Path) -> None:
    manifest = json.dumps([{"Config": "a" * 64 + ".json"}, {"Config": "b" * 64 + ".json"}])
    archive = make_tar(tmp_path / "i.tar", [lambda t: add_file(t, "manifest.json",
                                                               manifest.encode())], mode="w")
    assert "must hold exactly one image" in refused(place, archive)


GUIDE_SPEC = b'name = "mine"\ncommand = ["{python}", "main.py"]\nworkdir = "mybot"\n'


def test_the_guides_layout_is_taken_as_it_is(place, tmp_path: Path) -> None:
    """The spec beside the folder its workdir names (mybot.toml, mybot/), at the top or in one
    folder holding both, with other TOML files that are no spec: nothing is rewritten."""
    for name, prefix, extra in (("top.tgz", "", []),
                                ("inside.tgz", "project/", []),
                                ("pyproject.tgz", "",
                                 [lambda t: add_file(t, "pyproject.toml", b"[project]\n")])):
        archive = make_tar(tmp_path / name, [
            lambda t, p=prefix: add_file(t, p + "mybot.toml", GUIDE_SPEC),
            lambda t, p=prefix: add_file(t, p + "mybot/main.py", MAIN), *extra])
        site, upload, dest = place
        upload.write_bytes(archive.read_bytes())
        bot = unpack_upload(upload, dest, SMALL)
        assert bot.spec == prefix + "mybot.toml" and bot.name == "mine"
        assert (dest / bot.spec).read_bytes() == GUIDE_SPEC
        assert load_spec(dest / bot.spec).workdir == (dest / prefix / "mybot").resolve()
        shutil.rmtree(dest)


def test_a_layout_refusal_names_the_fix_and_the_page(place, tmp_path: Path) -> None:
    """The three first tries the guides' layout used to meet, each refused with what to do."""
    folder_only = make_tar(tmp_path / "a.tgz", [lambda t: add_file(t, "mybot/main.py", MAIN)])
    line = refused(place, folder_only)
    assert "no bot spec in the archive, only the folder mybot/" in line
    assert "zip -r mybot.zip mybot.toml mybot" in line and "referee submit mybot.toml" in line
    copied_in = make_tar(tmp_path / "b.tgz", [lambda t: add_file(t, "mybot.toml", GUIDE_SPEC),
                                              lambda t: add_file(t, "main.py", MAIN)])
    line = refused(place, copied_in)
    assert line.startswith("mybot.toml: key 'workdir': expected an existing directory")
    assert "beside it, the folder its workdir names (mybot.toml with mybot/" in line
    line = refused(place, GUIDE_SPEC)   # the spec file itself
    assert "not a zip or tar archive: zip the spec with its folder" in line
    two = make_tar(tmp_path / "c.tgz", [lambda t: add_file(t, "mybot.toml", GUIDE_SPEC),
                                         lambda t: add_file(t, "other.toml", GUIDE_SPEC),
                                         lambda t: add_file(t, "mybot/main.py", MAIN)])
    lines = [refused(place, archive) for archive in (folder_only, copied_in, GUIDE_SPEC, two)]
    for line in lines:
        assert line.endswith('see docs/bots/submitting.md, "What to upload"'), line
    # The guide's table of these refusals quotes each as the server words it.
    doc = (ROOT / "docs" / "bots" / "submitting.md").read_text()
    quoted = re.findall(r"^\| `([^`]+)` \|", doc, re.M)
    assert len(quoted) == 4, quoted
    for words in quoted:
        assert any(words in line for line in lines), (words, lines)
