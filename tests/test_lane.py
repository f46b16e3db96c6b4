"""The quick lane by construction (tests/lane_support.py): a test that reaches a server, a
browser or a league through its code, fixtures or helpers is marked slow at collection, and a
quick test that runs too long fails the quick lane."""

from __future__ import annotations

from pathlib import Path

import pytest
from lane_support import heavy_reached
from server_support import ServerProcess

HERE = Path(__file__).resolve().parent


def starts_a_server(data: Path) -> None:
    ServerProcess(data).stop()


def calls_a_helper_that_starts_one(data: Path) -> None:
    starts_a_server(data)


def adds(a: int, b: int) -> int:
    return sum((a, b))


class Holder:
    def start(self, data: Path) -> None:
        calls_a_helper_that_starts_one(data)


def use_our_conftest(pytester: pytest.Pytester) -> None:
    """A conftest for pytester's run that holds this suite's hooks (tests/conftest.py loaded
    under a name of its own, since pytester's conftest is `conftest` too)."""
    ours = str(HERE / "conftest.py")
    pytester.makeconftest(f"""
        import importlib.util, sys
        sys.path.insert(0, {str(HERE)!r})
        spec = importlib.util.spec_from_file_location("suite_conftest", {ours!r})
        suite = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(suite)
        pytest_collection_modifyitems = suite.pytest_collection_modifyitems
        pytest_runtest_makereport = suite.pytest_runtest_makereport
        """)


def test_what_a_function_starts_is_found_to_any_depth() -> None:
    # This test names starts_a_server, so it is sorted slow itself: the sorting errs that way.
    assert heavy_reached(starts_a_server) == "a club server"
    assert heavy_reached(calls_a_helper_that_starts_one) == "a club server"
    assert heavy_reached(Holder) == "a club server"
    assert heavy_reached(adds) is None
    assert heavy_reached(lambda: adds(1, 2)) is None


@pytest.mark.slow   # a pytest process of its own
def test_the_heavy_tests_of_a_module_are_slow_and_the_others_quick(
        pytester: pytest.Pytester) -> None:
    use_our_conftest(pytester)
    pytester.makepyfile(test_sorted="""
        from server_support import ServerProcess

        def helper(data):
            return ServerProcess(data)

        def test_starts_a_server(tmp_path):
            helper(tmp_path)

        def test_adds():
            assert 1 + 1 == 2
        """)
    result = pytester.runpytest_subprocess("--collect-only", "-q", "-m", "not slow")
    result.stdout.fnmatch_lines(["*test_adds*", "*1/2 tests collected (1 deselected)*"])
    assert "test_starts_a_server" not in result.stdout.str()


@pytest.mark.slow   # a pytest process of its own
@pytest.mark.parametrize("lane", [["-m", "not slow"], []], ids=["quick lane", "whole suite"])
def test_a_quick_test_over_the_limit_fails_the_quick_lane_only(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, lane: list[str]) -> None:
    monkeypatch.setenv("REFEREE_QUICK_LIMIT_S", "0.5")
    use_our_conftest(pytester)
    pytester.makepyfile(test_long="""
        import time

        def test_takes_a_while():
            time.sleep(1.5)
        """)
    result = pytester.runpytest_subprocess("-q", *lane)
    if lane:
        result.assert_outcomes(failed=1)
        result.stdout.fnmatch_lines(["*took * s in the quick lane (limit 0.5 s*mark it slow*"])
    else:
        result.assert_outcomes(passed=1)
