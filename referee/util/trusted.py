"""How the referee starts its own (trusted) processes: nothing of a submission reaches them.

A trusted process (the guard, `bwrap`, `setpriv`, `prlimit`, `nsenter`, a check runner, the
club's web and season processes) runs as the referee's user, often root, before any sandbox.
Whatever a bot's folder holds or its spec says must not change what such a process runs:

* Python is started in isolated mode (`-I`): neither the working directory nor the script's
  folder is put on the module path, and no `PYTHON*` variable is read. The referee's own package
  is found from where this process loaded it, never from the working directory
  (`python_module`).
* Programs are named by absolute path, found in the system's folders (`system_program`), never
  on a `PATH` a spec may have set.
* The environment is the referee's own, less the variables that make a program load other
  code (`trusted_env`); a spec's variables are set only inside the sandbox, by `bot_command`.
* The working directory is a fixed one (`TRUSTED_CWD`); a bot's own folder is its working
  directory only from `bot_command` on.
"""

from __future__ import annotations

import os
import shutil
import site
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from referee.errors import UserError

# Where the trusted side looks for the programs it runs (the system's own folders only).
SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
TRUSTED_CWD = "/"
# The folder that holds the `referee` package this process runs (a checkout or site-packages).
PACKAGE_PARENT = str(Path(__file__).resolve().parents[2])

# Variables that make a program (the dynamic loader, a shell, Python) load or run other code.
_CODE_LOADING = ("LD_", "PYTHON", "BASH_FUNC_")
_CODE_LOADING_NAMES = frozenset({"BASH_ENV", "ENV", "PERL5OPT", "PERL5LIB", "NODE_OPTIONS",
                                 "GCONV_PATH", "HOSTALIASES", "RESOLV_HOST_CONF", "LOCALDOMAIN",
                                 "MALLOC_CHECK_", "GLIBC_TUNABLES"})

# Runs a module of the referee in an isolated interpreter: the package's own folder (and the
# user's site folder, where the referee runs from one) goes first on the path, nothing else.
_BOOT = ("import runpy, sys; sys.path[:0] = [p for p in sys.argv[1].split('\\0') if p]; "
         "name = sys.argv[2]; del sys.argv[1:3]; "
         "runpy.run_module(name, run_name='__main__', alter_sys=True)")


class ProgramMissing(UserError, OSError):
    """A program the referee runs is not in the system's folders."""


def _module_roots() -> str:
    roots = [PACKAGE_PARENT]
    if site.ENABLE_USER_SITE:   # the referee installed with `pip install --user`
        user_site = site.getusersitepackages()
        if os.path.isdir(user_site):
            roots.append(user_site)
    return "\0".join(roots)


def python_module(module: str, *args: str) -> list[str]:
    """The command line that runs `python -m module args...` of the referee, isolated: the
    working directory, the script's folder and `PYTHON*` variables play no part."""
    return [sys.executable, "-I", "-c", _BOOT, _module_roots(), module, *args]


def python_script(path: str | Path, *args: str) -> list[str]:
    """The command line that runs a standard-library-only script of the referee, isolated."""
    return [sys.executable, "-I", str(path), *args]


def system_program(name: str) -> str:
    """The absolute path of `name` in the system's folders (`name` itself if it is a path);
    ProgramMissing if it is not there."""
    if os.sep in name:
        if not os.access(name, os.X_OK):
            raise ProgramMissing(f"{name} is not an executable program")
        return name
    found = shutil.which(name, path=SYSTEM_PATH)
    if found is None:
        raise ProgramMissing(f"{name} is not installed (looked in {SYSTEM_PATH})")
    return found


def code_loading(name: str) -> bool:
    """Whether the variable `name` makes a program load or run other code."""
    return name.startswith(_CODE_LOADING) or name in _CODE_LOADING_NAMES


def trusted_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a trusted process: the referee's own, less every variable that makes
    a program load other code, plus `extra` (the referee's own settings, never a spec's)."""
    merged = {**os.environ, **(extra or {})}
    return {key: value for key, value in merged.items() if not code_loading(key)}


def bot_command(argv: Sequence[str], env: Mapping[str, str], cwd: str | Path | None = None
                ) -> list[str]:
    """`argv` run with exactly the environment `env` (and in `cwd`, if given), as the last step
    of a trusted chain: `env -i` sets them just before the bot's program starts, so no process
    before it (the guard, bwrap, setpriv, prlimit) ever has a spec's variables. The program is
    looked up on `env`'s PATH, by then the bot's own business."""
    if not argv:
        raise ValueError("argv must not be empty")
    if "=" in argv[0]:
        raise ValueError(f"a program name cannot hold '=': {argv[0]!r}")
    for key in env:
        if not key or "=" in key or "\0" in key:
            raise ValueError(f"invalid environment variable name: {key!r}")
    chdir = ["--chdir", str(cwd)] if cwd is not None else []
    return [system_program("env"), "--ignore-environment", *chdir, "--",
            *(f"{key}={value}" for key, value in env.items()), *argv]
