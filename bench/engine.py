"""Benchmark: random playouts of the `classic` rules, referee's engine vs PyPI `lasvegas` 0.2.0.

Both engines play full games (4 rounds, 8 dice per player, casinos funded up to $50,000) with a
uniformly random legal choice each turn, through their public APIs, at 2 and 5 players. The two
engines are measured side by side in one run, interleaved rep by rep, and the report gives the
median games per second of each and the ratio referee / lasvegas.

`lasvegas` is never a dependency of the project: on first run this script creates its own
virtual environment (bench/.lasvegas-venv, gitignored) with `python -m venv` and installs
`lasvegas==0.2.0` there. Every measurement runs in a fresh subprocess with the same embedded
worker script: the venv's python for lasvegas, the current interpreter for referee (the same
Python version, since the venv is made from it). The worker warms up, then times K playouts
(game construction, every turn and the final ranking) and prints the elapsed time as JSON.

lasvegas is configured to play the same game as referee's `classic` preset: no neutral dice
(lasvegas adds neutral dice at 2-4 players by default) and the official 54-note deck (lasvegas
defaults to a 48-note deck). Pass `--lasvegas-rules package` to time its defaults instead.

Usage:
    python bench/engine.py                  # 1000 games x 7 reps at 2 and 5 players
    python bench/engine.py --quick          # 200 games x 3 reps
    python bench/engine.py --games 500 --reps 5 --only lasvegas

Exit status: 0 when the benchmark ran (whether or not the target ratio is met), 1 on errors.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_VENV = REPO_ROOT / "bench" / ".lasvegas-venv"
LASVEGAS_VERSION = "0.2.0"
LASVEGAS_REQUIREMENT = f"lasvegas=={LASVEGAS_VERSION}"
ENGINES = ("referee", "lasvegas")
RECORD = False  # whether referee keeps its game record while timed (--record)
PLAYER_COUNTS = (2, 5)
TARGET_RATIO = 5.0
DEFAULT_GAMES = 1000
DEFAULT_REPS = 7
QUICK_GAMES = 200
QUICK_REPS = 3
CHECK_GAMES = 200  # untimed games per engine and player count for the sanity checks
TURNS_TOLERANCE = 0.10  # relative gap in mean turns per game that triggers a warning
WORKER_TIMEOUT = 1800.0  # seconds for one worker process

# The official 2012 deck (54 notes), value -> count; the same as referee's `classic` deck (R2).
CLASSIC_DECK: dict[int, int] = {
    10_000: 6, 20_000: 8, 30_000: 8, 40_000: 6, 50_000: 6,
    60_000: 5, 70_000: 5, 80_000: 5, 90_000: 5,
}
CLASSIC_THRESHOLD = 50_000
CLASSIC_ROUNDS = 4
CLASSIC_DICE = 8

# The worker runs under both interpreters (the lasvegas venv cannot import referee, and the
# project's interpreter must not import lasvegas), so it is plain source run with `python -I -c`.
# argv[1] is a JSON object: engine, players, games, warmup, seed, mode ("time" or "check"),
# repo_root, and for lasvegas `rules` ("matched" or "package"), deck, threshold, rounds, dice.
WORKER = r'''
import json
import random
import sys
import time

cfg = json.loads(sys.argv[1])
players = cfg["players"]
seed = cfg["seed"]


def referee_engine():
    """Return (playout, turn counter) for referee: a new Game per playout, random choices."""
    sys.path.insert(0, cfg["repo_root"])
    from referee.engine import Game, preset

    rules = preset("classic")
    rng = random.Random(seed)
    turns = [0]

    def playout(i):
        game = Game(rules, players=players, seed=seed + i, record=cfg["record"])
        while not game.is_over:
            game.apply(rng.choice(game.legal_actions()))
        return game.ranking()

    def counted_playout(i):
        game = Game(rules, players=players, seed=seed + i, record=cfg["record"])
        while not game.is_over:
            game.apply(rng.choice(game.legal_actions()))
            turns[0] += 1
        ranking = game.ranking()
        assert len(ranking) == players, ranking
        return {}

    return playout, counted_playout, turns


def lasvegas_engine():
    """Return (playout, checked playout, turn counter) for lasvegas 0.2.0."""
    import lasvegas
    from lasvegas import BasePlayer, Game
    from lasvegas.act import random_play, random_roll

    assert lasvegas.__version__ == "0.2.0", lasvegas.__version__
    if cfg["rules"] == "matched":
        gameargs = {
            "num_players": players,
            "num_xtr_players": 0,  # no neutral dice, as in referee's classic preset
            "num_own_dice": cfg["dice"],
            "num_rounds": cfg["rounds"],
            "casinos_min": cfg["threshold"],
            "bills_pool": {int(k): v for k, v in cfg["deck"].items()},
        }
    else:
        gameargs = {"num_players": players}
    random.seed(seed)  # lasvegas draws from the global `random` module
    bots = [
        BasePlayer(name=f"random {i}", play_func=random_play, roll_func=random_roll)
        for i in range(players)
    ]
    turns = [0]

    def playout(i):
        game = Game(bots, **gameargs)
        game.run()
        return game.env.rankings()

    def checked_playout(i):
        game = Game(bots, **gameargs)
        env = game.env
        stats = {"rounds": 0, "underfunded": 0, "dice_left": 0, "dice_per_round": set()}
        draw_bills, end_round, play = env._draw_bills, env._end_round, env.play

        def draw_bills_checked():
            draw_bills()
            stats["rounds"] += 1
            stats["dice_per_round"].add(int(env.dice[: env.num_players].sum()))
            stats["underfunded"] += sum(int(sum(b) < env.casinos_min[c])
                                        for c, b in enumerate(env.casinos_bills))

        def end_round_checked():
            stats["dice_left"] += int(env.dice[: env.num_players].sum())
            end_round()

        def play_counted(played):
            turns[0] += 1
            play(played)

        env._draw_bills = draw_bills_checked
        env._end_round = end_round_checked
        env.play = play_counted
        game.run()
        assert len(env.rankings()) == env.num_collectors
        return stats

    return playout, checked_playout, turns


playout, checked_playout, turns = (
    referee_engine() if cfg["engine"] == "referee" else lasvegas_engine()
)
if cfg["mode"] == "time":
    games = cfg["games"]
    for i in range(cfg["warmup"]):
        playout(games + i)  # seeds the timed games do not use
    start = time.perf_counter()
    for i in range(games):
        playout(i)
    elapsed = time.perf_counter() - start
    print(json.dumps({"games": games, "seconds": elapsed}))
else:
    report = {"games": cfg["games"], "rounds": set(), "underfunded": 0, "dice_left": 0,
              "dice_per_round": set()}
    for i in range(cfg["games"]):
        stats = checked_playout(i)
        if stats:
            report["rounds"].add(stats["rounds"])
            report["underfunded"] += stats["underfunded"]
            report["dice_left"] += stats["dice_left"]
            report["dice_per_round"] |= stats["dice_per_round"]
    report["turns_per_game"] = turns[0] / cfg["games"]
    report["rounds"] = sorted(report["rounds"])
    report["dice_per_round"] = sorted(report["dice_per_round"])
    print(json.dumps(report))
'''


class BenchError(Exception):
    """Something prevented the benchmark from running (exit status 1)."""


@dataclass
class Cell:
    """All measurements of one engine at one player count."""

    engine: str
    players: int
    rates: list[float] = field(default_factory=list)  # games per second, one per rep
    turns_per_game: float | None = None

    @property
    def median(self) -> float:
        """Median games per second over the reps."""
        return statistics.median(self.rates)


def venv_python(venv: Path) -> Path:
    """The python executable of the virtual environment at `venv`."""
    if os.name == "nt":
        return venv / "Scripts" / "python.exe"
    return venv / "bin" / "python"


def installed_lasvegas(python: Path) -> str | None:
    """The lasvegas version installed for `python`, or None if it has none."""
    code = "import importlib.metadata as m; print(m.version('lasvegas'))"
    proc = subprocess.run([str(python), "-I", "-c", code], capture_output=True, text=True)
    return proc.stdout.strip() if proc.returncode == 0 else None


def ensure_lasvegas_venv(venv: Path) -> Path:
    """Create `venv` with lasvegas 0.2.0 if needed and return its python executable."""
    python = venv_python(venv)
    if python.exists() and installed_lasvegas(python) == LASVEGAS_VERSION:
        return python
    if not python.exists():
        log(f"creating virtual environment {venv}")
        _run_setup([sys.executable, "-m", "venv", str(venv)], "python -m venv")
    log(f"installing {LASVEGAS_REQUIREMENT} into {venv}")
    _run_setup(
        [str(python), "-m", "pip", "install", "--disable-pip-version-check", "-q",
         LASVEGAS_REQUIREMENT],
        f"pip install {LASVEGAS_REQUIREMENT}",
    )
    found = installed_lasvegas(python)
    if found != LASVEGAS_VERSION:
        raise BenchError(
            f"{venv} has lasvegas {found!r} after install, expected {LASVEGAS_VERSION}"
        )
    return python


def _run_setup(cmd: list[str], what: str) -> None:
    """Run a setup command; raise BenchError with its output if it fails."""
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise BenchError(f"{what} failed (exit {proc.returncode}):\n{proc.stdout}{proc.stderr}")


def run_worker(python: Path | str, config: dict[str, Any]) -> dict[str, Any]:
    """Run the embedded worker with `config` under `python` and return its JSON report."""
    cmd = [str(python), "-I", "-c", WORKER, json.dumps(config)]
    try:
        proc = subprocess.run(
            cmd, capture_output=True, text=True, cwd=REPO_ROOT, timeout=WORKER_TIMEOUT
        )
    except subprocess.TimeoutExpired as exc:
        raise BenchError(
            f"{config['engine']} worker timed out after {WORKER_TIMEOUT:.0f}s"
        ) from exc
    if proc.returncode != 0:
        tail = "\n".join(proc.stderr.strip().splitlines()[-15:])
        hint = ""
        if config["engine"] == "referee" and "referee.engine" in proc.stderr:
            hint = "\n(is referee.engine importable? try --only lasvegas)"
        raise BenchError(
            f"{config['engine']} worker ({config['players']} players) failed with exit "
            f"{proc.returncode}:\n{tail}{hint}"
        )
    try:
        return json.loads(proc.stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError) as exc:
        raise BenchError(f"{config['engine']} worker printed no JSON: {proc.stdout!r}") from exc


def worker_config(
    engine: str, players: int, games: int, seed: int, mode: str, lasvegas_rules: str
) -> dict[str, Any]:
    """The worker's configuration for one run."""
    return {
        "engine": engine,
        "players": players,
        "games": games,
        "warmup": min(50, max(5, games // 10)),
        "seed": seed,
        "mode": mode,
        "repo_root": str(REPO_ROOT),
        "record": RECORD,
        "rules": lasvegas_rules,
        "deck": CLASSIC_DECK,
        "threshold": CLASSIC_THRESHOLD,
        "rounds": CLASSIC_ROUNDS,
        "dice": CLASSIC_DICE,
    }


def log(message: str) -> None:
    """Progress output, on stderr so that stdout holds only the report."""
    print(message, file=sys.stderr, flush=True)


def check_engines(
    pythons: dict[str, Path | str],
    player_counts: Sequence[int],
    games: int,
    lasvegas_rules: str,
    cells: dict[tuple[str, int], Cell],
) -> list[str]:
    """Untimed sanity playouts: full games on both sides, similar turns per game.

    Records mean turns per game in `cells`, returns warnings, and raises BenchError when
    lasvegas does not play a full classic game (the comparison would be meaningless).
    """
    warnings: list[str] = []
    for players in player_counts:
        for engine, python in pythons.items():
            config = worker_config(engine, players, games, 10_000_019, "check", lasvegas_rules)
            report = run_worker(python, config)
            cells[engine, players].turns_per_game = report["turns_per_game"]
            if engine != "lasvegas":
                continue
            if report["rounds"] != [CLASSIC_ROUNDS] or report["dice_left"]:
                raise BenchError(
                    f"lasvegas did not play full games at {players} players: rounds "
                    f"{report['rounds']}, dice left at round ends {report['dice_left']}"
                )
            if report["underfunded"]:
                warnings.append(
                    f"lasvegas funded {report['underfunded']} casinos below the threshold at "
                    f"{players} players in {games} games (its bank ran out)"
                )
            if lasvegas_rules == "matched" and report["dice_per_round"] != [CLASSIC_DICE * players]:
                raise BenchError(
                    f"lasvegas dealt {report['dice_per_round']} dice per round at {players} "
                    f"players, expected {CLASSIC_DICE * players}"
                )
        if len(pythons) == 2:
            ours = cells["referee", players].turns_per_game
            theirs = cells["lasvegas", players].turns_per_game
            if ours and theirs and abs(ours - theirs) > TURNS_TOLERANCE * theirs:
                warnings.append(
                    f"mean turns per game differ at {players} players: referee {ours:.1f}, "
                    f"lasvegas {theirs:.1f}: the engines may not play the same game"
                )
    return warnings


def measure(
    pythons: dict[str, Path | str],
    player_counts: Sequence[int],
    games: int,
    reps: int,
    seed: int,
    lasvegas_rules: str,
    cells: dict[tuple[str, int], Cell],
) -> None:
    """Time `reps` x `games` playouts per cell, interleaving engines (ABBA order) rep by rep."""
    engines = list(pythons)
    for rep in range(reps):
        order = engines if rep % 2 == 0 else engines[::-1]
        for players in player_counts:
            for engine in order:
                config = worker_config(
                    engine, players, games, seed + rep * 1_000_003, "time", lasvegas_rules
                )
                report = run_worker(pythons[engine], config)
                rate = report["games"] / report["seconds"]
                cells[engine, players].rates.append(rate)
                log(f"rep {rep + 1}/{reps}  {players}p  {engine:<8}  {rate:>9,.0f} g/s")


def format_rate(cell: Cell) -> str:
    """'median [min-max]' games per second."""
    return f"{cell.median:,.0f} [{min(cell.rates):,.0f}-{max(cell.rates):,.0f}]"


def report(
    engines: Sequence[str],
    player_counts: Sequence[int],
    games: int,
    reps: int,
    lasvegas_rules: str,
    cells: dict[tuple[str, int], Cell],
    warnings: list[str],
) -> dict[str, Any]:
    """Print the results table and the target line; return the results as a dict."""
    both = len(engines) == 2
    rules_note = (
        "lasvegas matched to classic: no neutral dice, 54-note deck"
        if lasvegas_rules == "matched"
        else "lasvegas with its package defaults (neutral dice at 2-4 players, 48-note deck)"
    )
    print()
    print(f'Random playouts, rules "classic", {games} games x {reps} reps per engine and '
          f"player count; {rules_note}.")
    print("games/s: median [min-max] over reps; ratio = median referee / median lasvegas.")
    print("referee " + ("keeps its full game record (--record)." if RECORD else
                        "in look-ahead mode (record=False), as bots use it; --record to keep it."))
    print()
    headers = ["players"] + [f"{engine} g/s" for engine in engines]
    if both:
        headers += ["ratio", "paired ratios"]
    headers += ["turns/game" + (" (ref / lv)" if both else "")]
    rows: list[list[str]] = []
    results: dict[str, Any] = {"games": games, "reps": reps, "lasvegas_rules": lasvegas_rules,
                               "rows": []}
    ratios: dict[int, float] = {}
    for players in player_counts:
        row = [str(players)] + [format_rate(cells[engine, players]) for engine in engines]
        result: dict[str, Any] = {"players": players}
        for engine in engines:
            result[engine] = {"median_gps": cells[engine, players].median,
                              "rates": cells[engine, players].rates,
                              "turns_per_game": cells[engine, players].turns_per_game}
        if both:
            ours, theirs = cells["referee", players], cells["lasvegas", players]
            ratios[players] = ours.median / theirs.median
            paired = [a / b for a, b in zip(ours.rates, theirs.rates, strict=True)]
            row += [f"{ratios[players]:.2f}x", f"{min(paired):.2f}-{max(paired):.2f}"]
            result["ratio"] = ratios[players]
        turns = [cells[engine, players].turns_per_game for engine in engines]
        row.append(" / ".join("?" if t is None else f"{t:.1f}" for t in turns))
        rows.append(row)
        results["rows"].append(result)
    widths = [max(len(r[i]) for r in [headers, *rows]) for i in range(len(headers))]
    for r in [headers, *rows]:
        print("  ".join(cell.rjust(width) for cell, width in zip(r, widths, strict=True)))
    print()
    for warning in warnings:
        print(f"warning: {warning}")
    if both:
        met = all(ratio >= TARGET_RATIO for ratio in ratios.values())
        counts = " and ".join(str(p) for p in player_counts)
        detail = ", ".join(f"{p}p {r:.2f}x" for p, r in ratios.items())
        verdict = "MET" if met else "NOT MET"
        print(f"target (ratio >= {TARGET_RATIO:g} at {counts} players): {verdict} ({detail})")
        results["target_met"] = met
    else:
        print("target not evaluated: only one engine was measured")
        results["target_met"] = None
    return results


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(
        description="Random-playout benchmark: referee's engine vs PyPI lasvegas 0.2.0 "
        "(classic rules).",
    )
    parser.add_argument("--games", type=int, help=f"games per rep (default {DEFAULT_GAMES})")
    parser.add_argument("--reps", type=int, help=f"reps per cell (default {DEFAULT_REPS})")
    parser.add_argument("--quick", action="store_true",
                        help=f"{QUICK_GAMES} games x {QUICK_REPS} reps unless given")
    parser.add_argument("--players", default=",".join(map(str, PLAYER_COUNTS)),
                        help="comma-separated player counts (default 2,5)")
    parser.add_argument("--only", choices=ENGINES, help="measure a single engine")
    parser.add_argument("--lasvegas-rules", choices=("matched", "package"), default="matched",
                        help="'matched' (default) sets lasvegas to referee's classic game; "
                        "'package' uses lasvegas's own defaults")
    parser.add_argument("--no-check", action="store_true",
                        help="skip the untimed sanity playouts")
    parser.add_argument("--seed", type=int, default=1, help="base seed (default 1)")
    parser.add_argument("--record", action="store_true",
                        help="referee keeps its full game record (default: look-ahead mode, "
                             "record=False, as bots use it; lasvegas keeps no record)")
    parser.add_argument("--venv", type=Path, default=DEFAULT_VENV,
                        help="virtual environment for lasvegas (default bench/.lasvegas-venv)")
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write results as JSON")
    args = parser.parse_args(argv)
    args.games = args.games or (QUICK_GAMES if args.quick else DEFAULT_GAMES)
    args.reps = args.reps or (QUICK_REPS if args.quick else DEFAULT_REPS)
    if args.games < 1 or args.reps < 1:
        parser.error("--games and --reps must be at least 1")
    try:
        args.player_counts = [int(p) for p in args.players.split(",")]
    except ValueError:
        parser.error(f"--players must be comma-separated numbers, got {args.players!r}")
    if not all(2 <= p <= 5 for p in args.player_counts):
        parser.error("--players: both engines play classic with 2 to 5 players")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark; 0 when it ran, 1 on errors."""
    global RECORD
    args = parse_args(argv)
    RECORD = args.record
    engines = [args.only] if args.only else list(ENGINES)
    try:
        pythons: dict[str, Path | str] = {}
        for engine in engines:
            if engine == "lasvegas":
                pythons[engine] = ensure_lasvegas_venv(args.venv)
            else:
                pythons[engine] = sys.executable
        cells = {(e, p): Cell(e, p) for e in engines for p in args.player_counts}
        warnings: list[str] = []
        if not args.no_check:
            check_games = min(CHECK_GAMES, args.games)
            log(f"sanity check: {check_games} untimed games per engine and player count")
            warnings = check_engines(
                pythons, args.player_counts, check_games, args.lasvegas_rules, cells
            )
        measure(pythons, args.player_counts, args.games, args.reps, args.seed,
                args.lasvegas_rules, cells)
        results = report(engines, args.player_counts, args.games, args.reps,
                         args.lasvegas_rules, cells, warnings)
        if args.json:
            args.json.write_text(json.dumps(results, indent=2) + "\n")
    except BenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
