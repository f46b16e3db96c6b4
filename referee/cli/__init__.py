# ruff: noqa: E402 (gRPC's logging is silenced before the imports below load grpc)
"""The `referee` command line: thin click commands over the library.

Commands that grow beyond a screen live in modules of their own beside this one, each adding
itself to `main` when imported at the bottom of this file.
"""

from __future__ import annotations

from referee.util.quiet import quiet_transport

quiet_transport()   # before anything imports grpc: the C core reads its settings at import

import contextlib
import json
import logging
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NoReturn

import click

from referee import __version__
from referee.bots.diskwatch import DEFAULT_WRITE_MAX_MB, WRITE_MAX_ENV
from referee.engine import PRESET_NOTES, PRESETS, RuleSet, preset
from referee.errors import UserError, is_users_error
from referee.league.folder import STORE_NAME, LeagueFolder
from referee.present.text import safe_line
from referee.util.numbers import is_whole

EX_SOFTWARE = 70   # sysexits.h: an internal software error (a fault of the referee)



@contextlib.contextmanager
def reported_errors() -> Iterator[None]:
    """Report what a command raises by whose fault it is: the user's (a RefereeError that is
    not an InternalError, or an OSError about a file) as one line, "Error: ..." with status 1;
    anything else as an internal error (`report_internal`), with status 70. Click's own
    exceptions (usage errors, exits) pass through."""
    try:
        yield
    except (click.exceptions.Exit, click.ClickException, click.exceptions.Abort):
        raise
    except BrokenPipeError:
        # The reader went away (`referee show DIR 3 | head`): stop quietly, as Unix tools
        # do; stdout goes to /dev/null so the interpreter's final flush cannot fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise click.exceptions.Exit(141) from None
    except KeyboardInterrupt:
        interrupted("interrupted")
    except Exception as exc:
        if is_users_error(exc):
            raise click.ClickException(safe_line(str(exc), limit=2000)) from None
        if os.environ.get("REFEREE_DEBUG"):   # the traceback asked for, on the terminal
            raise
        from referee.util.extras import missing_extra_message

        if isinstance(exc, ModuleNotFoundError) and \
                (message := missing_extra_message(exc.name or "")):
            raise click.ClickException(message) from None
        report_internal(exc)


def report_internal(exc: BaseException) -> NoReturn:
    """Say on stderr that the referee failed (not its user): the error in one line, where to
    report it, and the file holding its traceback; exit with status 70."""
    click.echo(f"internal error: {type(exc).__name__}: {safe_line(str(exc), limit=2000)}",
               err=True)
    tracker = issue_tracker()
    where = f"at {tracker} " if tracker else ""
    click.echo(f"this is a fault of the referee, not of your input: please report it {where}"
               f"with the command and this message", err=True)
    try:
        saved = save_traceback(exc)
    except OSError as problem:
        click.echo(f"(its traceback could not be saved: {problem})", err=True)
    else:
        click.echo(f"the traceback is in {saved}", err=True)
    raise click.exceptions.Exit(EX_SOFTWARE)


def issue_tracker() -> str | None:
    """The project's issue tracker (a [project.urls] entry named like "Issues" or "Bug
    Tracker" in the installed metadata), or None if it names none."""
    from importlib import metadata

    try:
        urls = metadata.metadata("referee").get_all("Project-URL") or []
    except metadata.PackageNotFoundError:
        return None
    for entry in urls:
        label, _, url = entry.partition(",")
        if any(word in label.lower() for word in ("issue", "bug", "tracker")):
            return url.strip() or None
    return None


def save_traceback(exc: BaseException) -> Path:
    """Write the command line, the referee's version and `exc`'s traceback to a new file in
    the temporary folder; return its path."""
    import shlex
    import tempfile
    import traceback

    with tempfile.NamedTemporaryFile("w", encoding="utf-8", prefix="referee-internal-error-",
                                     suffix=".txt", delete=False) as out:
        out.write(f"command: referee {shlex.join(sys.argv[1:])}\n")
        out.write(f"referee {__version__}, Python {sys.version.split()[0]}\n\n")
        out.write("".join(traceback.format_exception(exc)))
    return Path(out.name)


class RefereeGroup(click.Group):
    """The `referee` group: whatever a command raises, from parsing its options to its last
    line, is reported here once (`reported_errors`)."""

    def invoke(self, ctx: click.Context) -> Any:
        with reported_errors():
            return super().invoke(ctx)


def echo_fitted(line: str, err: bool = False) -> None:
    """Print `line` wrapped to the terminal's width (80 columns when piped)."""
    from referee.present.render import fit

    for part in fit(line):
        click.echo(part, err=err)


INTERRUPTED = 130   # what shells expect of a command stopped by Ctrl-C (128 + SIGINT)


def interrupted(message: str) -> NoReturn:
    """Say why the command stopped (on stderr, no "Error:": the user asked for it) and exit
    with status 130."""
    click.echo(message, err=True)
    raise click.exceptions.Exit(INTERRUPTED)


class RulesParam(click.ParamType):
    """A preset name, or a TOML file holding a rule set (`preset = ...` plus options)."""

    name = "rules"

    def convert(self, value: Any, param: Any, ctx: Any) -> RuleSet:
        if isinstance(value, RuleSet):
            return value
        try:
            if value in PRESETS:
                return preset(value)
            path = Path(value)
            if path.suffix == ".toml" and path.exists():
                from referee.util.config import load_rules_file

                return load_rules_file(path)
            return preset(value)
        except UserError as exc:   # an unknown preset, a rules file that cannot be used
            self.fail(str(exc), param, ctx)


RULES = RulesParam()


@click.group(cls=RefereeGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="referee")
def main() -> None:
    """Run tournaments of Las Vegas bots written in any language.

    \b
    Quick start:
      referee rules                       list the rule presets
      referee simulate --players 3        games between built-in policies
      referee match sample_bots/greedy.toml sample_bots/random.toml
      referee league sample_bots/*.toml   a league of bots with ratings and tables
    """
    show_notices()


class _Notices(logging.Handler):
    """The library's notices as plain lines on the stderr of the moment (click's, in tests)."""

    def emit(self, record: logging.LogRecord) -> None:
        click.echo(safe_line(record.getMessage(), limit=2000), err=True)


def show_notices(quiet: bool = False) -> None:
    """Print the library's notices (a bot being built...) on stderr, one plain line each;
    `quiet` keeps only warnings."""
    logger = logging.getLogger("referee")
    if not any(isinstance(handler, _Notices) for handler in logger.handlers):
        logger.addHandler(_Notices())
        logger.propagate = False
    logger.setLevel(logging.WARNING if quiet else logging.INFO)


@main.command("rules")
@click.argument("preset_name", required=False, metavar="[PRESET]")
def rules_command(preset_name: str | None) -> None:
    """List the rule presets and options, or print PRESET as TOML."""
    if preset_name is not None:
        click.echo(rules_to_toml(preset(preset_name)), nl=False)
        return
    click.echo("Presets (referee rules PRESET prints one as TOML):\n")
    from referee.present.render import fit

    for name, rules in PRESETS.items():
        players = f"{rules.min_players}-{rules.max_players} players"
        click.echo("\n".join(fit(f"  {name:<25} {players:<13} {PRESET_NOTES[name]}",
                                 hang=42)))
    click.echo("\nOptions (set any of them on top of a preset in a rules TOML file):\n")
    for name, doc in OPTION_DOCS.items():
        click.echo("\n".join(fit(f"  {name:<18} {doc}", hang=21)))


OPTION_DOCS = {
    "preset": "the preset the options start from",
    "min_players": "fewest seats (2-8)",
    "max_players": "most seats (2-8)",
    "rounds": "rounds per game (R25)",
    "dice": "ordinary dice per player (R3)",
    "big_dice": "big dice per player, each counts 2 when scored (R3, R20)",
    "funding": '"threshold" (fund each casino up to `threshold`) or "notes" (R10)',
    "threshold": "dollars per casino in threshold funding (R10)",
    "scaled_threshold": "Boulevard: threshold by player count, $30k..$90k (R10)",
    "notes_per_casino": "notes per casino in notes funding (R10)",
    "hundred_k": "shuffle five $100k notes into the deck (R2)",
    "slot": "the slot machine, a 7th casino (R30-R32)",
    "neutral": '"none", "white" (R41) or "grey" (R43) neutral dice',
    "leftovers": '"bottom" (under the deck) or "discard" (R23)',
}


def rules_to_toml(rules: RuleSet) -> str:
    """A rule set as TOML, one option per line."""
    import tomli_w

    return tomli_w.dumps(rules.to_dict())


@main.command()
@click.option("--rules", "rules", type=RULES, default="classic", show_default=True,
              help="Rule preset, or a rules TOML file.")
@click.option("--players", type=int, default=None,
              help="Seats per game (default: the rule set's smallest).")
@click.option("--games", type=click.IntRange(min=1), default=1000, show_default=True)
@click.option("--seed", type=click.IntRange(0, 2**64 - 1), default=1, show_default=True)
@click.option("--policy", type=click.Choice(["random", "greedy"]), default="random",
              show_default=True, help="What every seat plays.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.option("--replay", type=click.Path(dir_okay=False, writable=True, path_type=Path),
              help="Write every game record to FILE as JSON Lines.")
def simulate(rules: RuleSet, players: int | None, games: int, seed: int, policy: str,
             as_json: bool, replay: Path | None) -> None:
    """Play in-process games between built-in policies and print per-seat statistics."""
    from referee.game.simulate import simulate as run_simulation

    players = players if players is not None else rules.min_players
    rules.check_players(players)
    if replay is not None:
        with replay.open("w", encoding="utf-8") as out:
            result = run_simulation(rules, players, games, seed, policy, out)
    else:
        result = run_simulation(rules, players, games, seed, policy)
    if as_json:
        click.echo(json.dumps(result.to_json(), indent=2))
        return
    click.echo(f"{games} games of {rules.preset!r}, {players} players, policy {policy}, "
               f"seed {seed}")
    click.echo(f"{'seat':>4}  {'win %':>7}  {'mean money':>12}  {'mean place':>10}")
    for stats in result.seats:
        data = stats.to_json(games)
        click.echo(f"{stats.seat:>4}  {100 * data['win_rate']:>6.2f}%  "
                   f"{data['mean_money']:>12,.0f}  {data['mean_place']:>10.3f}")
    if replay is not None:
        click.echo(f"records written to {replay}")



class SecretParam(click.ParamType):
    """A secret seed: a whole number from 0 to 2^256-1 (help says so in words: the range's 78
    digits would not fit a line)."""

    name = "seed"

    def get_metavar(self, param: Any, ctx: Any = None) -> str:
        return "SEED"

    def convert(self, value: Any, param: Any, ctx: Any) -> int:
        if isinstance(value, int) and not isinstance(value, bool):
            number = value
        else:
            text = str(value).strip()
            if not is_whole(text, digits=78):
                self.fail(f"{value!r} is not a whole number (0 to 2^256-1)", param, ctx)
            number = int(text)
        if not 0 <= number < 2**256:
            self.fail(f"{value} is not in the range 0 to 2^256-1", param, ctx)
        return number


SECRET = SecretParam()


def check_writable(path: Path, option: str) -> None:
    """UsageError naming `option` and `path` unless a file can be written at `path`."""
    parent = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise click.UsageError(f"{option} {path}: is a directory")
    if not parent.is_dir():
        raise click.UsageError(f"{option} {path}: no directory {parent}")
    if not os.access(path if path.exists() else parent, os.W_OK):
        raise click.UsageError(f"{option} {path}: cannot write there (permission denied)")


@main.command()
@click.argument("bots", nargs=-1, required=True, metavar="BOT.toml...")
@click.option("--rules", "rules", type=RULES, default="classic", show_default=True,
              help="Rule preset, or a rules TOML file.")
@click.option("--seed", type=SECRET,
              help="The game's secret seed (default: drawn at random and printed).")
@click.option("--replay", type=click.Path(dir_okay=False, writable=True, path_type=Path),
              help="Write the game record (with latencies and strikes) to FILE as JSON.")
@click.option("--json", "as_json", is_flag=True, help="Print events as JSON lines.")
@click.option("--autoplay-forced", is_flag=True, help="Do not ask a bot with one legal choice.")
@click.option("--no-sandbox", is_flag=True,
              help="Run bots unconfined (trusted local development only).")
@click.option("--html", type=click.Path(dir_okay=False, writable=True, path_type=Path),
              help="Write the game as one self-contained HTML page with a replay viewer.")
@click.option("--verbose", "-v", is_flag=True,
              help="Show each decision's think time and note, and the dice before scoring.")
def match(bots: tuple[str, ...], rules: RuleSet, seed: int | None, replay: Path | None,
          as_json: bool, autoplay_forced: bool, no_sandbox: bool, html: Path | None,
          verbose: bool) -> None:
    """Play one game between BOT.toml files (seat order as given) and show it turn by turn.

    With --verbose it prints what `referee show` prints of a stored game.
    """
    from referee.bots.spec import load_spec
    from referee.engine.record import event_to_dict
    from referee.game.match import MatchOptions
    from referee.game.single import run_match
    from referee.present.render import Narrator, fit, printable
    from referee.util.seeds import draw_secret, weak_secret_warning

    if replay is not None:
        check_writable(replay, "--replay")
    if html is not None:
        check_writable(html, "--html")
    drawn = seed is None
    if seed is None:
        seed = draw_secret()
    elif warning := weak_secret_warning(seed):
        click.echo(warning, err=True)
    specs = [load_spec(path) for path in bots]
    narrator = Narrator([spec.name for spec in specs], details=verbose, rules=rules)

    def show(game: Any, events: list[tuple], decision: dict[str, Any] | None) -> None:
        for event in events:
            note = decision if event[0] == "place" else None
            if as_json:
                data = event_to_dict(event)
                if note:
                    data["decision"] = note
                click.echo(json.dumps(data))
            else:
                for line in narrator.lines(event, note):
                    for part in fit(printable(line)):
                        click.echo(part)

    result = run_match(specs, rules, seed, observer=show, replay=replay,
                       sandbox=False if no_sandbox else None,
                       options=MatchOptions(autoplay_forced=autoplay_forced))
    if html is not None:
        from referee.report.site import single_game_html

        html.write_text(single_game_html(result.record.to_json()), encoding="utf-8")
    if drawn:
        echo_fitted(f"seed {seed} (give --seed {seed} to play this game again)", err=True)
    if as_json:
        return
    for seat in result.seats:
        latencies = sorted(seat.latencies_us)
        median = latencies[len(latencies) // 2] / 1000 if latencies else 0.0
        strikes = ", ".join(f"{k} {v}" for k, v in seat.strikes.items() if v) or "none"
        status = f"; forfeited: {seat.reason}" if seat.forfeited else ""
        echo_fitted(printable(f"  {seat.bot}: {len(latencies)} decisions, median "
                              f"{median:.2f} ms, strikes: {strikes}{status}"))
    if replay is not None:
        click.echo(f"record written to {replay}")
    if html is not None:
        click.echo(f"replay page written to {html}")


def _players_option(ctx: Any, param: Any, value: str | None) -> tuple[int, int] | None:
    if value is None:
        return None
    from referee.league.config import parse_players

    try:
        return parse_players(value, "--players")
    except UserError as exc:
        raise click.BadParameter(str(exc)) from None


@main.command()
@click.argument("sources", nargs=-1, metavar="BOT.toml... | LEAGUE.toml")
@click.option("--games", type=click.IntRange(min=1), help="Games to play (default: 25 per bot).")
@click.option("--players", callback=_players_option,
              help="Table size, or a range like 2-5 (default: 4, or fewer bots).")
@click.option("--rules", "rules", type=RULES, help="Rule preset or rules TOML (default classic).")
@click.option("--seed", type=SECRET,
              help="The league's secret seed (default: drawn at random, stored and printed).")
@click.option("--concurrency", "-j", type=click.IntRange(min=1),
              help="Games in flight (default: from the cores and the table size).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              help=f"Output directory: {STORE_NAME} and tables (default league-out).")
@click.option("--duplicate", is_flag=True, default=None,
              help="Play each table and seed in every seat rotation (R50): no seat's dice "
                   "favour a bot. No narrowing of the strengths' spread was detected "
                   "(100 simulated seeds: docs/ratings.md).")
@click.option("--resume", is_flag=True, help="Continue an unfinished league in --out.")
@click.option("--accept-changed", is_flag=True,
              help="Continue although a bot's files changed since the league started.")
@click.option("--skip-broken", is_flag=True, default=None,
              help="Leave out bots that cannot start instead of stopping.")
@click.option("--quiet", "-q", is_flag=True, help="No progress output.")
@click.option("--verbose", "-v", is_flag=True,
              help="A line per finished game: places and money, strikes, forfeit reasons.")
@click.option("--no-sandbox", is_flag=True,
              help="Run bots unconfined (trusted local development only).")
@click.option("--no-report", is_flag=True, help="Do not write the HTML report into DIR/report.")
@click.option("--until-settled", is_flag=True,
              help="Add blocks of --games games until every pair of neighbours in the table "
                   "is separated, allowing for a look after every block (or --max-games). "
                   "Measured: two equal bots separated in 6 of 200 simulated runs.")
@click.option("--max-games", type=click.IntRange(min=1),
              help="Budget of --until-settled (default: 10 blocks of --games).")
@click.option("--add", "add", multiple=True, metavar="NEW.toml",
              help="Add a bot to the league in --out, finished or not (repeatable).")
@click.option("--cluster", metavar="ADDRESS",
              help="Play the games on a dask cluster: a scheduler address (tcp://HOST:8786) "
                   "or local:N for N worker processes here (docs/cluster.md).")
@click.option("--watch", is_flag=True,
              help="Tell the games move by move as they are played, one after another, as "
                   "`referee watch` does (instead of the progress bar).")
def league(sources: tuple[str, ...], games: int | None, players: tuple[int, int] | None,
           rules: RuleSet | None, seed: int | None, concurrency: int | None, out: Path | None,
           duplicate: bool | None, resume: bool, accept_changed: bool, skip_broken: bool | None,
           quiet: bool, verbose: bool, no_sandbox: bool, no_report: bool, until_settled: bool,
           max_games: int | None, add: tuple[str, ...], cluster: str | None,
           watch: bool) -> None:
    """Play a league between bots and print its table (and write its report).

    \b
    referee league sample_bots/*.toml
    referee league league.toml             (settings in a file; options override)
    referee league --resume --out DIR     (continue after an interruption)
    referee league --out DIR --add new.toml   (a bot joins the league)
    referee league bots/*.toml --until-settled --max-games 2000
    referee league sample_bots/*.toml --watch   (its games told as played)
    """
    import asyncio
    import shlex

    from referee.cli.progress import make_progress
    from referee.league.config import LeagueSettings, expand_bots, is_league_file, load_league_file
    from referee.league.runner import run_league
    from referee.league.store import games_stored
    from referee.report.table_files import write_outputs
    from referee.util.seeds import weak_secret_warning

    if len(sources) == 1 and Path(sources[0]).suffix == ".toml" and \
            is_league_file(Path(sources[0])):
        settings = load_league_file(Path(sources[0]))
    elif sources:
        settings = LeagueSettings(bots=expand_bots(list(sources), Path(".")))
        settings.given["bots"] = "the bot specs given"
    elif resume or add or until_settled:
        settings = LeagueSettings(bots=[])
    else:
        raise click.UsageError("give bot spec files, a league file, or --resume --out DIR")
    if add and (sources or until_settled):
        raise click.UsageError("--add takes the league from --out: give no other bots and "
                               "no --until-settled")
    if max_games is not None and not until_settled:
        raise click.UsageError("--max-games goes with --until-settled")
    overrides = {"games": games, "players": players, "rules": rules, "seed": seed,
                 "concurrency": concurrency, "out": out, "duplicate": duplicate,
                 "skip_broken": skip_broken, "sandbox": False if no_sandbox else None,
                 "cluster": cluster}
    for key, value in overrides.items():
        if value is not None:
            settings.give(key, value, f"--{key.replace('_', '-')}")
    if settings.seed is not None and (warning := weak_secret_warning(settings.seed)):
        click.echo(warning, err=True)
    if quiet and verbose:
        raise click.UsageError("--quiet and --verbose exclude each other")
    if watch and (quiet or verbose or settings.cluster):
        raise click.UsageError("--watch tells the games on this terminal: not with --quiet, "
                               "--verbose or a cluster (its games write no live files)")
    # Watching, the narration is the progress: a bar redrawn beside it would garble both.
    progress = make_progress(quiet or watch, games_log=verbose)
    show_notices(quiet)
    stop_watching = None
    if watch:
        from referee.cli.records import watching_in_thread

        stop_watching = watching_in_thread(settings.out)
    try:
        settled = None
        if add:
            from referee.league.extend import add_bots

            outcome = asyncio.run(add_bots(settings, expand_bots(list(add), Path(".")),
                                           progress, accept_changed=accept_changed,
                                           publish=write_outputs))
        elif until_settled:
            from referee.league.extend import run_until_settled

            settled = asyncio.run(run_until_settled(
                settings, progress, max_games, resume=resume, accept_changed=accept_changed,
                announce=None if quiet else _announce, publish=write_outputs))
            outcome = settled.outcome
        else:
            outcome = asyncio.run(run_league(settings, progress, resume=resume,
                                             accept_changed=accept_changed,
                                             publish=write_outputs))
    except KeyboardInterrupt:
        store_path = LeagueFolder(settings.out).store_path
        saved = games_stored(store_path)
        command = ["referee", "league", "--resume", "--out", str(settings.out)]
        if until_settled:
            command.append("--until-settled")
        if max_games is not None:
            command += ["--max-games", str(max_games)]
        if no_sandbox:
            command.append("--no-sandbox")
        interrupted(f"interrupted: {saved} games saved in {store_path}; resume "
                    f"with: {shlex.join(command)}")
    finally:
        if stop_watching is not None:
            stop_watching()
    for error in outcome.broken:
        echo_fitted(f"skipped {error}", err=True)
    for note in outcome.notes:
        echo_fitted(note, err=True)
    _print_outcome(outcome, quiet)
    if settled is not None:
        from referee.league.outcome import separation_rule

        rule = (separation_rule(outcome.standings) if outcome.standings is not None
                else "95% intervals apart")
        if settled.unresolved:
            pairs = ", ".join(f"{a} ~ {b}" for a, b in settled.unresolved)
            said = (f"not settled within {len(outcome.schedule)} games: still not "
                    f"separated ({rule}): {pairs}")
        else:
            said = (f"settled: every pair of neighbours separated ({rule}) after "
                    f"{len(outcome.schedule)} games ({settled.blocks} blocks)")
        from referee.present.render import fit

        for line in fit(said, 80):
            click.echo(line)
    if not no_report:
        from referee.cli.report import write_report

        write_report(outcome.out, outcome=outcome)


def _announce(line: str) -> None:
    """A line about what the league does next, on stderr within 80 columns."""
    from referee.present.render import fit

    for piece in fit(line, 80):
        click.echo(piece, err=True)


@main.command()
@click.argument("out", type=click.Path(file_okay=False, exists=True, path_type=Path),
                default="league-out")
def table(out: Path) -> None:
    """Reprint a league's tables from its store (and rewrite the table files)."""
    from referee.league.outcome import load_outcome
    from referee.report.table_files import write_outputs

    folder = LeagueFolder(out)
    if not folder.store_path.exists():
        raise click.UsageError(f"{out}: no league here (no {STORE_NAME})")
    store = folder.open_store()
    try:
        outcome = load_outcome(store)
    finally:
        store.close()
    write_outputs(outcome)
    _print_outcome(outcome, quiet=False)


def _print_outcome(outcome: Any, quiet: bool) -> None:
    from referee.cli.tables import render_terminal

    if not quiet:
        echo_fitted(f"schedule: {len(outcome.schedule)} games; {outcome.balance.describe()}")
        echo_fitted(f"league seed {outcome.facts.get('seed')} (stored in {STORE_NAME}); give it "
                    f"to --seed to play the same league again")
    fit = outcome.standings
    render_terminal(outcome.rows, outcome.h2h, pairwise=outcome.pairwise,
                    scale=fit.scale if fit is not None else None,
                    size_test=fit.size_test if fit is not None else None,
                    separation=(None if fit is None or fit.z is None
                                else f"gap z <= {fit.z:.2f}: 95% over {fit.looks} looks"))
    if outcome.unranked:   # a season's retired and disabled versions: fitted, not ranked
        echo_fitted("not ranked (versions retired or taken out; their games stay in the fit): "
                    + ", ".join(safe_line(row.bot, 60) for row in outcome.unranked))
    if outcome.workers:
        from referee.cli.tables import render_workers

        render_workers(outcome.workers)
    state = "finished" if outcome.finished else "unfinished (use --resume)"
    void = sum(game.void for game in outcome.games)
    void_text = f" ({void} where every seat forfeited: no result)" if void else ""
    echo_fitted(f"{len(outcome.games)}/{len(outcome.schedule)} games recorded{void_text}, "
                f"{state}; played now: {outcome.played_now}; tables in {outcome.out}/")


def _limit_options(ctx: click.Context, param: click.Parameter,
                   values: tuple[str, ...]) -> dict[str, int]:
    """--limit KEY=N options as a table of limits, checked like a league's [limits]."""
    from referee.league.config import check_limits
    from referee.util.config import ConfigError

    table: dict[str, int] = {}
    for value in values:
        key, _, number = value.partition("=")
        if not is_whole(number):
            raise click.BadParameter(f"expected KEY=N (a whole number), got {value!r}")
        table[key] = int(number)
    try:
        check_limits(table, "--limit")
    except ConfigError as exc:
        raise click.BadParameter(str(exc)) from None
    return table


@main.command()
@click.argument("bot", metavar="BOT.toml|FOLDER", type=click.Path(path_type=Path))
@click.option("--opponent", "opponents", multiple=True, metavar="BOT.toml",
              type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Opponent bot spec (repeatable). Default: sample_bots/random.toml and "
                   "greedy.toml, or the honest test bot.")
@click.option("--preset", "presets", multiple=True, type=click.Choice(list(PRESETS)),
              help="Play only these presets (repeatable). Default: all.")
@click.option("--games", type=click.IntRange(1, 100), default=1, show_default=True,
              help="Games per preset and player count.")
@click.option("--seed", type=click.IntRange(0, 2**64 - 1), default=1, show_default=True)
@click.option("--no-probes", is_flag=True, help="Skip the crafted edge-state requests.")
@click.option("--build-output", is_flag=True,
              help="Print the build's output line by line as it runs ('build| ...').")
@click.option("--write-limit-mb", type=click.IntRange(1, 1024 * 1024), default=None,
              help="Most the build (and each bot in its /tmp) may write, all files together "
                   f"(MiB); past it the build or bot is killed. Default: {DEFAULT_WRITE_MAX_MB}.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option("--no-sandbox", is_flag=True,
              help="Run bots unconfined (trusted local development only).")
@click.option("--limit", "ceiling", multiple=True, metavar="KEY=N", callback=_limit_options,
              help="A season's limit (repeatable, e.g. --limit memory_mb=512): the bot gets the "
                   "smaller of it and its own [limits].")
def check(bot: Path, opponents: tuple[Path, ...], presets: tuple[str, ...], games: int,
          seed: int, no_probes: bool, build_output: bool, write_limit_mb: int | None,
          as_json: bool, no_sandbox: bool, ceiling: dict[str, int]) -> None:
    """Check that a bot conforms to the protocol: a report for bot authors.

    Builds and starts BOT.toml, checks its handshake, plays every preset at its smallest and
    largest table, probes edge states, and reports strikes and latencies, one line per check.
    A FOLDER is checked with its spec, inside it or beside it (as `referee submit` sends it).
    Exits with status 1 if any check fails.
    """
    from referee.bots.spec import spec_of_folder
    from referee.checking.conformance import CheckOptions, run_check

    if bot.is_dir():
        bot = spec_of_folder(bot)
    if write_limit_mb is not None:   # the bots' limit too (referee.bots.diskwatch)
        os.environ[WRITE_MAX_ENV] = str(write_limit_mb)

    def echo_build_line(stream: str, line: str) -> None:
        # The build's text is the bot author's: escaped, one line each (stderr beside --json).
        click.echo(f"build| {safe_line(line, limit=500)}", err=as_json)

    options = CheckOptions(seed=seed, games=games, presets=presets or tuple(PRESETS),
                           opponents=opponents or None, probes=not no_probes,
                           sandbox=False if no_sandbox else None,
                           on_build_line=echo_build_line if build_output else None,
                           write_max_mb=write_limit_mb, ceiling=ceiling)
    if as_json:
        report = run_check(bot, options)
        click.echo(json.dumps(report.to_json(), indent=2))
    else:
        from referee.checking.conformance import HANG
        from referee.present.render import fit, terminal_width

        width = terminal_width()
        click.echo(f"referee check {bot}")
        report = run_check(bot, options,
                           listener=lambda c: click.echo("\n".join(c.lines(width))))
        if report.failures and report.output_tail:
            tail = safe_line(report.output_tail, limit=2000)
            click.echo("\n".join(fit(f"bot output (last lines): {tail}", width, hang=HANG)))
        echo_fitted(report.summary())
    if not report.ok:
        raise click.exceptions.Exit(1)



# Commands in modules of their own register themselves on `main`.
from referee.cli import backup as _backup  # noqa: E402,F401
from referee.cli import gauntlet as _gauntlet  # noqa: E402,F401
from referee.cli import play as _play  # noqa: E402,F401
from referee.cli import records as _records  # noqa: E402,F401
from referee.cli import replay as _replay  # noqa: E402,F401
from referee.cli import report as _report  # noqa: E402,F401
from referee.cli import server as _server  # noqa: E402,F401
