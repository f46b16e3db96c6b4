"""The quick lane by construction: a test is slow because of what it starts.

A test (through its own code, the fixtures it asks for, or any helper of `tests/` they call, to
any depth) that reaches one of HEAVY (a server, a season runner, a browser, a league, a
container, a `referee` process kept running) is marked `slow` at collection, wherever it lives;
`SLOW_MODULES` in conftest.py is left for modules whose tests run the `referee` command
line, which no name can tell apart from a quick `referee rules`.

What still lands in the quick lane is held to it: in a run that leaves the slow tests out
(`-m "not slow"`), a test whose call takes more than QUICK_LIMIT_S fails, naming its time, so
a heavy test cannot slow the lane unseen.
"""

from __future__ import annotations

import os
import sys
import sysconfig
import types
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import referee

# Code in these folders is not followed: the referee package and the installed libraries.
NOT_OURS = tuple({os.path.dirname(os.path.dirname(os.path.abspath(referee.__file__))) + os.sep
                  + "referee" + os.sep, *(sysconfig.get_paths()[k] for k in ("stdlib",
                  "platstdlib", "purelib", "platlib"))})

# What starts something heavy, by the module and name a test reaches it by.
HEAVY: dict[str, str] = {
    "server_support.ServerProcess": "a club server",
    "server_support.play_season": "a club's season",
    "runner_support.RunnerProcess": "a season runner",
    "runner_support.Club": "a club's web process",
    "cli_support.start_referee": "a referee process",
    "report_support.start_browser": "a browser",
    "report_support.play_league": "a league",
    "container_support.need_runtime": "containers",
    "container_support.bot_image": "a container image",
    "referee.league.runner.run_league": "a league",
}
HEAVY_MODULES = ("selenium", "distributed", "dask")   # a browser, a cluster

# A quick test's call may take this long (seconds) before the quick lane fails it: a few
# seconds of honest work on a busy two-core machine. REFEREE_QUICK_LIMIT_S changes it.
QUICK_LIMIT_S = float(os.environ.get("REFEREE_QUICK_LIMIT_S", "8"))


def _code_objects(code: types.CodeType) -> Iterator[types.CodeType]:
    """`code` and every function, lambda and comprehension defined inside it."""
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _code_objects(const)


def _ours(value: Any) -> bool:
    """True for a function or class of the tests (followed further): defined in a file that is
    neither the referee package's nor an installed library's."""
    code = getattr(value, "__code__", None)
    if code is not None:
        return not os.path.abspath(code.co_filename).startswith(NOT_OURS)
    module = sys.modules.get(getattr(value, "__module__", None) or "")
    return isinstance(value, type) and _ours_module(module)


def _ours_module(module: types.ModuleType | None) -> bool:
    where = getattr(module, "__file__", None)
    return where is not None and not os.path.abspath(where).startswith(NOT_OURS)


def _key(value: Any) -> str:
    """"module.qualname" of a function or class, as HEAVY names them."""
    return f"{getattr(value, '__module__', '')}.{getattr(value, '__qualname__', '')}"


def heavy_reached(value: Any, seen: set[int] | None = None) -> str | None:
    """What heavy thing `value` (a test function, a fixture function, a helper or a class of
    tests/) starts, following the globals its code names; None if nothing."""
    seen = set() if seen is None else seen
    if id(value) in seen:
        return None
    seen.add(id(value))
    if isinstance(value, types.ModuleType):
        return "a browser or a cluster" if value.__name__.startswith(HEAVY_MODULES) else None
    if _key(value) in HEAVY:
        return HEAVY[_key(value)]
    if isinstance(value, type):
        members = [m for m in vars(value).values() if callable(m) or isinstance(m, property)]
        return next((what for m in members if (what := heavy_reached(
            m.fget if isinstance(m, property) else m, seen))), None)
    function = getattr(value, "__wrapped__", value)
    code = getattr(function, "__code__", None)
    if code is None or not _ours(function):
        return None
    names = getattr(function, "__globals__", {})
    for inner in _code_objects(code):
        for name in inner.co_names:
            if name not in names:
                continue
            target = names[name]
            followed = isinstance(target, types.ModuleType) or _ours(target) or \
                _key(target) in HEAVY
            if followed and (what := heavy_reached(target, seen)) is not None:
                return what
    return None


def item_heavy(item: pytest.Item) -> str | None:
    """What `item` starts, through its function or the fixtures it asks for; None if nothing."""
    function: Callable[..., Any] | None = getattr(item, "obj", None)
    if function is not None and (what := heavy_reached(function)):
        return what
    info = getattr(item, "_fixtureinfo", None)
    for definitions in (info.name2fixturedefs.values() if info else ()):
        for definition in definitions:
            if (what := heavy_reached(definition.func)):
                return what
    return None


def quick_lane(config: pytest.Config) -> bool:
    """True for a run that leaves the slow tests out (`-m "not slow"`)."""
    return "not slow" in (config.option.markexpr or "")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):  # noqa: ANN201
    """In the quick lane, a quick test's call over QUICK_LIMIT_S fails with its time."""
    outcome = yield
    report = outcome.get_result()
    if call.when != "call" or not report.passed or not quick_lane(item.config) or \
            item.get_closest_marker("slow") is not None:
        return
    if call.duration > QUICK_LIMIT_S:
        report.outcome = "failed"
        report.longrepr = (f"{item.nodeid} took {call.duration:.1f} s in the quick lane "
                           f"(limit {QUICK_LIMIT_S:g} s, REFEREE_QUICK_LIMIT_S): make it quicker, "
                           f"or mark it slow (tests/lane_support.py says how tests are sorted)")
