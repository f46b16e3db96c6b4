"""A hostile submission that tries every way into the referee's trusted processes.

`make_hostile_bot(folder, markers)` writes a bot that plays honestly (its code in `bot/`) and,
at the top of its folder:

* a module (or, for `referee`, a package) for every module name the referee's trusted
  processes import, taken from the running process (`trusted_module_names`), standard library
  included;
* programs named as the ones the trusted side runs (`bwrap`, `setpriv`, `prlimit`, `env`,
  `nsenter`, `python3`, `sh`, ...), with `PATH = ".:..."` in its spec;
* a shared library for `LD_PRELOAD` and `LD_LIBRARY_PATH`, a `BASH_ENV` script, a
  `PYTHONSTARTUP` file and `PYTHONHOME` in its spec.

Each of them, wherever it runs, writes a marker into `markers`, a folder outside the bot's that
no sandbox shows: a marker there means it ran outside the sandbox. The fake programs then run
the real ones, so the bot still plays where the fakes run inside the sandbox (its own PATH).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

# What the trusted side runs by name (or might): each is faked in the bot's folder.
FAKED_PROGRAMS = ("bwrap", "setpriv", "prlimit", "env", "nsenter", "unshare", "python3",
                  "python", "sh", "bash", "podman", "slirp4netns", "iptables", "ip", "true")

BOT_MAIN = '''"""An honest bot behind a hostile folder: always the first legal action."""
import os
import sys

# Started with `python -E` (its spec sets PYTHONHOME to its folder): the SDK's folder by hand.
sys.path[:0] = [p for p in os.environ.get("PYTHONPATH", "").split(":") if p]

import botlib  # noqa: E402

botlib.run("hostile")
'''

PRELOAD_C = r'''
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
__attribute__((constructor)) static void hostile(void) {
    char path[4096];
    snprintf(path, sizeof path, "%s/preload-%d-uid%d", MARKERS, (int)getpid(), (int)getuid());
    int fd = open(path, O_WRONLY | O_CREAT, 0644);
    if (fd >= 0) close(fd);
}
'''


def trusted_module_names() -> list[str]:
    """Every top-level module name a trusted process of the referee may import: those this
    process has imported (after importing the referee's trusted entry points) and the whole
    standard library's."""
    import referee.bots.guard  # noqa: F401
    import referee.checking.isolated  # noqa: F401
    import referee.cli  # noqa: F401
    import referee.league.executors.dask  # noqa: F401
    import referee.server.serve  # noqa: F401

    names = {name.split(".")[0] for name in sys.modules} | set(sys.stdlib_module_names)
    return sorted(name for name in names if name.isidentifier() and name != "__main__")


def _shadow_code(markers: Path) -> str:
    # Builtins only: a shadowed `os` cannot import os.
    return (f"try:\n    open({str(markers)!r} + '/module-' + __name__, 'a').write('ran\\n')\n"
            f"except Exception:\n    pass\n")


def _fake_program(name: str, markers: Path) -> str:
    real = sys.executable if name.startswith("python") else f"/usr/bin/{name}"
    if not os.path.exists(real):
        real = "/bin/false"
    return (f"#!/bin/sh\n/bin/echo \"$$ $(/usr/bin/id -u)\" >> {markers}/program-{name} "
            f"2>/dev/null\nexec {real} \"$@\"\n")


def _preload_library(folder: Path, markers: Path) -> list[Path]:
    """evil.so (and copies under the names of libraries bwrap, setpriv and prlimit load),
    built with the system's C compiler; none where there is none."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        return []
    source = folder / "evil.c"
    source.write_text(PRELOAD_C)
    library = folder / "evil.so"
    subprocess.run([cc, "-shared", "-fPIC", f'-DMARKERS="{markers}"', "-o", str(library),
                    str(source)], check=True, capture_output=True)
    lib = folder / "lib"
    lib.mkdir()
    copies = [library]
    for name in ("libselinux.so.1", "libcap-ng.so.0", "libsmartcols.so.1"):
        shutil.copy(library, lib / name)
        copies.append(lib / name)
    return copies


def make_hostile_bot(folder: Path, markers: Path, name: str = "hostile") -> Path:
    """Write the hostile bot into `folder` (made); return its spec's path. `markers` is made
    too, and must lie outside `folder`."""
    folder.mkdir(parents=True)
    markers.mkdir(parents=True, exist_ok=True)
    os.chmod(markers, 0o777)   # a marker from any uid would show
    (folder / "bot").mkdir()
    (folder / "bot" / "main.py").write_text(BOT_MAIN)
    shutil.copy(HERE / "bots" / "botlib.py", folder / "bot" / "botlib.py")
    code = _shadow_code(markers)
    for module in trusted_module_names():
        if module == "referee":
            (folder / "referee").mkdir()
            (folder / "referee" / "__init__.py").write_text(code)
        else:
            (folder / f"{module}.py").write_text(code)
    for program in FAKED_PROGRAMS:
        path = folder / program
        path.write_text(_fake_program(program, markers))
        path.chmod(0o755)
    _preload_library(folder, markers)
    (folder / "evil.sh").write_text(f"/bin/echo bash_env >> {markers}/bash-env\n")
    (folder / "evil.py").write_text(_shadow_code(markers).replace("module-", "startup-"))
    env = {
        "PATH": ".:/usr/bin:/bin",
        "LD_PRELOAD": "./evil.so",
        "LD_LIBRARY_PATH": "./lib:.",
        "BASH_ENV": "./evil.sh",
        "PYTHONSTARTUP": "./evil.py",
        "PYTHONHOME": ".",
    }
    if not (folder / "evil.so").exists():
        del env["LD_PRELOAD"]
    pairs = ", ".join(f'{key} = "{value}"' for key, value in env.items())
    spec = folder / f"{name}.toml"
    spec.write_text(f'name = "{name}"\n'
                    f'command = ["python3", "-E", "bot/main.py"]\n'
                    f'build = ["sh", "-c", "echo built > bot/built.txt"]\n'
                    f'workdir = "."\n'
                    f'env = {{ {pairs} }}\n'
                    f'[limits]\ndecision_ms = 5000\ngame_bank_ms = 60000\n')
    return spec


def markers_found(markers: Path) -> list[str]:
    """What ran outside the sandbox: each marker with what it holds."""
    if not markers.exists():
        return []
    return sorted(f"{path.name}: {path.read_text(errors='replace').strip()}"
                  for path in markers.iterdir())
