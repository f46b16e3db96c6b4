"""Container bots handed in as one file: an image archive made by `podman save` or `docker save`
(`image_archive = "alice.tar"` in the spec, docs/containers.md).

`load_archive` loads such a file into the runtime and returns the image it holds. The image id
is read from the archive itself (the digest of the image configuration, which is what podman
and docker call the image id) before loading, and must be stored after loading, so the bot that
plays is exactly the one in the file, whatever tags the archive carries. The file's own SHA-256
is what `ContainerProcess` compares to refuse an archive that changed since the league started.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import tarfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from referee.errors import UserError
from referee.util.trusted import SYSTEM_PATH


def runtime_program(runtime: str) -> str:
    """A container runtime's absolute path in the system's folders (its bare name where it is
    not there: running it then fails as "not installed")."""
    return shutil.which(runtime, path=SYSTEM_PATH) or runtime


LOAD_TIMEOUT = 600.0            # bound on `podman load` of a large archive
MAX_INDEX_BYTES = 1 << 20       # manifest.json / index.json / an OCI manifest larger than this
_HEX = re.compile(r"^[0-9a-f]{64}$")

_lock = threading.Lock()
_loaded: dict[tuple[str, str], str] = {}   # (runtime, file digest) -> image id, loaded here


class ArchiveError(UserError):
    """An image archive that cannot be used; the message says why, in one line."""


@dataclass(frozen=True)
class LoadedArchive:
    """An archive loaded into a runtime."""

    path: Path
    digest: str       # "sha256:<hex>" of the file
    image_id: str     # 64 hex digits


def file_digest(path: Path) -> str:
    """`sha256:<hex>` of the file's bytes."""
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return "sha256:" + digest.hexdigest()


def _read_json(archive: tarfile.TarFile, name: str) -> Any:
    try:
        member = archive.getmember(name)
    except KeyError:
        return None
    if not member.isfile() or member.size > MAX_INDEX_BYTES:
        raise ArchiveError(f"{name} in the archive is not a small regular file")
    stream = archive.extractfile(member)
    assert stream is not None
    try:
        return json.loads(stream.read())
    except ValueError:
        raise ArchiveError(f"{name} in the archive is not JSON") from None


def _hex_of(reference: object) -> str:
    """The 64 hex digits of a digest reference such as `sha256:<hex>`, `<hex>.json` or
    `blobs/sha256/<hex>`."""
    text = str(reference).rsplit("/", 1)[-1].removeprefix("sha256:").removesuffix(".json")
    if not _HEX.match(text):
        raise ArchiveError(f"unexpected image reference {str(reference)[:80]!r} in the archive")
    return text


def archive_image_id(path: Path) -> str:
    """The id of the one image in a docker-archive (manifest.json) or an OCI archive
    (index.json); ArchiveError if the file is not such an archive or holds several images."""
    try:
        with tarfile.open(path, "r:*") as archive:
            manifest = _read_json(archive, "manifest.json")     # podman save, docker save
            if manifest is not None:
                if not isinstance(manifest, list) or len(manifest) != 1:
                    raise ArchiveError("the archive must hold exactly one image")
                return _hex_of(manifest[0].get("Config") if isinstance(manifest[0], dict)
                               else None)
            index = _read_json(archive, "index.json")           # podman save --format oci-archive
            if index is None:
                raise ArchiveError("not an image archive (no manifest.json or index.json)")
            manifests = index.get("manifests") if isinstance(index, dict) else None
            if not isinstance(manifests, list) or len(manifests) != 1:
                raise ArchiveError("the archive must hold exactly one image")
            blob = f"blobs/sha256/{_hex_of(manifests[0].get('digest'))}"
            image = _read_json(archive, blob)
            if not isinstance(image, dict) or not isinstance(image.get("config"), dict):
                raise ArchiveError(f"{blob} in the archive is not an image manifest")
            return _hex_of(image["config"].get("digest"))
    except (tarfile.TarError, EOFError):
        raise ArchiveError("not a tar archive (make one with podman save -o FILE IMAGE)") from None
    except AttributeError:
        raise ArchiveError("the archive's index is not in the expected shape") from None


def _stored(runtime: str, ident: str) -> bool:
    done = subprocess.run([runtime_program(runtime), "image", "inspect", "--format", "{{.Id}}",
                           ident],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=60, check=False)
    return done.returncode == 0 and done.stdout.strip().removeprefix("sha256:") == ident


def load_archive(runtime: str, path: Path, tag: str, expect: str | None = None) -> LoadedArchive:
    """Load the archive at `path` into `runtime` (unless this process already did and the image
    is still stored), tag its image `tag` so that no later load of another archive with the
    same tags leaves it untagged, and return it. ArchiveError in one line if it cannot, or if
    `expect` is given and the file's digest is no longer that (nothing is loaded then)."""
    try:
        digest = file_digest(path)
    except OSError as exc:
        raise ArchiveError(f"cannot read {path}: {exc.strerror}") from None
    if expect is not None and digest != expect:
        raise ArchiveError(f"changed since the league started (was {expect[:19]}, now "
                           f"{digest[:19]}): it is not played")
    with _lock:
        known = _loaded.get((runtime, digest))
    if known is not None and _stored(runtime, known):
        return LoadedArchive(path, digest, known)
    ident = archive_image_id(path)
    try:
        done = subprocess.run([runtime_program(runtime), "load", "-i", str(path)],
                              stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=LOAD_TIMEOUT, check=False)
    except subprocess.TimeoutExpired:
        raise ArchiveError(f"{runtime} load took more than {LOAD_TIMEOUT:.0f} s") from None
    if done.returncode != 0:
        lines = (done.stderr or done.stdout).strip().splitlines()
        raise ArchiveError(f"{runtime} load failed: {lines[-1] if lines else done.returncode}")
    if not _stored(runtime, ident):
        raise ArchiveError(f"{runtime} load did not store the archive's image {ident[:12]}")
    subprocess.run([runtime_program(runtime), "tag", ident, tag], stdin=subprocess.DEVNULL,
                   capture_output=True,
                   timeout=60, check=False)
    with _lock:
        _loaded[(runtime, digest)] = ident
    return LoadedArchive(path, digest, ident)
