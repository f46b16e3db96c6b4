"""Shared test set-up: tests marked `sandbox` need a working bubblewrap sandbox.

Where the sandbox is expected (bubblewrap is installed, or REFEREE_REQUIRE_SANDBOX=1 as .ci/run
sets it) and it cannot start, such a test fails with the reason instead of skipping: a broken
sandbox must never pass as "skipped" in CI. Elsewhere (a laptop without bubblewrap) it skips.
"""

from __future__ import annotations

import os
import shutil
import signal

import pytest

from referee.bots.sandbox import sandbox_available

WHY = ("the bubblewrap sandbox cannot start: `bwrap` (apt-get install bubblewrap), `prlimit` "
       "or `setpriv` missing, or `bwrap ... true` failed on this machine")


def sandbox_required() -> bool:
    """True where a sandbox test must not skip: CI, or wherever bubblewrap is installed."""
    return os.environ.get("REFEREE_REQUIRE_SANDBOX") == "1" or shutil.which("bwrap") is not None


def pytest_configure(config: pytest.Config) -> None:
    # A test run started in the background of a non-interactive shell (nohup, `cmd &`) inherits
    # SIGINT ignored, and so would every process it starts: the tests that press Ctrl-C on a
    # referee or a bot would see nothing happen. A handler of our own is reset to the default
    # in each child at exec, as a terminal would have it.
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    config.addinivalue_line("markers", "sandbox: needs a working bubblewrap sandbox (fails in "
                                       "CI when it cannot start, skips elsewhere)")


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("sandbox") is None or sandbox_available():
        return
    if sandbox_required():
        pytest.fail(f"this machine is set up for the sandbox, but {WHY}", pytrace=False)
    pytest.skip(WHY)
