# ruff: noqa: E402 (gRPC's fork handlers are turned off before the imports below load grpc)
"""Shared test set-up: the slow lane, and tests marked `sandbox` that need a working
bubblewrap sandbox.

Slow tests start whole leagues, servers, season runners, browsers, clusters, containers or
builds: seconds to minutes each. A test is marked `slow` by what it reaches (tests/lane_support.py
follows its code, fixtures and helpers to a server, a browser...), by its module's name in
SLOW_MODULES (modules that run the `referee` command line), or by hand.
`python -m pytest -m "not slow"` runs the others, the quick lane (README.md, "Two commands"); the CI
runs them all.

Where the sandbox is expected (bubblewrap is installed, or REFEREE_REQUIRE_SANDBOX=1 as .ci/run
sets it) and it cannot start, such a test fails with the reason instead of skipping: a broken
sandbox must never pass as "skipped" in CI. Elsewhere (a laptop without bubblewrap) it skips.
"""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
from pathlib import Path

from referee.util.grpcfork import no_grpc_fork_handlers

# Before anything imports grpc: the tests start servers and terminals with a preexec_fn (a
# fork), which gRPC's fork handlers made abort before exec now and then (referee.util.grpcfork).
no_grpc_fork_handlers()

import pytest
from hypothesis import settings
from lane_support import item_heavy, pytest_runtest_makereport  # noqa: F401 (a hook)

from referee.bots.sandbox import sandbox_available

# Tests never assert timings: hypothesis's per-example deadline (200 ms) is one, and a loaded
# machine passes it on a check of a few microseconds.
settings.register_profile("referee", deadline=None)
settings.load_profile("referee")

pytest_plugins = ["pytester"]   # tests/test_lane.py runs pytest on test files it writes
HERE = Path(__file__).resolve().parent
SLOW_MODULES = frozenset({
    "test_adversarial", "test_bots_runtime", "test_builds", "test_check", "test_cluster",
    "test_cluster_club", "test_cluster_tls", "test_containers", "test_cpp_bot", "test_dead_ends",
    "test_doc_commands", "test_extend", "test_fairness_bench", "test_first_evening",
    "test_gauntlet", "test_guides", "test_league", "test_live", "test_live_browser",
    "test_one_game", "test_play", "test_readme", "test_records", "test_replay",
    "test_report_browser", "test_report_build", "test_sandbox",
    "test_sandbox_escape", "test_sdk", "test_server_api", "test_server_bodies",
    "test_server_botpage", "test_server_browser", "test_server_datafolder", "test_server_docs",
    "test_server_guards", "test_server_hostile_specs", "test_server_queue", "test_server_routes",
    "test_server_runner", "test_server_season", "test_server_serve", "test_server_signin",
    "test_server_competitions", "test_competition_browser",
    "test_store_size", "test_submit", "test_terminal", "test_wheel", "test_wire_faults",
})

WHY = ("the bubblewrap sandbox cannot start: `bwrap` (apt-get install bubblewrap), `prlimit` "
       "or `setpriv` missing, or `bwrap ... true` failed on this machine")


def sandbox_required() -> bool:
    """True where a sandbox test must not skip: CI, or wherever bubblewrap is installed."""
    return os.environ.get("REFEREE_REQUIRE_SANDBOX") == "1" or shutil.which("bwrap") is not None


# The terminal's size as the run was started with it. A pytest-xdist worker (README's test
# command) finds COLUMNS=80 and LINES=24 set in its environment where the run had none, and the
# `referee` commands the tests start would then wrap their lines at 80 columns.
_SIZE_VARIABLES = ("COLUMNS", "LINES")


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node) -> None:  # noqa: ANN001 (xdist's WorkerController)
    """In the controller, for each worker: the run's own terminal size variables."""
    node.workerinput["referee_size"] = {name: os.environ.get(name) for name in _SIZE_VARIABLES}


def _terminal_size_as_started(config: pytest.Config) -> None:
    """In a worker: COLUMNS and LINES as the run had them (unset where it had none)."""
    started = getattr(config, "workerinput", {}).get("referee_size")
    if started is None:
        return
    for name, value in started.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


def pytest_configure(config: pytest.Config) -> None:
    _terminal_size_as_started(config)
    # A test run started in the background of a non-interactive shell (nohup, `cmd &`) inherits
    # SIGINT ignored, and so would every process it starts: the tests that press Ctrl-C on a
    # referee or a bot would see nothing happen. A handler of our own is reset to the default
    # in each child at exec, as a terminal would have it.
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    # A slow module renamed must be renamed here too (else its tests would turn quick unseen).
    gone = sorted(name for name in SLOW_MODULES if not (HERE / f"{name}.py").exists())
    if gone:
        raise pytest.UsageError(f"tests/conftest.py: SLOW_MODULES names no such module: {gone}")
    config.addinivalue_line("markers", "sandbox: needs a working bubblewrap sandbox (fails in "
                                       "CI when it cannot start, skips elsewhere)")


_TEMP_AT_START = tempfile.gettempdir()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark `slow` every test of SLOW_MODULES and every test that reaches something heavy
    (lane_support.item_heavy); refuse a run whose collection moved the process's
    temporary folder (a module importing the club's web process does, for its uploads): every
    tmp_path would then lie in a club's data folder, which the sandbox refuses to show."""
    if tempfile.gettempdir() != _TEMP_AT_START:
        raise pytest.UsageError(f"collecting the tests moved the temporary folder from "
                                f"{_TEMP_AT_START} to {tempfile.gettempdir()}: restore it")
    for item in items:
        if item.get_closest_marker("slow") is None and \
                (item.path.stem in SLOW_MODULES or item_heavy(item)):
            item.add_marker(pytest.mark.slow)


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("sandbox") is None or sandbox_available():
        return
    if sandbox_required():
        pytest.fail(f"this machine is set up for the sandbox, but {WHY}", pytrace=False)
    pytest.skip(WHY)
