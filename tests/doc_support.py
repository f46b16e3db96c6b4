"""Reading the docs' own code blocks, so that tests follow the docs instead of a copy of them.

A guide marks the blocks a reader types or saves with an HTML comment on the line before the
block (invisible once rendered):

    <!-- guide: file mybot/main.py -->     the block is saved as that file
    <!-- guide: run -->                    the block is run, in order, from the clone's top
    <!-- guide: server -->                 run so too, against a real club server: its address
                                           and a student's token replace SERVER and TOKEN

Blocks without a mark (installing the referee itself, optional code generation) are not
followed here: the README's install commands are what `.ci/run` runs.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MARKED = re.compile(r"^<!-- guide: (run|server|file (\S+)) -->\n```[\w-]*\n(.*?)^```",
                    re.S | re.M)
# What the docs write for a club server's address and a student's token.
SERVER = "http://127.0.0.1:8000"
TOKEN = "rt_your_token_here"
FENCED = re.compile(r"^```(\w+)?\n(.*?)^```", re.S | re.M)


@dataclass(frozen=True)
class Step:
    """One marked block: a file to write (`path`) or commands to run (`path` None)."""

    path: str | None
    text: str
    server: bool = False   # commands that talk to a club server (SERVER and TOKEN in them)

    def against(self, url: str, token: str) -> Step:
        """The step with a real server's address and token in place of SERVER and TOKEN."""
        return Step(self.path, self.text.replace(SERVER, url).replace(TOKEN, token))


def guide_steps(doc: Path) -> list[Step]:
    """The marked blocks of `doc`, in the order a reader meets them."""
    return [Step(path or None, text, kind == "server")
            for kind, path, text in MARKED.findall(doc.read_text())]


def shell_commands(doc: Path) -> list[str]:
    """Every `referee ...` command line of the doc's sh blocks (comments cut off)."""
    commands = []
    for lang, text in FENCED.findall(doc.read_text()):
        if lang != "sh":
            continue
        for line in text.splitlines():
            line = re.sub(r"\s+#.*$", "", line).strip()
            if line.startswith("referee "):
                commands.append(line)
    return commands


def fresh_clone(top: Path) -> Path:
    """A folder holding what a clone gives a reader (proto/, sample_bots/) without any build
    output (node_modules, target): the guide's commands run from its top."""
    top.mkdir(parents=True, exist_ok=True)
    shutil.copytree(ROOT / "proto", top / "proto")
    shutil.copytree(ROOT / "sample_bots", top / "sample_bots",
                    ignore=shutil.ignore_patterns("node_modules", "target", "__pycache__"))
    return top


def clean_env(caches: Path) -> dict[str, str]:
    """The environment of a reader's first try: this venv's `referee` on PATH, and an empty
    npm cache, pip cache and referee build cache."""
    env = {**os.environ, "REFEREE_RUN_ID": uuid.uuid4().hex[:12]}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    for name, sub in (("npm_config_cache", "npm"), ("PIP_CACHE_DIR", "pip"),
                      ("XDG_CACHE_HOME", "xdg")):
        (caches / sub).mkdir(parents=True, exist_ok=True)
        env[name] = str(caches / sub)
    return env


def run_step(step: Step, top: Path, env: dict[str, str],
             timeout: float = 1200) -> subprocess.CompletedProcess[str]:
    """Save a file step, or run a run step with bash (stopping at the first failing command);
    AssertionError with the output when a command fails."""
    if step.path is not None:
        target = top / step.path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(step.text)
        return subprocess.CompletedProcess([], 0, "", "")
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", step.text], cwd=top, env=env,
                          capture_output=True, text=True, timeout=timeout, check=False)
    if done.returncode != 0:
        raise AssertionError(f"the guide's commands failed (exit {done.returncode}):\n"
                             f"{step.text}\n--- stdout\n{done.stdout}\n--- stderr\n{done.stderr}")
    return done
