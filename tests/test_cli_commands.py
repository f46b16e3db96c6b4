"""The `referee` group registers its commands by hand (referee/cli/__init__.py): every click
command defined in a module of referee/cli/ is one of the group's, under its own name, so a
command written in a new module cannot be left out of `referee --help`."""

from __future__ import annotations

import importlib
import os
import pkgutil
import subprocess
import sys

import click

import referee.cli
from referee.cli import main


def defined_commands() -> dict[str, click.Command]:
    """Every click command at the top level of a module of referee/cli/, by module:name."""
    found: dict[str, click.Command] = {}
    for module_info in pkgutil.iter_modules(referee.cli.__path__):
        if module_info.name == "__main__":
            continue
        module = importlib.import_module(f"referee.cli.{module_info.name}")
        for name, value in vars(module).items():
            if isinstance(value, click.Command) and \
                    getattr(value.callback, "__module__", None) == module.__name__:
                found[f"{module_info.name}:{name}"] = value
    return found


def test_every_command_in_the_cli_modules_is_registered_on_the_group() -> None:
    defined = defined_commands()
    assert len(defined) >= 18   # the commands `referee --help` lists
    registered = main.commands
    missing = [where for where, command in defined.items()
               if registered.get(command.name or "") is not command]
    assert not missing, f"commands not registered on `referee`: {missing}"


THREADS = ("import referee.cli, numpy, re; numpy.ones((64, 64)) @ numpy.ones((64, 64)); "
           "print(re.search(r'Threads:\\s+(\\d+)', open('/proc/self/status').read()).group(1))")


def test_the_command_line_runs_blas_in_one_thread_unless_told() -> None:
    """A league's closing standings are small solves: a second BLAS thread only busy-waits on
    a loaded machine (a 200-bot league's standings ran for minutes). The command line sets
    one thread before numpy loads; a count the user set is kept."""
    from referee.util.blas import ONE_THREAD

    def threads(**given: str) -> int:
        env = {k: v for k, v in os.environ.items() if k not in ONE_THREAD} | given
        done = subprocess.run([sys.executable, "-c", THREADS], env=env, capture_output=True,
                              text=True, check=True)
        return int(done.stdout)

    assert threads() == 1
    if (os.cpu_count() or 1) >= 2:   # OpenBLAS makes no second thread on one core
        assert threads(OPENBLAS_NUM_THREADS="2") == 2


FORKS = """
import asyncio, subprocess, sys
import referee.cli
import grpc

async def main() -> None:
    channel = grpc.aio.insecure_channel("unix:/nonexistent/bot.sock")   # gRPC's poller runs
    try:
        await asyncio.wait_for(channel.channel_ready(), 0.2)
    except Exception:
        pass
    codes = [subprocess.Popen(["true"], preexec_fn=lambda: None,
                              stderr=subprocess.DEVNULL).wait() for _ in range(300)]
    print(sum(code != 0 for code in codes))
    await channel.close()

asyncio.run(main())
"""


def test_children_forked_beside_grpc_reach_their_exec() -> None:
    """`referee serve` starts its workers with a preexec_fn (a fork()); with gRPC's fork
    support on, the child restarted gRPC's poller and closed its descriptors before exec, and
    the poller aborted it (here 36 of 300 children; `referee serve` died so once, SIGABRT).
    The command line turns the fork handlers off: every child reaches its exec."""
    from referee.util.grpcfork import FORK_SUPPORT

    env = {k: v for k, v in os.environ.items() if k != FORK_SUPPORT}
    done = subprocess.run([sys.executable, "-c", FORKS], env=env, capture_output=True,
                          text=True, check=True, timeout=600)
    assert done.stdout.strip() == "0", done.stderr[-2000:]
