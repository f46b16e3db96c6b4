"""Unpacking an uploaded bot: every archive is treated as an attack.

`unpack_upload(archive, dest, limits)` turns one uploaded file into a bot folder at `dest`:

* a zip, or a tar (plain, gzip, bzip2 or xz), holding a bot folder with its spec: unpacked
  entry by entry, refusing absolute paths, `..`, links that lead out of the folder, device
  files and fifos, more than `max_files` entries and more than `unpacked_max_bytes` (counted
  while writing: a zip bomb stops at the cap; the sizes an archive declares are not trusted);
* a container image archive (`podman save` / `docker save`: a tar with `manifest.json` or an
  OCI `index.json` at the top): checked, stored as it is as `archive.tar`, with a spec
  `bot.toml` that names it (`image_archive = "archive.tar"`); the runtime loads it later.

The spec (`bot.toml`, or the one bot spec at the top, beside the folder its `workdir` names; a
single top folder is looked into) is read with the bot spec loader, so paths that point outside
the folder are refused there too.
Everything is written into a temporary folder beside `dest` and renamed to `dest` on success;
a refused upload leaves nothing. Each refusal is an `UploadRefused` with one line.
"""

from __future__ import annotations

import contextlib
import os
import posixpath
import re
import shutil
import stat
import tarfile
import tempfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from referee.bots.archive import ArchiveError, archive_image_id
from referee.bots.folder import open_to_bot
from referee.bots.spec import (
    LAYOUT_HELP,
    NAME_PATTERN,
    BotFilesTooLarge,
    BotSpec,
    BotSpecError,
    check_bot_files,
    load_spec,
    resolve_inside,
    specs_in,
)
from referee.errors import UserError
from referee.present.text import safe_line

CHUNK = 1 << 16
IMAGE_FILE = "archive.tar"
SPEC_FILE = "bot.toml"
JUNK = frozenset({"__MACOSX", ".DS_Store"})   # what desktop zip tools add at the top


class UploadRefused(UserError, ValueError):
    """An upload that cannot become a bot version; the message is one line saying why."""


@dataclass(frozen=True)
class UploadLimits:
    """Caps on one upload (the season file's upload_max_bytes, unpacked_max_bytes, max_files)."""

    upload_max_bytes: int = 50 * 1024 * 1024     # the file as uploaded (the web caps the body)
    unpacked_max_bytes: int = 200 * 1024 * 1024  # all files of a folder bot, as written
    max_files: int = 5000                        # entries (files, folders, links)


@dataclass(frozen=True)
class UnpackedBot:
    """A bot folder made from an upload."""

    folder: Path       # `dest`
    spec: str          # the spec's path relative to `folder`
    kind: str          # "folder" or "image"
    name: str          # the name in the spec
    files: int         # entries written (an image counts as its archive and its spec)
    size: int          # bytes written


def unpack_upload(archive: Path, dest: Path, limits: UploadLimits | None = None,
                  name: str = "bot") -> UnpackedBot:
    """Unpack the uploaded file `archive` into the new folder `dest` (which must not exist).

    `name` is the bot name written into the spec of an image archive. UploadRefused (one line)
    if the file is no archive, breaks a rule or a limit, or holds no usable spec; nothing is
    left behind then.
    """
    limits = limits or UploadLimits()
    if dest.exists():
        raise FileExistsError(f"{dest} exists already")
    try:
        size = archive.stat().st_size
    except OSError as exc:
        raise UploadRefused(f"cannot read the upload: {exc.strerror}") from None
    if size > limits.upload_max_bytes:
        raise UploadRefused(f"the upload is {size} bytes, more than the limit of "
                            f"{limits.upload_max_bytes}")
    kind = _kind(archive)
    dest.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{dest.name}-", dir=dest.parent))
    try:
        if kind == "zip":
            written = _Writer(work, limits)
            _unpack_zip(archive, written)
            found = _finish_folder(work, written)
        elif _is_image(archive, limits):
            found = _store_image(archive, work, name)
        else:
            written = _Writer(work, limits)
            _unpack_tar(archive, written)
            found = _finish_folder(work, written)
        # The sandbox runs the bot as another uid: it must read its folder, whatever the
        # umask (the folders above stay the server's alone).
        open_to_bot(work)
        os.rename(work, dest)
    except UploadRefused:
        shutil.rmtree(work, ignore_errors=True)
        raise
    except OSError as exc:   # a full disk, a name too long for the file system...
        shutil.rmtree(work, ignore_errors=True)
        raise UploadRefused(f"cannot unpack the upload: {exc.strerror or exc}") from None
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return UnpackedBot(dest, *found)


# ------------------------------------------------------------------------- what the file is

def _kind(archive: Path) -> str:
    """"zip" or "tar"; UploadRefused for anything else."""
    with archive.open("rb") as stream:
        head = stream.read(512)
    if head[:4] in (b"PK\x03\x04", b"PK\x05\x06"):
        return "zip"
    if head[:2] == b"\x1f\x8b" or head[:3] == b"BZh" or head[:6] == b"\xfd7zXZ\x00" \
            or head[257:262] == b"ustar":
        return "tar"
    raise UploadRefused(f"the upload is not a zip or tar archive: zip the spec with its folder "
                        f"(zip -r mybot.zip mybot.toml mybot; referee submit mybot.toml does it "
                        f"for you), or podman save -o for an image; see {LAYOUT_HELP}")


def _is_image(archive: Path, limits: UploadLimits) -> bool:
    """True for an image archive: manifest.json or index.json at the top and no spec there.
    Reads every header (and so the whole stream) once, refusing a hostile entry and sizes
    past the limits: an image's content up to the upload limit (it is stored, not unpacked),
    a folder's up to the unpacked limit."""
    top: set[str] = set()
    total = 0
    most = max(limits.unpacked_max_bytes, limits.upload_max_bytes)
    for entries, member in enumerate(_tar_members(archive), 1):
        if entries > limits.max_files:
            raise UploadRefused(f"the archive holds more than {limits.max_files} entries")
        name = _safe_name(member.name)
        _check_type(member, name)
        if member.size > most:   # before its data is read
            raise UploadRefused(f"entry {safe_line(member.name, limit=120)!r} declares "
                                f"{member.size} bytes, more than the limit of {most}")
        total += member.size
        top.add(name.split("/", 1)[0])
    image = bool(top & {"manifest.json", "index.json"}) and \
        not any(n.endswith(".toml") for n in top)
    cap = limits.upload_max_bytes if image else limits.unpacked_max_bytes
    if total > cap:
        raise UploadRefused(f"the archive's files add up to {total} bytes, more than the "
                            f"limit of {cap}")
    return image


def _tar_members(archive: Path) -> Iterator[tarfile.TarInfo]:
    """The members of a tar read as a stream (headers are parsed one at a time, so a tar of
    millions of entries is refused at the cap without holding them all)."""
    try:
        with tarfile.open(archive, "r|*") as tar:
            yield from tar
    except (tarfile.TarError, EOFError, OSError, ValueError) as exc:
        raise UploadRefused(f"the tar archive is damaged or cut short ({_reason(exc)})") from None


# ------------------------------------------------------------------------- names and types

def _safe_name(raw: str) -> str:
    """The entry's path, normalised ("a/./b/" -> "a/b"); UploadRefused for an absolute path,
    `..`, a NUL or a drive letter."""
    shown = safe_line(raw, limit=120)
    name = raw.replace("\\", "/")
    if "\0" in name:
        raise UploadRefused(f"entry {shown!r} has a NUL character in its name")
    if name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        raise UploadRefused(f"entry {shown!r} has an absolute path")
    parts = [part for part in name.split("/") if part not in ("", ".")]
    if ".." in parts:
        raise UploadRefused(f"entry {shown!r} leads out of the folder ('..')")
    return "/".join(parts)


def _check_type(member: tarfile.TarInfo, name: str) -> None:
    """UploadRefused for a device, a fifo, a sparse file or a link that leads out."""
    shown = safe_line(member.name, limit=120)
    if member.isdev():
        what = "a fifo" if member.isfifo() else "a device file"
        raise UploadRefused(f"entry {shown!r} is {what}; an upload holds files, folders and "
                            f"links inside it only")
    if member.issparse():
        raise UploadRefused(f"entry {shown!r} is a sparse file; pack it as an ordinary file")
    if member.issym():
        _link_target(name, member.linkname, shown)
    elif member.islnk():
        _hard_target(member.linkname, shown)
    elif not (member.isfile() or member.isdir()):
        raise UploadRefused(f"entry {shown!r} is of a type an upload may not hold")


def _link_target(name: str, target: str, shown: str) -> str:
    """A symbolic link's target if it stays inside the folder (judged on the path itself;
    `_finish_folder` checks again with every link followed)."""
    if not target or target.startswith("/") or "\0" in target:
        raise UploadRefused(f"entry {shown!r} is a link to an absolute path")
    inside = posixpath.normpath(posixpath.join(posixpath.dirname(name), target))
    if inside == ".." or inside.startswith("../"):
        raise UploadRefused(f"entry {shown!r} is a link that leads out of the folder")
    return target


def _hard_target(target: str, shown: str) -> str:
    """A hard link's target (an earlier entry of the archive), refused if it leads out."""
    try:
        return _safe_name(target)
    except UploadRefused:
        raise UploadRefused(f"entry {shown!r} is a hard link that leads out of the "
                            f"folder") from None


# ------------------------------------------------------------------------- writing

class _Writer:
    """Writes entries below `root`, counting entries and bytes against the limits."""

    def __init__(self, root: Path, limits: UploadLimits) -> None:
        self.root = root
        self.limits = limits
        self.entries = 0
        self.bytes = 0
        self.links: list[tuple[str, str]] = []   # symbolic links, made after every file

    def count(self, shown: str) -> None:
        self.entries += 1
        if self.entries > self.limits.max_files:
            raise UploadRefused(f"the archive holds more than {self.limits.max_files} entries "
                                f"(at {shown!r})")

    def declared(self, size: int, shown: str) -> None:
        """Refuse at once an entry whose declared size alone passes the cap."""
        if self.bytes + size > self.limits.unpacked_max_bytes:
            raise UploadRefused(f"entry {shown!r} declares {size} bytes: the upload would "
                                f"unpack to more than {self.limits.unpacked_max_bytes} bytes")

    def folder(self, name: str) -> None:
        if name:
            self._parent(name + "/x")   # the folder and those above it

    def file(self, name: str, source: IO[bytes], executable: bool, shown: str) -> None:
        """Copy `source` to `name` in chunks, stopping at the unpacked-size cap."""
        if not name:
            raise UploadRefused(f"entry {shown!r} has no name")
        self._parent(name)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
        try:
            handle = os.open(self.root / name, flags, 0o755 if executable else 0o644)
        except FileExistsError:
            raise UploadRefused(f"entry {shown!r} appears twice in the archive") from None
        except IsADirectoryError:
            raise UploadRefused(f"entry {shown!r} is both a file and a folder") from None
        with os.fdopen(handle, "wb") as out:
            while block := source.read(CHUNK):
                self.bytes += len(block)
                if self.bytes > self.limits.unpacked_max_bytes:
                    raise UploadRefused(f"the upload unpacks to more than "
                                        f"{self.limits.unpacked_max_bytes} bytes (at "
                                        f"{shown!r})")
                out.write(block)

    def _parent(self, name: str) -> None:
        """Create the folders above `name`; a file or link in the way is refused."""
        path = self.root
        for part in name.split("/")[:-1]:
            path = path / part
            if path.is_symlink() or (path.exists() and not path.is_dir()):
                raise UploadRefused(f"entry {name!r} lies below {part!r}, which is not a "
                                    f"folder")
            if not path.exists():
                path.mkdir(mode=0o755)


def _unpack_zip(archive: Path, out: _Writer) -> None:
    try:
        with zipfile.ZipFile(archive) as zipped:
            infos = zipped.infolist()
            if len(infos) > out.limits.max_files:
                raise UploadRefused(f"the archive holds {len(infos)} entries, more than the "
                                    f"limit of {out.limits.max_files}")
            for info in infos:
                shown = safe_line(info.filename, limit=120)
                name = _safe_name(info.filename)
                out.count(shown)
                mode = info.external_attr >> 16
                if info.flag_bits & 0x1:
                    raise UploadRefused(f"entry {shown!r} is encrypted")
                if stat.S_ISLNK(mode):
                    if info.file_size > 4096:
                        raise UploadRefused(f"entry {shown!r} is a link with a {info.file_size}"
                                            f"-byte target")
                    target = zipped.read(info).decode("utf-8", "replace")
                    out.links.append((name, _link_target(name, target, shown)))
                elif info.is_dir() or stat.S_ISDIR(mode):
                    out.folder(name)
                elif stat.S_IFMT(mode) and not stat.S_ISREG(mode):   # type bits, if any
                    raise UploadRefused(f"entry {shown!r} is a device file or fifo; an upload "
                                        f"holds files, folders and links inside it only")
                else:
                    out.declared(info.file_size, shown)
                    with zipped.open(info) as source:
                        out.file(name, source, bool(mode & 0o111), shown)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, NotImplementedError,
            ValueError) as exc:
        if isinstance(exc, UploadRefused):
            raise
        raise UploadRefused(f"the zip archive is damaged ({_reason(exc)})") from None


def _unpack_tar(archive: Path, out: _Writer) -> None:
    try:
        with tarfile.open(archive, "r|*") as tar:
            for member in tar:
                shown = safe_line(member.name, limit=120)
                name = _safe_name(member.name)
                out.count(shown)
                _check_type(member, name)
                if member.isdir():
                    out.folder(name)
                elif member.issym():
                    out.links.append((name, member.linkname))
                elif member.islnk():
                    _hard_copy(out, name, _hard_target(member.linkname, shown), shown)
                else:
                    out.declared(member.size, shown)
                    source = tar.extractfile(member)
                    assert source is not None
                    out.file(name, source, bool(member.mode & 0o111), shown)
    except (tarfile.TarError, EOFError, ValueError) as exc:
        if isinstance(exc, UploadRefused):
            raise
        raise UploadRefused(f"the tar archive is damaged or cut short ({_reason(exc)})") from None


def _hard_copy(out: _Writer, name: str, target: str, shown: str) -> None:
    """A hard link becomes a copy of the earlier regular file it names (counted again)."""
    source = out.root / target
    if not target or source.is_symlink() or not source.is_file():
        raise UploadRefused(f"entry {shown!r} is a hard link to {safe_line(target, limit=80)!r}, "
                            f"which is no earlier file of the archive")
    out.declared(source.stat().st_size, shown)
    with source.open("rb") as stream:
        out.file(name, stream, os.access(source, os.X_OK), shown)


def _reason(exc: BaseException) -> str:
    return safe_line(str(exc) or type(exc).__name__, limit=120)


# ------------------------------------------------------------------------- the spec

def _finish_folder(root: Path, out: _Writer) -> tuple[str, str, str, int, int]:
    """Make the symbolic links (each must resolve inside), then find and check the spec."""
    for name, target in out.links:
        out._parent(name)
        link = root / name
        if link.exists() or link.is_symlink():
            raise UploadRefused(f"entry {name!r} appears twice in the archive")
        link.symlink_to(target)
    for name, _ in out.links:
        if resolve_inside(root, name) is None:
            raise UploadRefused(f"entry {name!r} is a link that leads out of the folder")
    spec = _find_spec(root)
    checked = _check_spec(root, spec)
    return spec, "image" if checked.kind == "image" else "folder", checked.name, out.entries, \
        out.bytes


def _find_spec(root: Path) -> str:
    """The spec's path relative to `root`: `bot.toml`, or the one bot spec at the top (TOML
    files that are no spec, such as pyproject.toml, do not count), looking into a single top
    folder (an archive of the folder that holds the submission) if the top has none."""
    base = root
    top = [p for p in root.iterdir() if p.name not in JUNK]
    if len(top) == 1 and top[0].is_dir() and not top[0].is_symlink():
        base = top[0]
    specs = specs_in(base)
    if len(specs) == 1:
        return str(specs[0].relative_to(root))
    if specs:
        raise UploadRefused(f"{len(specs)} bot specs at the top of the archive "
                            f"({', '.join(safe_line(p.name, limit=60) for p in specs[:4])}): "
                            f"upload one spec with the folder it names; see {LAYOUT_HELP}")
    if base is not root:   # the bot's folder alone: its spec was left beside it
        folder = safe_line(base.name, limit=60)
        raise UploadRefused(f"no bot spec in the archive, only the folder {folder}/: put the "
                            f"spec beside it in the archive (zip -r {folder}.zip {folder}.toml "
                            f"{folder}, or referee submit {folder}.toml, which zips both); see "
                            f"{LAYOUT_HELP}")
    raise UploadRefused(f"no bot spec at the top of the archive: the spec goes at the top, "
                        f"beside the folder its workdir names (zip -r mybot.zip mybot.toml "
                        f"mybot, or referee submit mybot.toml, which zips both); see "
                        f"{LAYOUT_HELP}")


def _check_spec(root: Path, relative: str) -> BotSpec:
    """The loaded spec; UploadRefused with the loader's one line (paths shown relative to the
    upload) if it is unusable, and for what an upload may not ask for: another host's bot
    (address), an image of the server's own store (image), running unsandboxed."""
    try:
        spec = load_spec(root / relative)
    except BotSpecError as exc:
        why = safe_line(_relative(str(exc), root), limit=300)
        if "'workdir'" in why:   # the spec was moved away from its folder, or the folder left out
            why += (f": the archive holds the spec and, beside it, the folder its workdir names "
                    f"(mybot.toml with mybot/, as the guides have it; workdir = \".\" for a spec "
                    f"inside its folder); see {LAYOUT_HELP}")
        raise UploadRefused(why) from None
    if spec.kind == "address":
        raise UploadRefused(f"{relative}: key 'address': an uploaded bot runs on the server; "
                            f"give a command (or an image archive)")
    if spec.image is not None:
        raise UploadRefused(f"{relative}: key 'image': an uploaded bot cannot name an image of "
                            f"the server; upload the image archive (podman save -o)")
    if spec.sandbox == "none":
        raise UploadRefused(f"{relative}: key 'sandbox': an uploaded bot always runs in the "
                            f"sandbox; leave the key out")
    if spec.kind == "command" and spec.workdir is not None:
        try:   # the bound its check and every start of it apply: refused here, at once
            check_bot_files(spec.workdir)
        except BotFilesTooLarge as exc:
            raise UploadRefused(safe_line(_relative(str(exc), root), limit=300)) from None
    return spec


def _relative(text: str, root: Path) -> str:
    """`text` with paths inside `root` made relative to it and paths outside it hidden: the
    server's own folders are nobody's business."""
    inside = (str(root.resolve()), str(root))

    def shown(match: re.Match[str]) -> str:
        path = match.group(0)
        for prefix in inside:
            if path == prefix:
                return "."
            if path.startswith(prefix + "/"):
                return path[len(prefix) + 1:]
        return "(a path outside the upload)"

    return re.sub(r"/[^\s'\"(),]*", shown, text)


def _store_image(archive: Path, work: Path, name: str) -> tuple[str, str, str, int, int]:
    """Keep an image archive as it is, with a spec naming it."""
    if not NAME_PATTERN.match(name):
        raise ValueError(f"bad bot name {name!r}")
    try:
        archive_image_id(archive)
    except ArchiveError as exc:
        raise UploadRefused(f"the image archive cannot be used: {exc}") from None
    stored = work / IMAGE_FILE
    try:
        os.link(archive, stored)    # the same bytes, stored once
    except OSError:
        with contextlib.suppress(FileNotFoundError):
            stored.unlink()
        shutil.copyfile(archive, stored)
    (work / SPEC_FILE).write_text(f'name = "{name}"\nimage_archive = "{IMAGE_FILE}"\n',
                                  encoding="utf-8")   # the name is letters, digits, ._-
    _check_spec(work, SPEC_FILE)
    return SPEC_FILE, "image", name, 2, stored.stat().st_size
