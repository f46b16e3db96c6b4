"""`referee check`: the conformance report, with the test bots of tests/bots/."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from cli_support import start_referee

from referee.bots.process import RUN_ID
from referee.checking.conformance import (
    PROBES,
    CheckOptions,
    find_state,
    latency_summary,
    processes_with_run_id,
    run_check,
)
from referee.engine import PRESETS, preset

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs /proc")

BOTS = Path(__file__).parent / "bots"
HONEST = BOTS / "honest.toml"


def checking(*args: str) -> subprocess.Popen[str]:
    """`referee check ARGS` started among the test bots, its output piped."""
    return start_referee("check", *args, cwd=BOTS, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)


def test_honest_bot_passes_every_check() -> None:
    seen = []
    report = run_check(HONEST, CheckOptions(opponents=(HONEST,)), listener=seen.append)
    assert report.ok, "\n".join(report.lines())
    assert seen == report.checks
    names = [check.name for check in report.checks]
    for name in ("spec", "build", "start", "hello: bot_name", "hello: bot_version",
                 "hello: protocol_version", "hello: max_concurrent_games", "latency",
                 "shutdown", "concurrent games"):
        assert name in names
    for name, rules in PRESETS.items():
        assert f"game {name} {rules.min_players}p seat 0" in names
        last = rules.max_players - 1
        assert f"game {name} {rules.max_players}p seat {last}" in names
    assert sum(name.startswith("probe: ") for name in names) == len(PROBES)
    assert all(check.status == "PASS" for check in report.checks)
    assert report.hello == {"bot_name": "honest", "bot_version": "test-1",
                            "protocol_version": 1, "max_concurrent_games": 8}
    latency = report.latency()
    assert latency is not None and 0 < latency["p50"] <= latency["p95"] <= latency["p99"]
    data = report.to_json()
    assert data["ok"] is True and data["decisions"] == len(report.latencies_us) > 100
    json.dumps(data)
    assert processes_with_run_id(RUN_ID) == []


def test_misbehaving_bots_fail_with_the_reason() -> None:
    illegal = checking("illegal.toml", "--opponent", "honest.toml")
    hang = checking("hang.toml", "--opponent", "honest.toml", "--preset", "classic",
                    "--preset", "biggy-slot", "--json")
    broken = checking("bad_unknown_key.toml")
    dead = checking("exit_at_start.toml", "--opponent", "honest.toml")

    out, err = illegal.communicate(timeout=120)
    assert illegal.returncode == 1, err
    assert "Traceback" not in out + err
    lines = out.splitlines()
    assert lines[0] == "referee check illegal.toml"
    failed = [line for line in lines if line.startswith("FAIL")]
    assert any(line.startswith("FAIL  game classic 2p seat 0") for line in failed)
    assert all("illegal" in line for line in failed)
    assert "is not legal here" in failed[0] and "forfeited" in failed[0]
    assert any("probe: slot rule R31" in line for line in failed)
    assert any(line.startswith("PASS  hello: bot_name") for line in lines)
    assert lines[-1].startswith("illegal does NOT conform: ")

    out, err = hang.communicate(timeout=120)
    assert hang.returncode == 1, err
    report = json.loads(out)
    assert report["ok"] is False and report["bot"] == "hang"
    failed = {c["name"]: c for c in report["checks"] if c["status"] == "FAIL"}
    assert {"game classic 2p seat 0", "game classic 5p seat 4", "game biggy-slot 2p seat 0",
            "game biggy-slot 6p seat 5", "probe: single legal action"} <= set(failed)
    assert failed["game classic 2p seat 0"]["strikes"] == {"timeout": 3}
    assert "timeout: no decision within 150 ms" in failed["game classic 2p seat 0"]["detail"]
    assert all("timeout" in c["detail"] for c in failed.values())
    assert report["latency_ms"] is None   # no decision was ever answered

    out, err = broken.communicate(timeout=60)
    assert broken.returncode == 1, err
    assert "FAIL  spec" in out and "unknown key 'timeout_ms'" in out

    out, err = dead.communicate(timeout=60)
    assert dead.returncode == 1, err
    start = next(line for line in out.splitlines() if line.startswith("FAIL  start"))
    assert "exited during start-up" in start and "cannot find my model file" in start


@pytest.mark.parametrize("probe", PROBES, ids=lambda p: p.name)
def test_probe_states_exist_for_every_seed(probe) -> None:
    for seed in (1, 2, 99):
        game = find_state(preset(probe.preset), probe.players, probe.wanted, seed)
        assert game is not None and not game.is_over and probe.wanted(game)


def test_latency_summary_uses_nearest_rank() -> None:
    assert latency_summary([]) is None
    summary = latency_summary([1000 * v for v in range(1, 101)])
    assert summary == {"p50": 50.0, "p95": 95.0, "p99": 99.0, "max": 100.0}


def test_a_flooding_bot_gets_its_fail_lines_and_a_summary() -> None:
    """Issue 22, item 6: the check of flood (5000 copies of its first answer per stream) ended
    with an asyncio.CancelledError traceback and no summary in 3 of 4 runs: the referee
    cancels a flooding stream, and grpc then raises CancelledError from the stream's pending
    read or write (the GameEnd of a probe). Whichever of them races with the cancel, the check
    reports. Five checks of one preset and the probes, each stream of them cut off."""
    for _ in range(5):
        run = checking("flood.toml", "--opponent", "honest.toml", "--preset", "classic")
        out, err = run.communicate(timeout=300)
        assert "Traceback" not in out + err and "CancelledError" not in out + err, out + err
        assert run.returncode == 1, err
        lines = out.splitlines()
        failed = [line for line in lines if line.startswith("FAIL")]
        assert any(line.startswith("FAIL  game classic 2p seat 0") for line in failed)
        assert all("protocol" in line for line in failed), failed
        assert lines[-1].startswith("flood does NOT conform: "), lines[-1]


def test_the_default_opponents_slow_start_is_not_the_checked_bots_fault(tmp_path: Path,
                                                                          monkeypatch) -> None:
    """The default opponents are the referee's own: on a busy machine one took longer than its
    spec's start-up limit and failed a student's check. Here a default opponent that needs 3 s
    to start under a 1 s limit (a stand-in for the sample bot on a loaded machine) still plays."""
    from league_support import install_test_bot

    import referee.checking.conformance

    spec = install_test_bot(tmp_path, "slow-start", source="honest")
    folder = spec.parent / "slow-start"
    (folder / "slow_start.py").write_text(
        "import runpy, time\ntime.sleep(3)\n"
        "runpy.run_path('honest/main.py', run_name='__main__')\n")
    (folder / "slow_start.py").chmod(0o644)
    spec.write_text('name = "slow-start"\ncommand = ["{python}", "slow_start.py"]\n'
                    'workdir = "slow-start"\n[limits]\nstartup_ms = 1000\n')
    monkeypatch.setattr(referee.checking.conformance, "default_opponents", lambda: [spec])
    report = run_check(HONEST, CheckOptions())
    opponents = next(check for check in report.checks if check.name == "opponents")
    assert opponents.status == "PASS" and "slow-start" in opponents.detail, report.lines()
    assert report.ok, "\n".join(report.lines())


@pytest.mark.sandbox
def test_a_compile_error_is_shown_as_the_compilers_lines_under_the_fail_line(
        tmp_path: Path) -> None:
    """gcc's error, its source line and its caret each on a line of their own under the
    build's FAIL line (they were joined with ` | ` on it), in the text and the JSON."""
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "bad.c").write_text("int main(void) {\n    return 0\n}\n")
    spec = tmp_path / "bad.toml"
    spec.write_text('name = "bad"\nworkdir = "bad"\ncommand = ["./bad"]\n'
                    'build = ["gcc", "-fno-diagnostics-color", "-o", "bad", "bad.c"]\n')
    done = start_referee("check", spec, cwd=tmp_path, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    out, err = done.communicate(timeout=600)
    assert done.returncode == 1, out + err
    lines = out.splitlines()
    fail = next(i for i, line in enumerate(lines) if line.startswith("FAIL  build"))
    assert lines[fail].rstrip().endswith("failed with exit 1"), lines[fail]
    below = lines[fail + 1:fail + 6]
    assert any(line.strip().startswith("bad.c:2:") and "error:" in line
               for line in below), below
    assert any(line.strip() == "|     ^" or line.strip().endswith("^") for line in below), below
    assert all(line.startswith("        ") for line in below[:3]), below
    report = run_check(spec, CheckOptions())
    build = next(check.to_json() for check in report.checks if check.name == "build")
    assert build["detail"].endswith("failed with exit 1"), build
    assert any("error:" in line for line in build["lines"]), build
