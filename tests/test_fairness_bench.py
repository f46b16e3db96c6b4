"""bench/fairness.py runs and prints the promise lines of issues 24 and 32 in their shape, with
the counts asked for (the figures themselves are the bench's, in bench/README.md)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_quick_bench_prints_the_promise_lines_with_the_requested_counts() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "fairness.py"), "--quick", "--gauntlets", "30",
         "--power-runs", "12", "--settled-runs", "3", "--duplicate-seeds", "4"],
        capture_output=True, text=True, timeout=1800, check=True)
    lines = done.stdout.splitlines()
    # each line's shape, and whether its rate meets the target
    shapes = [
        (r"gauntlet false-positive rate: (\d\.\d{3}) \((\d+)/(30)\) at alpha 0\.05( not met)?",
         lambda rate: rate <= 0.05),
        (r"gauntlet false 'better' on fields of 0 to \+-300 Elo at tables of 4, 2-5, 3-5, 2: "
         r"at most (\d\.\d{3}) "
         r"\((\d+)/(12)\) at alpha 0\.05( not met)?", lambda rate: rate <= 0.05),
        (r"gauntlet false 'not better' at \+50 Elo, fields of 0 to \+-300 Elo at tables of 4, "
         r"2-5, 3-5, 2: at most "
         r"(\d\.\d{3}) \((\d+)/(12)\) at beta 0\.05( not met)?", lambda rate: rate <= 0.05),
        (r"until-settled false separation: (\d\.\d{3}) \((\d+)/(3)\)( not met)?",
         lambda rate: rate <= 0.05),
    ]
    for shape, met in shapes:
        found = [m for line in lines if (m := re.fullmatch(shape, line))]
        assert len(found) == 1, (shape, done.stdout)
        rate, count, total = float(found[0][1]), int(found[0][2]), int(found[0][3])
        assert rate == round(count / total, 3)
        assert (found[0][4] is None) == met(rate)        # "not met" exactly when missed
    identical = [m for line in lines if (m := re.fullmatch(
        r"gauntlet, identical bots: 'not better' in (\d+) games \(before (\d+)\)( not met)?",
        line))]
    assert len(identical) == 1, done.stdout
    assert (identical[0][3] is None) == (int(identical[0][1]) < int(identical[0][2]))
    duplicate = (r"duplicate variance ratio: (\d+\.\d\d) \[(\d+\.\d\d), (\d+\.\d\d)\] "
                 r"\(4 seeds\)( not met)?")
    found = [m for line in lines if (m := re.fullmatch(duplicate, line))]
    assert len(found) == 1, done.stdout
    ratio, low, high = (float(found[0][k]) for k in (1, 2, 3))
    assert low <= high and (found[0][4] is None) == (ratio <= 0.7 and high < 1)
    assert lines[-3] == found[0][0]                        # the promises close the output
    coverage = (r"interval coverage: (\d\.\d{3}) \((\d+)/(\d+)\); cells .*; extremes .*; "
                r"(\d+) of 81 cells within 0\.93-0\.97( not met)?")
    found = re.fullmatch(coverage, lines[-2])
    assert found, done.stdout
    assert float(found[1]) == round(int(found[2]) / int(found[3]), 3)
    assert (found[5] is None) == (int(found[4]) == 81)    # met only when every cell is
    assert re.fullmatch(r"size model false rejection: \d\.\d{3} \(\d+/10\) at p < 0\.05"
                        r"( not met)?", lines[-1]), done.stdout
