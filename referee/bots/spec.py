"""Bot specs: one TOML file per bot, telling the referee how to run it (docs/bot-spec.md)."""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re
import stat
import sys
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from referee.present.text import safe_line
from referee.util.config import ConfigError, read_toml
from referee.util.numbers import is_whole

NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
ENV_KEY_PATTERN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
MAX_DEPTH = 3     # a spec's tables hold strings, lists of strings and numbers: no deeper
# Directories that are build output or tool state, not the bot's own files.
IGNORED_DIRS = frozenset({".git", "node_modules", "__pycache__", ".venv", "target", ".mypy_cache",
                          ".pytest_cache", ".ruff_cache"})


class BotSpecError(ConfigError):
    """A bot spec that cannot be used; the message names the file, the key and what is expected."""


def resolve_inside(folder: Path, relative: str) -> Path | None:
    """`relative` resolved against `folder` with every symlink followed, or None if the result
    is not `folder` or below it (`..`, an absolute path, or a symlink that leads out)."""
    resolved = (folder / relative).resolve()
    return resolved if resolved.is_relative_to(folder.resolve()) else None


SOURCE_KEYS = ("command", "address", "image", "image_archive")
# Where a student reads how a submission is laid out; every refusal of a layout points here.
LAYOUT_HELP = "docs/bots/submitting.md, \"What to upload\""


def looks_like_spec(path: Path) -> bool:
    """Whether `path` is a TOML file that means to be a bot spec: one with a top-level `name`,
    `command`, `address`, `image` or `image_archive`, or one that does not parse (its error is
    the student's to see). A bot's folder may hold other TOML files (pyproject.toml,
    Cargo.toml) that are none."""
    if path.suffix != ".toml" or path.is_symlink() or not path.is_file():
        return False
    try:
        data = read_toml(path)
    except ConfigError:
        return True
    return any(key in data for key in ("name", *SOURCE_KEYS))


MOST_SPECS_READ = 8   # TOML files read to tell specs from others: an upload may hold thousands


def specs_in(folder: Path) -> list[Path]:
    """The bot specs at the top of `folder`: `bot.toml` alone if it is there, else the TOML
    files there that look like specs (`looks_like_spec`), sorted. More than
    MOST_SPECS_READ TOML files are all returned unread (ambiguous to every caller): a hostile
    upload must not make the server parse thousands."""
    named = folder / "bot.toml"
    if named.is_file() and not named.is_symlink():
        return [named]
    tomls = sorted(path for path in folder.iterdir()
                   if path.suffix == ".toml" and path.is_file() and not path.is_symlink())
    if len(tomls) > MOST_SPECS_READ:
        return tomls
    return [path for path in tomls if looks_like_spec(path)]


def spec_of_folder(folder: Path) -> Path:
    """The one spec of a bot's folder, as the guides lay a submission out: inside it
    (`bot.toml`, or the one spec at its top, `workdir = "."`), or else beside it naming it as
    its `workdir` (`mybot.toml` beside `mybot/`). BotSpecError, naming the fix, when there is
    none or more than one."""
    inside = specs_in(folder)
    if len(inside) == 1:
        return inside[0]
    if len(inside) > 1:
        raise BotSpecError(f"{folder}: {len(inside)} bot specs ({_listed(inside)}): give the "
                           f"one you mean, e.g. {inside[0]}")
    # Every TOML file beside it is read (the student's own files, not an upload), bot.toml too.
    beside = [path for path in sorted(folder.resolve().parent.glob("*.toml"))
              if path.is_file() and not path.is_symlink() and _names_folder(path, folder)]
    if len(beside) == 1:
        return beside[0]
    if len(beside) > 1:
        raise BotSpecError(f"{folder}: {len(beside)} bot specs name it ({_listed(beside)}): "
                           f"give the one you mean, e.g. {beside[0]}")
    name = folder.resolve().name
    raise BotSpecError(f"{folder}: no bot spec inside it or beside it naming it: write "
                       f"{name}.toml beside it (workdir = \"{name}\") and give that (see "
                       f"{LAYOUT_HELP})")


def _names_folder(spec_path: Path, folder: Path) -> bool:
    """Whether the spec at `spec_path` loads and its workdir is `folder`."""
    try:
        spec = load_spec(spec_path)
    except BotSpecError:
        return False
    return spec.workdir is not None and spec.workdir == folder.resolve()


def _listed(paths: list[Path]) -> str:
    return ", ".join(path.name for path in paths[:4])


def check_unique_names(specs: Iterable[BotSpec]) -> None:
    """BotSpecError naming both files when two different specs give their bots one name."""
    seen: dict[str, BotSpec] = {}
    for spec in specs:
        other = seen.setdefault(spec.name, spec)
        if other is not spec and other.path != spec.path:
            raise BotSpecError(f"{spec.path}: key 'name': {spec.name!r} is already the name of "
                               f"the bot in {other.path}")


@dataclass(frozen=True)
class Limits:
    """Time and resource limits for one bot (the referee measures time itself)."""

    decision_ms: int = 1000      # per-decision deadline
    game_bank_ms: int = 20000    # extra time a bot may spend over its deadlines in one game
    startup_ms: int = 15000      # from launch until Hello answers
    memory_mb: int | None = None
    cpu_seconds: int | None = None
    max_processes: int | None = None
    build_seconds: int = 600     # the whole build, every process it starts, lock wait included
    # The keys the spec's [limits] set itself (the others are defaults), for `capped_limits`.
    given: frozenset[str] = field(default=frozenset(), compare=False, repr=False)


@dataclass(frozen=True)
class BotSpec:
    """How to run one bot: a command, an address of a running bot, or a container image."""

    name: str
    path: Path | None = None                  # the TOML file it came from
    command: tuple[str, ...] = ()
    workdir: Path | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    build: tuple[str, ...] = ()
    build_network: bool = False               # the build may reach public addresses (netns.py)
    address: str | None = None
    image: str | None = None
    image_archive: Path | None = None         # an image bot handed in as `podman save` output
    runtime: str | None = None                # "podman" or "docker" for image bots
    sandbox: str = "auto"                     # "auto" (bubblewrap where present) or "none"
    limits: Limits = field(default_factory=Limits)

    @property
    def kind(self) -> str:
        """"command", "address" or "image"."""
        if self.address:
            return "address"
        return "image" if self.image or self.image_archive else "command"

    def argv(self) -> list[str]:
        """The command with `{python}` replaced by the referee's own interpreter."""
        python = os.path.normpath(sys.executable)   # may hold `..` when run by a relative path
        return [python if part == "{python}" else part for part in self.command]

    def files_hash(self) -> str:
        """A content hash of the bot's files (its version for image-less bots)."""
        if self.kind == "address":
            return "address:" + (self.address or "")
        if self.image_archive is not None:
            return "image-archive:" + self.image_archive.name
        if self.kind == "image":
            return "image:" + (self.image or "")
        assert self.workdir is not None
        return "sha256:" + hash_tree(self.workdir)[:16]


MIB = 1024 * 1024
HASH_CHUNK = 1 << 20   # bytes read at a time: hashing never holds a whole file


class BotFilesTooLarge(BotSpecError):
    """A bot folder with more files, or bigger ones, than `FilesBound` allows: one line saying
    the folder, what it holds and the bound."""


@dataclass(frozen=True)
class FilesBound:
    """A bound on a bot's files (those `bot_files` lists, the ones its version hashes): their
    number, their apparent size all together (the sum of st_size: a sparse file counts at the
    size it claims, since that is what reading it costs), and each file's. Checked before any
    hash reads them (`check_bot_files`), so a version's check and every start of it read a
    bounded amount."""

    max_files: int = 10_000
    max_total_mb: int = 256
    max_file_mb: int = 128

    def words(self) -> str:
        """The bound as one phrase, for the refusal."""
        return (f"at most {self.max_total_mb:,} MiB in all, {self.max_file_mb:,} MiB a file "
                f"and {self.max_files:,} files")


DEFAULT_FILES_BOUND = FilesBound()


def check_bot_files(root: Path, bound: FilesBound = DEFAULT_FILES_BOUND,
                    shown: str | None = None,
                    leave_out: Collection[Path] = ()) -> list[tuple[Path, int]]:
    """The bot's files below `root` (sorted) with their apparent sizes; BotFilesTooLarge (one
    line naming `shown`, by default `root`) when they pass `bound`. Only stats: a folder of
    huge sparse files is refused at once, without reading them. The walk stops as soon as the
    count passes the bound."""
    where = shown or str(root)
    found: list[tuple[Path, int]] = []
    total = 0
    for path in bot_files(root):
        if path in leave_out:   # an image archive: never read as the bot's files
            continue
        try:
            size = path.stat().st_size
        except OSError:
            size = 0   # gone or unreadable: hashed as a marker
        found.append((path, size))
        total += size
        if len(found) > bound.max_files:
            raise BotFilesTooLarge(f"{where}: more than {bound.max_files:,} files; "
                                   f"{bound.words()}")
        if size > bound.max_file_mb * MIB:
            raise BotFilesTooLarge(f"{where}: {path.relative_to(root)} is {size / MIB:,.0f} "
                                   f"MiB; {bound.words()}")
    if total > bound.max_total_mb * MIB:
        raise BotFilesTooLarge(f"{where}: {len(found):,} files of {total / MIB:,.0f} MiB in "
                               f"all; {bound.words()}")
    return sorted(found)


def hash_tree(root: Path, bound: FilesBound = DEFAULT_FILES_BOUND) -> str:
    """SHA-256 over the relative paths and contents of every file below `root` (a file its
    sandboxed bot cannot read, `private`, counts by its path only: its contents are not the
    bot's). The files are bounded first (`check_bot_files`: BotFilesTooLarge) and read in
    chunks of HASH_CHUNK, so the memory it takes does not grow with a file's size; the same
    digest as `hash_entries` over the files' bytes."""
    digest = hashlib.sha256()
    budget = bound.max_total_mb * MIB
    for path, _ in check_bot_files(root, bound):
        digest.update(str(path.relative_to(root)).encode() + b"\0")
        if private(path, root):
            digest.update(b"<unreadable>")
        else:
            budget -= _hash_file(path, digest, budget, root)
        digest.update(b"\0")
    return digest.hexdigest()


def _hash_file(path: Path, digest: Any, budget: int, root: Path) -> int:
    """Feed the file's bytes to `digest` in chunks (the marker if it cannot be opened); the
    bytes read. A file that grew past the bound since it was measured is refused."""
    read = 0
    try:
        with path.open("rb") as stream:
            while chunk := stream.read(HASH_CHUNK):
                read += len(chunk)
                if read > budget:
                    raise BotFilesTooLarge(f"{root}: {path.relative_to(root)} grew past the "
                                           f"bound on the bot's files while it was read")
                digest.update(chunk)
    except OSError:
        if read == 0:
            digest.update(b"<unreadable>")
    return read


def private(path: Path, root: Path) -> bool:
    """Whether a sandboxed bot cannot read the file `path` below its folder `root`: it runs as
    a uid of its own without groups, so the file must be readable by others and every folder
    between `root` and it enterable by others. (A hard link to a root-only file is private.)"""
    try:
        if not os.stat(path).st_mode & stat.S_IROTH:
            return True
        return any(not os.stat(root / folder).st_mode & stat.S_IXOTH
                   for folder in path.relative_to(root).parents[:-1])
    except OSError:
        return True


def hash_entries(entries: Iterable[tuple[str, bytes | None]]) -> str:
    """SHA-256 over (relative path, contents) pairs in the given order; None contents (an
    unreadable file) hash as a marker. `hash_tree` is this over a directory's `bot_files`."""
    digest = hashlib.sha256()
    for relative, data in entries:
        digest.update(relative.encode() + b"\0")
        digest.update(b"<unreadable>" if data is None else data)
        digest.update(b"\0")
    return digest.hexdigest()


def read_or_none(path: Path) -> bytes | None:
    """The file's bytes, or None if it cannot be read."""
    try:
        return path.read_bytes()
    except OSError:
        return None


def bot_files(root: Path) -> Iterable[Path]:
    """The files `hash_tree` covers: regular files below `root`, build and tool directories
    (IGNORED_DIRS) and symbolic links left out."""
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in IGNORED_DIRS]
        for name in filenames:
            path = Path(dirpath, name)
            if path.is_file() and not path.is_symlink():
                yield path


def referee_owned(name: str, command_bot: bool = True) -> bool:
    """Whether the variable `name` is one the referee sets for a bot (a spec may not): where
    to listen for every bot, the SDK's path for a command bot (a container has its own)."""
    return name.startswith("REFEREE_") or (command_bot and name == "PYTHONPATH")


TOP_KEYS = {"name", "command", "workdir", "env", "build", "build_network", "address", "image",
            "image_archive", "runtime", "sandbox", "limits"}
LIMIT_KEYS = {"decision_ms": (1, 3_600_000), "game_bank_ms": (0, 86_400_000),
              "startup_ms": (100, 600_000), "memory_mb": (16, 1_048_576),
              "cpu_seconds": (1, 86_400), "max_processes": (1, 100_000),
              "build_seconds": (1, 86_400)}


def load_spec(path: str | Path) -> BotSpec:
    """Read and check a bot spec; BotSpecError naming the file and the key on any problem."""
    path = Path(path)
    try:
        data = read_toml(path)
    except ConfigError as exc:
        raise BotSpecError(str(exc)) from None
    return spec_from_dict(data, path)


def spec_from_dict(data: Mapping[str, Any], path: Path) -> BotSpec:
    """Check the parsed TOML of a bot spec found at `path`."""
    where = str(path)

    def fail(key: str, expected: str) -> BotSpecError:
        return BotSpecError(f"{where}: key '{key}': expected {expected}")

    _check_values(data, where)

    unknown = sorted(set(data) - TOP_KEYS)
    if unknown:
        raise BotSpecError(f"{where}: unknown key '{unknown[0]}'; known keys: "
                           f"{', '.join(sorted(TOP_KEYS))}")
    name = data.get("name")
    if name is None:
        raise fail("name", "a name such as name = \"mybot\" (the key is missing)")
    if not isinstance(name, str) or not NAME_PATTERN.match(name):
        raise fail("name", "a name of letters, digits, '.', '_' or '-' (at most 64)")
    sources = [key for key in ("command", "address", "image", "image_archive") if key in data]
    if len(sources) != 1:
        raise BotSpecError(f"{where}: expected exactly one of 'command', 'address', 'image' or "
                           f"'image_archive', found {', '.join(sources) or 'none'}")
    base = path.parent.resolve()
    command: tuple[str, ...] = ()
    if "command" in data:
        command = _string_list(data["command"], lambda: fail("command", "a non-empty list of "
                                                             "strings, e.g. [\"python3\", "
                                                             "\"main.py\"]"))
    build: tuple[str, ...] = ()
    if "build" in data:
        build = _string_list(data["build"], lambda: fail("build", "a non-empty list of strings, "
                                                         "e.g. [\"npm\", \"ci\"]"))
    build_network = data.get("build_network", False)
    if not isinstance(build_network, bool):
        raise fail("build_network", "true or false")
    workdir = data.get("workdir", ".")
    if not isinstance(workdir, str):
        raise fail("workdir", "a directory path relative to the spec file")
    workdir_path = (base / workdir).resolve()
    if command:
        # Everything the bot runs from must be inside its submission: a symlink or `..` that
        # leads out would show the sandboxed bot (and its build) other files of the host.
        inside = resolve_inside(base, workdir)
        if inside is None:
            raise fail("workdir", f"a folder inside the spec's folder {base} ({workdir!r} "
                                  f"resolves to {workdir_path})")
        if not workdir_path.is_dir():
            raise fail("workdir", f"an existing directory ({workdir_path} does not exist)")
        command = _program_inside(command, workdir_path, lambda why: fail("command", why))
        build = _program_inside(build, workdir_path, lambda why: fail("build", why))
    env = data.get("env", {})
    if not isinstance(env, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in env.items()
    ):
        raise fail("env", "a table of string values, e.g. env = { LEVEL = \"3\" }")
    for key in env:
        if not ENV_KEY_PATTERN.match(key):
            raise fail(f"env.{safe_line(key)}", "a variable name of letters, digits and '_' "
                                                "(no '=', not starting with a digit)")
    address = data.get("address")
    if address is not None and (not isinstance(address, str) or not _valid_address(address)):
        raise fail("address", "'HOST:PORT' or 'unix:/path/to/socket'")
    image = data.get("image")
    if image is not None and (not isinstance(image, str) or not image.strip()):
        raise fail("image", "a container image name such as 'mybot:1.0'")
    archive: Path | None = None
    if "image_archive" in data:
        value = data["image_archive"]
        if not isinstance(value, str) or not value.strip():
            raise fail("image_archive", "the path of an image archive (podman save -o "
                                        "alice.tar IMAGE) relative to the spec file")
        archive = (base / value).resolve()
        if resolve_inside(base, value) is None:
            raise fail("image_archive", f"a file inside the spec's folder {base} ({value!r} "
                                        f"resolves to {archive})")
        if not archive.is_file():
            raise fail("image_archive", f"an existing file ({archive} does not exist)")
    runtime = data.get("runtime")
    if runtime is not None and runtime not in ("podman", "docker"):
        raise fail("runtime", "\"podman\" or \"docker\"")
    for key in env:
        if referee_owned(key, command_bot=bool(command)):
            raise fail(f"env.{key}", "no REFEREE_* variable, nor PYTHONPATH for a command bot: "
                                     "the referee sets those (where to listen, the SDK's path)")
    sandbox = data.get("sandbox", "auto")
    if sandbox not in ("auto", "none"):
        raise fail("sandbox", "\"auto\" or \"none\"")
    limits = _limits(data.get("limits", {}), where)
    return BotSpec(name=name, path=path.resolve(), command=command, workdir=workdir_path,
                   env=dict(env), build=build, build_network=build_network,
                   address=address, image=image,
                   image_archive=archive, runtime=runtime,
                   sandbox=sandbox, limits=limits)


def _program_inside(argv: tuple[str, ...], workdir: Path,
                    error: Callable[[str], BotSpecError]) -> tuple[str, ...]:
    """`argv` with its program checked: `{python}` and bare names (looked up on the sandbox's
    fixed PATH, in the system) stay as they are; a relative path (`target/mybot`) is made
    absolute inside `workdir`; an absolute path must lie inside `workdir` or in the system's
    runtime (`referee.bots.sandbox.in_runtime`), as written and with links resolved.
    `error(why)` for anything else: a link or `..` that leads out, another folder of the host."""
    if not argv or "/" not in argv[0]:
        return argv
    program = argv[0]
    if program.startswith("/"):
        if _inside_lexically_and_resolved(workdir, program):
            return argv
        from referee.bots.sandbox import in_runtime

        if in_runtime(program):
            return argv
        raise error(f"a program inside the bot's folder or in the system's runtime (the "
                    f"system's programs, the referee's Python), not {program!r} (it resolves "
                    f"to {os.path.realpath(program)}; the bot's folder is {workdir})")
    resolved = resolve_inside(workdir, program)
    if resolved is None or not _inside_lexically_and_resolved(workdir, program):
        raise error(f"a program inside the bot's folder {workdir} ({program!r} resolves to "
                    f"{(workdir / program).resolve()})")
    return (str(resolved), *argv[1:])


def moved_to(spec: BotSpec, workdir: Path) -> BotSpec:
    """`spec` run from another copy of its folder at `workdir` (a cluster worker's unpacked
    files): a `command` or `build` program inside the spec's own folder (made absolute there
    when the spec was loaded) becomes the same path inside `workdir`, checked there as at load
    (`_program_inside`: a link or `..` that leads out of `workdir` is refused). A program in
    the system's runtime, `{python}` and bare names stay. BotSpecError, naming the spec's file
    and key, for a program refused here."""
    assert spec.workdir is not None
    loaded_in = spec.workdir   # the folder where the spec was loaded (narrowed for `rebased`)
    where = spec.path or spec.name

    def rebased(argv: tuple[str, ...], key: str) -> tuple[str, ...]:
        if not argv or not argv[0].startswith("/"):
            return argv
        own = Path(os.path.normpath(argv[0]))
        if not own.is_relative_to(loaded_in):   # the runtime's: the same on every machine
            return argv
        # The folder's own program, run from this copy: never the path where it was loaded,
        # which on a worker is another machine's (or, on the same machine, not the copy the
        # sandbox shows), and checked against what this copy holds (a build's links).
        relative = "./" + own.relative_to(loaded_in).as_posix()
        return _program_inside((relative, *argv[1:]), workdir, lambda why: BotSpecError(
            f"{where}: key '{key}': expected {why}"))

    return dataclasses.replace(spec, workdir=workdir, command=rebased(spec.command, "command"),
                               build=rebased(spec.build, "build"))


def _inside_lexically_and_resolved(folder: Path, path: str) -> bool:
    """Whether `path` (relative to `folder`, or absolute) is in `folder` both as written
    (`..` counted) and with every symlink followed."""
    lexical = Path(os.path.normpath(folder / path))
    return lexical.is_relative_to(folder) and resolve_inside(folder, path) is not None


def _check_values(data: Mapping[str, Any], where: str) -> None:
    """BotSpecError naming the key of a NUL character or of nesting deeper than MAX_DEPTH."""
    stack: list[tuple[str, Any, int]] = [("", data, 0)]
    while stack:   # iterative: a deeply nested file must not exhaust the Python stack
        key, value, depth = stack.pop()
        if depth > MAX_DEPTH:
            shown = key if len(key) <= 80 else key[:80] + "..."
            raise BotSpecError(f"{where}: key '{shown}': nested more than {MAX_DEPTH} levels "
                               f"deep; a spec holds strings, lists of strings and numbers")
        if isinstance(value, dict):
            for name, item in value.items():
                if "\0" in name:
                    raise BotSpecError(f"{where}: key '{safe_line(key + '.' + name)}': a key "
                                       "name with a NUL character")
                stack.append((f"{key}.{name}" if key else name, item, depth + 1))
        elif isinstance(value, list):
            stack.extend((f"{key}[{i}]", item, depth + 1) for i, item in enumerate(value))
        elif isinstance(value, str) and "\0" in value:
            raise BotSpecError(f"{where}: key '{safe_line(key)}': a string with a NUL character")


def _string_list(value: Any, error: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v
                                                          for v in value):
        raise error()
    return tuple(value)


def _valid_address(address: str) -> bool:
    if address.startswith("unix:"):
        return len(address) > 5
    host, _, port = address.rpartition(":")
    return bool(host) and is_whole(port) and 0 < int(port) < 65536


def _limits(data: Any, where: str) -> Limits:
    if not isinstance(data, dict):
        raise BotSpecError(f"{where}: key 'limits': expected a table such as "
                           "[limits] decision_ms = 1000")
    unknown = sorted(set(data) - set(LIMIT_KEYS))
    if unknown:
        raise BotSpecError(f"{where}: unknown key 'limits.{unknown[0]}'; known keys: "
                           f"{', '.join(LIMIT_KEYS)}")
    for key, value in data.items():
        low, high = LIMIT_KEYS[key]
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise BotSpecError(f"{where}: key 'limits.{key}': expected a whole number from "
                               f"{low} to {high}, got {value!r}")
    return Limits(**data, given=frozenset(data))


LIMIT_NAMES = tuple(LIMIT_KEYS)


def capped_limits(spec: BotSpec, ceiling: Mapping[str, int]) -> BotSpec:
    """`spec` under a season's or a league's `[limits]` (`ceiling`): each limit the ceiling
    sets is the smaller of it and the spec's own, where the spec's [limits] set that key, and
    the ceiling's where it did not (a default is no request). The one place that decides a
    bot's limits under a season or league: checks, test games, season games and leagues.
    BotSpecError for a key that is no limit."""
    unknown = sorted(set(ceiling) - set(LIMIT_NAMES))
    if unknown:
        raise BotSpecError(f"limits: unknown limit {unknown[0]!r}; known limits: "
                           f"{', '.join(LIMIT_NAMES)}")
    own = spec.limits
    values = {}
    for key, cap in ceiling.items():
        mine = getattr(own, key)
        values[key] = min(mine, cap) if key in own.given and mine is not None else cap
    limits = dataclasses.replace(own, **values, given=own.given | frozenset(values))
    return dataclasses.replace(spec, limits=limits)
