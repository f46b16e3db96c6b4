"""Every command README.md, docs/league.md, docs/report.md, docs/ratings.md and docs/bot-spec.md
show is run here, in a folder laid out as the docs assume (sample_bots/, bots/, league-out/
...), from the docs' own text. (docs/containers.md's commands need podman and images:
tests/test_containers.py; docs/cluster.md's a dask cluster: tests/test_cluster.py.)

Each `referee ...` line of a doc's sh blocks is a key of RUNS: run as it stands (None), or in
the runnable form given (placeholders filled in, optional [--flags] given, a league kept small).
A doc line that is not in RUNS fails `test_every_command_of_the_docs_is_run`: a command added to
a doc gets a run here, and one changed in a doc is run as changed. The guides in docs/bots/
are followed by tests/test_guides.py, the README's main command by tests/test_readme.py.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
import uuid
from pathlib import Path

import pytest
from doc_support import ROOT, shell_commands
from league_support import install_test_bot

from referee.league.folder import LeagueFolder

SEED = "58209749445923078164062862089986280348"
# new.toml and old.toml of the gauntlet: two bots that are not in the field, each in a folder
# of its own (a league refuses two specs that share one), laid out by the workspace fixture
NEW, OLD = "contenders/honest.toml", "contenders/noter.toml"
# doc line -> (the command run, or None for the line itself; text its output must hold)
RUNS: dict[str, dict[str, tuple[str | None, str]]] = {
    "docs/league.md": {
        "referee --help": (None, "Commands:"),
        # (run by the fixture, which builds league-out/ with it: 25 games per bot)
        "referee league bots/*.toml": (None, "75/75 games recorded"),
        "referee league season.toml": (
            "referee league season.toml --games 6 --players 3", "6/6 games recorded"),
        "referee league --resume --out league-out": (None, "75/75 games recorded"),
        'sqlite3 league-out/league.db "select idx, bots, places from games limit 5"':
            (None, "0|"),
    },
    "README.md": {
        "referee rules": (None, "classic"),
        "referee rules boulevard": (None, 'preset = "boulevard"'),
        "referee simulate --rules biggy-slot --players 4 --games 1000 --seed 1 [--policy greedy] "
        "[--json] [--replay games.jsonl]": (
            "referee simulate --rules biggy-slot --players 4 --games 1000 --seed 1 --policy "
            "greedy --json --replay games.jsonl", '"games": 1000'),
        "referee match sample_bots/greedy.toml sample_bots/greedy-js.toml [--rules boulevard] "
        "[--replay game.json] [-v]": (
            "referee match sample_bots/greedy.toml sample_bots/greedy-js.toml --rules boulevard "
            "--replay game.json -v", "greedy-js"),
        "referee check mybot.toml": ("referee check bots/greedy.toml", "greedy conforms"),
        # a person's answers from a pipe: the first choice every time (docs/play.md)
        "referee play [BOT.toml...] [--players 3] [--seed SEED]": (
            "referee play sample_bots/greedy.toml --players 3 --seed 7 < <(yes 1)",
            "record saved in play-g"),
        "referee league sample_bots/*.toml [--games N] [--players 2-4] [--seed SEED] "
        "[--duplicate] [-j J] [--out DIR] [--resume]": (
            f"referee league sample_bots/*.toml --games 8 --players 2-4 --seed {SEED} "
            "--duplicate -j 2 --out dup-out --quiet && referee league sample_bots/*.toml "
            f"--games 8 --players 2-4 --seed {SEED} --duplicate -j 2 --out dup-out --resume",
            "recorded, finished"),
        "referee league season.toml": (
            "referee league season.toml --games 6 --players 3", "6/6 games recorded"),
        "referee league sample_bots/*.toml --until-settled": (
            "referee league sample_bots/*.toml --until-settled --games 8 --max-games 16 "
            "--out settled-out", "games recorded"),
        "referee league --out league-out --add new.toml": (
            "cp -r sample_bots/montecarlo sample_bots/montecarlo.toml bots/ && "
            "referee league --out league-out --add bots/montecarlo.toml", "montecarlo"),
        "referee gauntlet new.toml --baseline old.toml --field sample_bots/*.toml": (
            f"referee gauntlet {NEW} --baseline {OLD} --field sample_bots/*.toml --max-games 24 "
            "--players 3", "honest"),
        "referee table league-out": (None, "League table"),
        "referee show league-out 12": (None, "Game over. Ranking"),
        "referee export league-out --out games.jsonl": (None, "games.jsonl"),
        "referee verify league-out": (None, "match their replay"),
        "referee report league-out [--open]": (
            "referee report league-out --open", "report: league-out/report/index.html"),
        "referee match a.toml b.toml --html game.html": (
            "referee match bots/greedy.toml bots/random.toml --html game.html",
            "replay page written to game.html"),
        # The club server runs until stopped: on a free port until it answers, then SIGTERM.
        "referee serve [--data DIR] [--season FILE] [--host 127.0.0.1] [--port 8000] "
        "[--cluster URL|local:N]": (
            f"{sys.executable} {ROOT}/tests/serve_briefly.py --data club-data --host 127.0.0.1",
            "club server at http://127.0.0.1:"),
    },
    "docs/ratings.md": {
        "referee league bots/*.toml --until-settled --max-games 2000": (
            "referee league bots/*.toml --until-settled --games 6 --max-games 12 "
            "--out settled-bots", "games recorded"),
        "referee league --out season --add bots/newcomer.toml": (
            "mkdir -p new && cp -r sample_bots/montecarlo sample_bots/montecarlo.toml new/ && "
            "referee league bots/greedy.toml bots/random.toml --games 4 --players 2 --out season "
            "--quiet && referee league --out season --add new/montecarlo.toml", "montecarlo"),
        "referee gauntlet new.toml --baseline old.toml --field bots/*.toml": (
            f"referee gauntlet {NEW} --baseline {OLD} --field bots/*.toml --max-games 24 "
            "--players 3 --out gauntlet-bots", "honest"),
    },
    "docs/bot-spec.md": {
        "referee check bots/alice.toml": ("referee check bots/random.toml", "random conforms"),
    },
    "docs/report.md": {
        "referee show league-out 12": (None, "Game over. Ranking"),
        "referee show league-out g3f9c0a1b2c3d4e5f6": ("referee show league-out {id12}",
                                                       "Game {id12}"),
        "referee show league-out 12 --json": (None, '"events"'),
        "referee show game.json": (
            "referee match bots/greedy.toml bots/random.toml --replay game.json --seed "
            f"{SEED} && referee show game.json", "Game over. Ranking"),
        "referee show games.jsonl 3": (
            "referee export league-out --out games.jsonl && referee show games.jsonl 3",
            "Game {id2}"),
        "referee export league-out": (None, "export"),
        "referee export league-out --out games.jsonl": (None, "games.jsonl"),
        "referee export league-out --out games.json": (
            "referee export league-out --out games.json && python3 -c \"import json; "
            "print(len(json.load(open('games.json'))), 'in an array')\"", "75 in an array"),
        "referee export league-out --games 0-9,12,g3f9c0a1b2c3d4e5": (
            "referee export league-out --games 0-9,12,{id20} --out sel", "12"),
        "referee verify league-out": (None, "match their replay"),
        "referee verify games.jsonl g12.json": (
            "cp league-out/export/{id12}.json g12.json && referee verify games.jsonl g12.json",
            "76 records checked, 76 match their replay"),
        "referee report league-out": (None, "report: league-out/report/index.html"),
        "referee report league-out --out site/ --open": (None, "site"),
        "referee match sample_bots/greedy.toml sample_bots/random.toml --html game.html": (
            None, "replay page written to game.html"),
    },
}


def doc_commands(doc: str) -> list[str]:
    """The commands of a doc that are run here: its `referee` lines, and league.md's sqlite3."""
    text = (ROOT / doc).read_text()
    extra = re.findall(r"^(sqlite3 .*)$", text, re.M)
    return shell_commands(ROOT / doc) + extra


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder as the docs assume: sample_bots/, bots/ (three bots, one of them copied from
    sample_bots as docs/league.md says), season.toml (docs/league.md's), and league-out/ played
    by docs/league.md's `referee league bots/*.toml`."""
    top = tmp_path_factory.mktemp("docs")
    shutil.copytree(ROOT / "sample_bots", top / "sample_bots",
                    ignore=shutil.ignore_patterns("node_modules", "target", "__pycache__"))
    (top / "bots").mkdir()
    for contender in (NEW, OLD):
        install_test_bot(top / "contenders", Path(contender).stem)
    copy = re.search(r"`(cp -r sample_bots/greedy-js [^`]*bots/)`",
                     (ROOT / "docs" / "league.md").read_text().replace("\n", " "))
    assert copy, "docs/league.md no longer shows how to copy a sample bot into bots/"
    run(top, copy.group(1))
    run(top, "cp -r sample_bots/greedy sample_bots/greedy.toml sample_bots/random "
             "sample_bots/random.toml bots/")
    league_md = (ROOT / "docs" / "league.md").read_text()
    season = re.search(r"```toml\n(# season\.toml\n.*?)```", league_md, re.S)
    assert season, "docs/league.md no longer shows season.toml"
    (top / "season.toml").write_text(season.group(1))
    assert tomllib.loads(season.group(1))["bots"] == ["bots/*.toml"]
    done = run(top, "referee league bots/*.toml")
    assert "75/75 games recorded" in done.stdout, done.stdout
    return top


def run(top: Path, command: str) -> subprocess.CompletedProcess[str]:
    """Run a doc's command line in `top` with this venv's referee; AssertionError if it fails."""
    env = {**os.environ, "REFEREE_RUN_ID": uuid.uuid4().hex[:12], "COLUMNS": "100",
           "BROWSER": "true",   # --open hands the page to a browser that does nothing
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", command], cwd=top, env=env,
                          capture_output=True, text=True, timeout=1200, check=False)
    assert done.returncode == 0, f"{command}\n{done.stdout}\n{done.stderr}"
    return done


def game_ids(top: Path) -> dict[str, str]:

    store = LeagueFolder(top / "league-out").open_store()
    try:
        rows = store.db.execute("SELECT idx, game_id FROM games").fetchall()
    finally:
        store.close()
    return {f"id{index}": game_id for index, game_id in rows}


def test_every_command_of_the_docs_is_run() -> None:
    for doc, runs in RUNS.items():
        shown = doc_commands(doc)
        assert shown, f"{doc} shows no command"
        missing = [line for line in shown if line not in runs]
        assert not missing, f"{doc} shows commands no test runs (add them to RUNS): {missing}"
        gone = [line for line in runs if line not in shown]
        assert not gone, f"RUNS lists commands {doc} no longer shows: {gone}"


# In this order: README.md's `--add` changes league-out/, which docs/report.md counts.
@pytest.mark.parametrize("doc", ["docs/league.md", "docs/report.md", "docs/ratings.md",
                                 "docs/bot-spec.md", "README.md"])
def test_the_commands_of_a_doc_run_as_shown(workspace: Path, doc: str) -> None:
    ids = game_ids(workspace)
    for line in doc_commands(doc):
        command, expected = RUNS[doc][line]
        command = (command or line).format(**ids)
        if command == "referee league bots/*.toml":
            continue   # the fixture ran it: league-out/ is its league
        done = run(workspace, command)
        assert expected.format(**ids) in done.stdout + done.stderr, \
            f"{command}: no {expected!r} in\n{done.stdout}\n{done.stderr}"
    if doc == "docs/report.md":
        assert len(list((workspace / "league-out" / "export").glob("*.json"))) == 75
        assert sorted(p.name for p in (workspace / "sel").iterdir()) == sorted(
            f"{ids[f'id{n}']}.json" for n in [*range(10), 12, 20])
        assert (workspace / "site" / "index.html").is_file()
