"""The README shows what the program does: its sample league table is the table the main
command prints (run here with the README's seed, on 80 columns), and its figures about the
league match the schedule line the league prints.

After a change to the table, `REFEREE_UPDATE_DOCS=1 python -m pytest tests/test_readme.py`
writes the new table into README.md (then read it, and commit it with the change).
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from doc_support import ROOT, clean_env

README = ROOT / "README.md"
SAMPLE = re.compile(r"(<!-- sample-table: (.*?) -->\n```\n)(.*?)(^```)", re.S | re.M)


def main_command(text: str) -> str:
    """The `referee league ...` part of the README's main command."""
    block = text.split("<!-- main-command -->", 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    return block.strip().split("&& ")[-1]


def printed_table(stdout: str) -> str:
    """The league table as printed: from its title to its last line, trailing spaces cut."""
    lines = [line.rstrip() for line in stdout.splitlines()]
    first = next(n for n, line in enumerate(lines) if line.startswith("League table"))
    last = next(n for n in range(first, len(lines)) if lines[n].startswith("└"))
    return "\n".join(lines[first:last + 1]) + "\n"


def test_the_readme_sample_table_is_what_the_main_command_prints(tmp_path: Path) -> None:
    text = README.read_text()
    sample = SAMPLE.search(text)
    assert sample, "README.md has no <!-- sample-table: ARGS --> block"
    command = f"{main_command(text)} {sample.group(2)} --out {tmp_path / 'league'} --no-report"
    env = {**clean_env(tmp_path / "caches"), "COLUMNS": "80"}
    env.pop("XDG_CACHE_HOME")   # greedy-js's build is cached as in a reader's clone
    done = subprocess.run(["bash", "-c", command], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=1200, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    table = printed_table(done.stdout)
    if os.environ.get("REFEREE_UPDATE_DOCS"):
        README.write_text(text[:sample.start(3)] + table + text[sample.end(3):])
    assert sample.group(3) == table, f"README.md's sample table differs from:\n{table}"
    # The figures the README gives about this league are the ones it prints.
    # (at 80 columns the line wraps: its continuation lines are indented)
    schedule = re.search(r"^schedule:.*(?:\n    .*)*", done.stdout, re.M).group(0)
    schedule = " ".join(part.strip() for part in schedule.splitlines())
    claimed = re.search(r"games per bot \d+-\d+", text)
    assert claimed and claimed.group(0) in schedule, schedule
    games = re.search(r"The league plays (\d+) games at tables of (\d+)", text)
    assert games and f"schedule: {games.group(1)} games" in schedule
    assert len(table.splitlines()) == 4 + 4 + 1   # title, 3 header lines, 4 bots, bottom
