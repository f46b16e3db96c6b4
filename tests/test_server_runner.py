"""The season runner as a real subprocess on a real club data folder: real `referee check` in
the sandbox, real bots over gRPC, real SQLite; paused, resumed, closed, killed and restarted."""

from __future__ import annotations

import json
import re
import sqlite3
import time
from pathlib import Path

from cli_support import referee
from runner_support import Club, RunnerProcess, sample, write_season
from wait_support import wait_for

from referee.league.store import games_stored
from referee.server.shared.clubfolder import ClubFolder

ROOT = Path(__file__).resolve().parents[1]
TEST_BOTS = ROOT / "tests" / "bots"
EXITS_AT_ONCE = "import sys\nsys.exit(3)\n"


def store_games(data: Path) -> list[tuple]:
    """(index, bots, places, money) of every stored game, in schedule order."""
    db = sqlite3.connect(ClubFolder(data).season_league.store_path)
    try:
        return db.execute("SELECT idx, bots, places, money FROM games ORDER BY idx").fetchall()
    finally:
        db.close()


def games_of(data: Path, name: str) -> int:
    return sum(json.dumps(name) in bots for _, bots, _, _ in store_games(data))


def test_a_version_is_checked_enters_and_plays_paused_resumed_and_closed(tmp_path: Path) -> None:
    data = tmp_path / "club"
    club = Club(data)
    write_season(data, """
        seed = 11
        players = 2
        round_games = 2
        refit_games = 2
        refit_seconds = 1
        check_concurrency = 2
    """)
    alice, bob = club.student("alice"), club.student("bob")
    club.version(alice, "alice-bot", sample("random"))
    club.version(bob, "bob-bot", sample("greedy"))
    runner = RunnerProcess(data)
    db = ClubFolder(data).season_league.store_path
    try:
        wait_for("both versions active", lambda: club.value(
            "BotVersion.objects.filter(season_state='active').count()") == 2, runner)
        lines = club.value("list(CheckLine.objects.filter(run__version__league_name="
                           "'alice-bot.v1').values_list('text', flat=True))")
        assert lines[0].startswith("referee check") and "conforms" in lines[-1]
        assert any(line.startswith("PASS") and "build" in line for line in lines)
        wait_for("games", lambda: games_stored(db) >= 4, runner)
        wait_for("a standing", lambda: club.value("Standing.objects.exists()"), runner)

        # A version that fails its check never enters; the one before it keeps playing.
        (tmp_path / "exits.py").write_text(EXITS_AT_ONCE)
        failing = club.version(alice, "alice-bot", tmp_path / "exits.py")
        wait_for("the failed check", lambda: club.value(
            f"BotVersion.objects.get(pk={failing}).check_state") == "failed", runner)
        played = games_of(data, "alice-bot.v1")
        wait_for("alice-bot v1 playing on", lambda: games_of(data, "alice-bot.v1") > played,
                 runner)
        assert club.value(f"BotVersion.objects.get(pk={failing}).season_state") == "waiting"
        assert games_of(data, "alice-bot.v2") == 0
        notices = club.value(f"list(Notice.objects.filter(user_id={alice})"
                             ".values_list('text', flat=True))")
        assert any(n.startswith("alice-bot v2 failed its check:") for n in notices), notices
        failed_lines = club.value(f"list(CheckLine.objects.filter(run__version_id={failing})"
                                  ".values_list('text', flat=True))")
        assert any(line.startswith("FAIL") for line in failed_lines), (failed_lines, notices)

        # Pause: the games in flight finish, no new game starts; resume: play goes on.
        club.season_state("paused")
        said = wait_for("the pause", lambda: club.value(
            "list(Notice.objects.filter(user=None, text__startswith='play is paused')"
            ".values_list('text', flat=True))"), runner)
        paused_at = int(re.search(r"(\d+) games", said[0]).group(1))
        assert games_stored(ClubFolder(data).season_league.store_path) == paused_at
        # A sign that the paused loop came round again: a disabled bot's version, added now,
        # leaves the season at the loop's next turn. A round played despite the pause would be
        # stored by then.
        carol = club.student("carol")
        gone = club.version(carol, "carol-bot", sample("random"), passed=True, disabled=True)
        wait_for("the paused loop's next turn", lambda: club.value(
            f"BotVersion.objects.get(pk={gone}).season_state") == "disabled", runner)
        assert games_stored(ClubFolder(data).season_league.store_path) == paused_at
        club.season_state("running")
        store = ClubFolder(data).season_league.store_path
        wait_for("play after resuming", lambda: games_stored(store) > paused_at, runner)

        # Close: the final tables and the static report in DIR/season, and its path.
        club.season_state("closed")
        report = wait_for("the report", lambda: club.value(
            "Competition.first().report_path"), runner)
        assert report == "season/report/index.html" and (data / report).is_file()
        assert ClubFolder(data).season_league.table_md.is_file()
        final = games_stored(ClubFolder(data).season_league.store_path)
        wait_for("the final standing", lambda: club.value(
            "Standing.objects.latest().games") == final, runner)
        rows = club.value("Standing.objects.latest().data['rows']")
        assert {row["table"]["bot"] for row in rows} == {"alice-bot.v1", "bob-bot.v1"}
        assert all(row["bot"] in ("alice-bot", "bob-bot") and row["version"] == 1 and
                   row["table"]["strength_low"] <= row["table"]["strength"]
                   <= row["table"]["strength_high"] for row in rows)
        # Nothing is played after the close: once the runner has stopped (every task of it
        # ended), the store holds the games of the final standing and no more.
        assert runner.stop() == 0, runner.output()
        assert games_stored(ClubFolder(data).season_league.store_path) == final
    finally:
        runner.stop()
        club.close()
    table = referee("table", ClubFolder(data).season)
    assert f"{final}/{final} games recorded" in table.stdout


def board() -> str:
    """Code for `Club.value`: the leaderboard as its JSON serves it (the newest standing)."""
    return ("__import__('json').loads(__import__('referee.server.club.board', "
            "fromlist=['newest_board']).newest_board().json)")


def test_a_new_version_takes_its_bots_row_and_ranks_count_bots(tmp_path: Path) -> None:
    """ann uploads a second version: the board ranks three bots, their rank ranges within
    1-3 (the old version, retired, stays in the fit unranked); cal-bot taken out, two within
    1-2 at once; and the tables and report the close writes rank one row per bot."""
    data = tmp_path / "club"
    club = Club(data)
    write_season(data, """
        seed = 23
        players = 2
        round_games = 2
        refit_games = 2
        refit_seconds = 1
    """)
    ann = club.student("ann")
    club.version(ann, "ann-bot", sample("random"), passed=True)
    for name, bot in (("ben", "greedy"), ("cal", "random")):
        club.version(club.student(name), f"{name}-bot", sample(bot), passed=True)
    runner = RunnerProcess(data)
    try:
        wait_for("three versions active", lambda: club.value(
            "BotVersion.objects.filter(season_state='active').count()") == 3, runner)
        wait_for("ann-bot v1's games", lambda: games_of(data, "ann-bot.v1") >= 2, runner)
        club.version(ann, "ann-bot", sample("greedy"), passed=True)
        wait_for("ann-bot v2's games", lambda: games_of(data, "ann-bot.v2") >= 2, runner)
        final = games_stored(ClubFolder(data).season_league.store_path)
        shown = wait_for("a board that fits ann-bot v2's games", lambda: (
            lambda b: b if b["games"] >= final and b["rows"] and any(
                row["table"]["bot"] == "ann-bot.v2" and row["table"]["games"]
                for row in b["rows"])
            else None)(club.value(board())), runner)
        rows, retired = shown["rows"], shown["retired"]
        assert sorted(row["bot"] for row in rows) == ["ann-bot", "ben-bot", "cal-bot"]
        assert [row["table"]["bot"] for row in retired] == ["ann-bot.v1"]
        assert all(1 <= row["table"]["rank_low"] <= row["table"]["rank_high"] <= len(rows)
                   for row in rows), rows
        assert retired[0]["table"]["rank"] is None and retired[0]["table"]["rank_low"] is None

        # cal-bot is disabled while play is paused: no game comes, yet the runner refits at
        # once, and the two bots left are ranked within 1-2.
        club.season_state("paused")
        wait_for("the pause", lambda: club.value(
            "Notice.objects.filter(user=None, text__startswith='play is paused').exists()"),
                 runner)
        paused_at = games_stored(ClubFolder(data).season_league.store_path)
        wait_for("a standing of every game stored", lambda: club.value(
            "Standing.objects.latest().games") == paused_at, runner)
        club("Bot.objects.filter(name='cal-bot').update(disabled=True)")
        wait_for("a refit without cal-bot ranked", lambda: any(
            row["table"]["bot"] == "cal-bot.v1" and row["table"]["rank"] is None
            for row in club.value("Standing.objects.latest().data['rows']")), runner)
        shown = club.value(board())
        rows = shown["rows"]
        assert sorted(row["bot"] for row in rows) == ["ann-bot", "ben-bot"]
        assert all(1 <= row["table"]["rank_low"] <= row["table"]["rank_high"] <= 2
                   for row in rows), rows

        club.season_state("closed")
        wait_for("the report", lambda: club.value("Competition.first().report_path"),
                 runner)
    finally:
        runner.stop()
        club.close()
    table = json.loads(ClubFolder(data).season_league.table_json.read_text())
    assert sorted(row["bot"] for row in table["table"]) == ["ann-bot.v2", "ben-bot.v1"]
    assert all(1 <= row["rank_low"] <= row["rank_high"] <= 2 for row in table["table"]), table
    assert sorted(row["bot"] for row in table["unranked"]) == ["ann-bot.v1", "cal-bot.v1"]
    report = (ClubFolder(data).season_league.report / "index.html").read_text()
    league, _, apart = report.partition('id="not-ranked"')
    assert league.count('class="bot-row"') == 2 and "ann-bot.v1" not in league
    assert "ann-bot.v1" in apart and "cal-bot.v1" in apart


def thinker(folder: Path) -> Path:
    """The sample random bot, thinking 50 ms a decision: games last long enough to be killed
    in the middle of."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "randbot.py").write_text((ROOT / "sample_bots/random/main.py").read_text())
    main = folder / "main.py"
    main.write_text("import time\n\nfrom randbot import RandomBot\nfrom referee.sdk import run\n"
                    "\n\nclass Thinker(RandomBot):\n    def choose(self, view):\n"
                    "        time.sleep(0.05)\n        return super().choose(view)\n\n\n"
                    "run(Thinker())\n")
    return folder


GENEROUS = '\n[limits]\ndecision_ms = 10000\ngame_bank_ms = 60000\n'


def kill_season(tmp_path: Path, name: str, kills: bool) -> tuple[list[tuple], list, dict]:
    """A season of three thinking bots (entered before play starts) and a disabled bot's check;
    with `kills`, the runner is SIGKILLed in the middle of that check and again in the middle
    of the games, and started again each time. Returns the stored games, the table rows and
    what was seen."""
    data = tmp_path / name
    club = Club(data)
    write_season(data, """
        seed = 21
        players = 2
        round_games = 20
        max_rounds = 2
        refit_games = 10
        refit_seconds = 2
        concurrency = 6
    """)
    source = thinker(tmp_path / "thinker")
    spec = 'name = "{}"\ncommand = ["{{python}}", "main.py"]' + GENEROUS
    for bot in ("ann", "ben", "cat"):
        club.version(club.student(bot), f"{bot}-bot", source, passed=True,
                     spec_text=spec.format(bot))
    eve = club.version(club.student("eve"), "eve-bot", source, spec_text=spec.format("eve"),
                       disabled=True)
    total = 2 * 30   # two rounds of 20 games per bot, three bots, two at a table
    db = ClubFolder(data).season_league.store_path
    seen: dict = {}
    runner = RunnerProcess(data)
    try:
        if kills:
            wait_for("eve's check under way", lambda: club.value(
                f"CheckLine.objects.filter(run__version_id={eve}).count()") >= 1, runner)
            runner.kill()
            seen["check_state_at_kill"] = club.value(f"CheckRun.objects.get(version_id={eve})"
                                                     ".state")
            runner = RunnerProcess(data)
            wait_for("games under way", lambda: games_stored(db) >= 3, runner)
            runner.kill()
            seen["games_at_kill"] = games_stored(db)
            seen["check_state_at_kill2"] = club.value(
                f"CheckRun.objects.get(version_id={eve}).state")
            runner = RunnerProcess(data)
        wait_for("every game", lambda: games_stored(db) == total, runner)
        wait_for("eve's check", lambda: club.value(
            f"CheckRun.objects.get(version_id={eve}).state") == "passed", runner)
        club.season_state("closed")
        wait_for("the report", lambda: club.value("Competition.first().report_path"),
                 runner)
        seen["attempts"] = club.value(f"CheckRun.objects.get(version_id={eve}).attempts")
        seen["eve_lines"] = club.value(
            f"list(CheckLine.objects.filter(run__version_id={eve}).values_list('text', "
            "flat=True))")
        seen["eve_state"] = club.value(f"BotVersion.objects.get(pk={eve}).season_state")
    finally:
        runner.stop()
        club.close()
    rows = json.loads(ClubFolder(data).season_league.table_json.read_text())["table"]
    table = [(r["bot"], r["games"], r["wins"], r["mu"], r["sigma"], r["strength"],
              r["strength_low"], r["strength_high"], r["rank_low"], r["rank_high"])
             for r in rows]
    return store_games(data), table, seen


def test_sigkill_mid_check_and_mid_games_loses_nothing_and_changes_nothing(
        tmp_path: Path) -> None:
    games, table, _ = kill_season(tmp_path, "calm", kills=False)
    killed_games, killed_table, seen = kill_season(tmp_path, "killed", kills=True)
    assert seen["check_state_at_kill"] == "running"       # killed in the middle of the check
    assert 3 <= seen["games_at_kill"] < 60                # ...and in the middle of the games
    assert [g[0] for g in killed_games] == list(range(60))   # every game once, none missing
    assert killed_games == games                          # the same games, played the same
    assert killed_table == table                          # so the same table
    # The check ran again from the start after each kill that found it running.
    assert seen["attempts"] == 2 + (seen["check_state_at_kill2"] == "running")
    assert sum(line.startswith("referee check") for line in seen["eve_lines"]) == 1
    assert "conforms" in seen["eve_lines"][-1]
    assert seen["eve_state"] == "disabled"                # a disabled bot's version never enters


def test_bots_that_crash_hang_or_fail_are_told_and_the_season_goes_on(tmp_path: Path) -> None:
    data = tmp_path / "club"
    club = Club(data)
    write_season(data, """
        seed = 3
        players = 2
        round_games = 3
        refit_seconds = 1
        check_timeout_s = 40
        check_concurrency = 2
    """)
    hon, cra, gre = club.student("hon"), club.student("cra"), club.student("gre")
    club.version(hon, "hon-bot", sample("random"), passed=True)
    club.version(gre, "gre-bot", sample("greedy"), passed=True)
    test_bot = 'name = "{0}"\ncommand = ["{{python}}", "{0}/main.py"]\n'
    club.version(cra, "crash-bot", TEST_BOTS / "crash_mid" / "main.py", passed=True,
                 spec_text=test_bot.format("crash_mid"),
                 files={"crash_mid/main.py": TEST_BOTS / "crash_mid" / "main.py",
                        "botlib.py": TEST_BOTS / "botlib.py"})
    # A build that never ends, and a bot whose moves are illegal: both fail their checks.
    hang = club.version(club.student("han"), "hang-bot", sample("random"), spec_text=(
        'name = "hang"\ncommand = ["{python}", "main.py"]\nbuild = ["sleep", "3600"]\n'))
    bad = club.version(club.student("bad"), "bad-bot", TEST_BOTS / "illegal" / "main.py",
                       spec_text=test_bot.format("illegal"),
                       files={"illegal/main.py": TEST_BOTS / "illegal" / "main.py",
                              "botlib.py": TEST_BOTS / "botlib.py"})
    db = ClubFolder(data).season_league.store_path
    runner = RunnerProcess(data)
    try:
        summary = wait_for("the hanging build stopped", lambda: club.value(
            f"CheckRun.objects.filter(version_id={hang}, state='failed')"
            ".values_list('summary', flat=True).first()"), runner)
        assert "stopped after the check's time limit of 40 s" in summary
        assert club.value(f"CheckLine.objects.filter(run__version_id={hang}).last().text") \
            == summary
        wait_for("the illegal bot's verdict", lambda: club.value(
            f"BotVersion.objects.get(pk={bad}).check_state") == "failed", runner)
        assert club.value(f"CheckLine.objects.filter(run__version_id={bad}, "
                          "text__contains='illegal').exists()")
        for owner, prefix in ((club.value("User.objects.get(username='han').pk"),
                               "hang-bot v1 failed its check: stopped after"),
                              (club.value("User.objects.get(username='bad').pk"),
                               "bad-bot v1 failed its check:")):
            assert club.value(f"Notice.objects.filter(user_id={owner}, "
                              f"text__startswith={prefix!r}).exists()")
        crashed = wait_for("the crash told to its owner", lambda: club.value(
            f"list(Notice.objects.filter(user_id={cra}, text__contains='game')"
            ".values_list('text', flat=True))"), runner)
        assert re.match(r"crash-bot v1 (crashed in|forfeited) game \d+", crashed[0]), crashed
        assert games_of(data, "hang-bot.v1") == games_of(data, "bad-bot.v1") == 0

        # A test game on demand: played by the runner, unrated, with only its owner's output.
        request = club(f"""
            from django.db import transaction
            with transaction.atomic():   # as the page queues it: with its opponents
                game = TestGame.objects.create(
                    requester_id={hon}, version=BotVersion.objects.get(league_name="hon-bot.v1"))
                game.opponents.add(BotVersion.objects.get(league_name="gre-bot.v1"))
            result = game.pk
        """)
        record_file = wait_for("the test game", lambda: club.value(
            f"TestGame.objects.get(pk={request}).record_file"), runner)
        record = json.loads((data / record_file).read_text())
        assert record["test_game"]["seats"] == ["hon-bot.v1", "gre-bot.v1"]
        assert record["output"][1].startswith("(another student's bot")
        assert record["game_id"] not in {row[0] for row in sqlite3.connect(db).execute(
            "SELECT game_id FROM games")}
        assert club.value(f"Notice.objects.filter(user_id={hon}, "
                          "text__contains='is ready to watch').exists()")

        # Disabling a bot, and an owner's account: their versions leave, the rest play on.
        club("Bot.objects.filter(name='crash-bot').update(disabled=True)")
        club("User.objects.filter(username='gre').update(is_active=False)")
        wait_for("both gone", lambda: club.value(
            "BotVersion.objects.filter(season_state='disabled').count()") == 2, runner)
        club.version(club.student("new"), "new-bot", sample("greedy"), passed=True)
        club.version(hon, "hon-bot", sample("random"), passed=True)   # its version 2
        wait_for("hon-bot v2 playing", lambda: games_of(data, "hon-bot.v2") > 0, runner)
        # Nothing scheduled after they left has them: their last games come before.
        games = store_games(data)
        first_new = min(i for i, bots, _, _ in games if "hon-bot.v2" in bots)
        assert all(i < first_new for i, bots, _, _ in games
                   if "crash-bot.v1" in bots or "gre-bot.v1" in bots)
        states = club.value("dict(BotVersion.objects.values_list('league_name', "
                            "'season_state'))")
        assert states["hon-bot.v1"] == "retired" and states["hon-bot.v2"] == "active"
        assert games_of(data, "new-bot.v1") > 0
    finally:
        runner.stop()
        club.close()


def test_the_season_plays_on_a_dask_cluster_and_a_newcomer_joins_it(tmp_path: Path) -> None:
    data = tmp_path / "club"
    club = Club(data)
    write_season(data, """
        seed = 7
        players = 2
        round_games = 2
        max_rounds = 2
        cluster = "local:1"
    """)
    club.version(club.student("alice"), "alice-bot", sample("random"), passed=True)
    club.version(club.student("bob"), "bob-bot", sample("greedy"), passed=True)
    db = ClubFolder(data).season_league.store_path
    runner = RunnerProcess(data)
    try:
        wait_for("the first round", lambda: games_stored(db) >= 2, runner)
        club.version(club.student("cat"), "cat-bot", sample("random"), passed=True)
        wait_for("the newcomer's games", lambda: games_of(data, "cat-bot.v1") > 0, runner)
    finally:
        runner.stop()
        club.close()
    with sqlite3.connect(db) as connection:   # every game was played by a cluster worker
        assert connection.execute("SELECT count(*) FROM game_workers").fetchone()[0] == \
            len(store_games(data))


def test_house_bots_play_from_the_first_start_and_a_first_student_joins_them_at_once(
        tmp_path: Path) -> None:
    """A season file without `house_bots`: the Python sample bots are the house, checked like
    any bot and playing from the first start; a student's first passed version is entered with
    its share of games against them at once; the organiser leaves them out of the final
    tables."""
    data = tmp_path / "club"
    club = Club(data)
    (data / "season.toml").write_text("seed = 5\nplayers = 2\nround_games = 2\n"
                                      "refit_seconds = 1\nhouse_in_final_table = false\n")
    house = ["house-greedy.v1", "house-montecarlo.v1", "house-random.v1"]
    runner = RunnerProcess(data)
    try:
        wait_for("the house bots active", lambda: sorted(club.value(
            "list(BotVersion.objects.filter(season_state='active', bot__house=True, "
            "bot__owner=None).values_list('league_name', flat=True))")) == house, runner)
        assert club.value("sorted(CheckRun.objects.filter(version__bot__house=True)"
                          ".values_list('state', flat=True))") == ["passed"] * 3
        store = ClubFolder(data).season_league.store_path
        wait_for("house games", lambda: games_stored(store) >= 2, runner)
        student = club.student("dora")
        club.version(student, "dora-bot", sample("random"), passed=True)
        passed = time.monotonic()
        wait_for("dora-bot entered", lambda: club.value(
            "BotVersion.objects.get(league_name='dora-bot.v1').season_state") == "active",
                 runner)
        wait_for("dora-bot's first rated game", lambda: games_of(data, "dora-bot.v1") > 0,
                 runner)
        print(f"dora-bot.v1 played its first game {time.monotonic() - passed:.1f} s after "
              f"its check passed")
        club.season_state("closed")
        wait_for("the report", lambda: club.value("Competition.first().report_path"),
                 runner)
    finally:
        runner.stop()
        club.close()
    final = json.loads(ClubFolder(data).season_league.table_json.read_text())
    assert [(row["rank"], row["bot"]) for row in final["table"]] == [(1, "dora-bot.v1")]
    assert final["table"][0]["separated_from_next"] is None   # the last row: no `~`
    assert not any(pair["a"].startswith("house-") or pair["b"].startswith("house-")
                   for pair in final["head_to_head"]), final["head_to_head"]
    table = ClubFolder(data).season_league.table_md.read_text()
    assert "| 1 | dora-bot.v1 |" in table and "| house-" not in table, table
    report = (ClubFolder(data).season_league.report / "index.html").read_text()
    assert "dora-bot.v1" in report


def test_the_season_files_house_keys_are_checked_in_one_line(tmp_path: Path) -> None:
    """`house_bots` takes sample bot names and spec files (relative to the season file); a bad
    entry or value is one line naming the file and the key."""
    from referee.server.shared.seasonkeys import load_runner_settings
    from referee.util.config import ConfigError

    season = tmp_path / "season.toml"
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "bot.toml").write_text('name = "strong"\ncommand = ["true"]\n')
    season.write_text('house_bots = ["greedy", "mine/bot.toml"]\nhouse_in_final_table = false\n')
    settings = load_runner_settings(season)
    assert settings.house_bots == [ROOT / "sample_bots" / "greedy.toml",
                                   tmp_path / "mine" / "bot.toml"]
    assert settings.house_in_final_table is False
    assert len(load_runner_settings(tmp_path / "none.toml").house_bots) == 3
    for text, said in (('house_bots = ["nosuchbot"]', "'nosuchbot' is neither"),
                       ('house_bots = "random"', "expected a list"),
                       ("house_in_final_table = 1", "expected true or false")):
        season.write_text(text + "\n")
        try:
            load_runner_settings(season)
        except ConfigError as exc:
            message = str(exc)
        else:
            raise AssertionError(f"{text} was taken")
        assert message.startswith(f"{season}: key 'house_") and said in message, message
        assert "\n" not in message


def test_a_house_bot_that_fails_its_check_keeps_the_organisers_folder(tmp_path: Path) -> None:
    """A failed check removes the version's own upload folder, never a house bot's folder: that
    is the organiser's (the spec's own folder, with every other spec beside it)."""
    data = tmp_path / "club"
    club = Club(data)
    house = tmp_path / "house"
    (house / "broken").mkdir(parents=True)
    (house / "broken" / "main.py").write_text("import sys\nsys.exit(3)\n")
    (house / "broken.toml").write_text('name = "broken"\ncommand = ["{python}", "main.py"]\n'
                                       'workdir = "broken"\n')
    (house / "beside.txt").write_text("the organiser's\n")
    (data / "season.toml").write_text(f"seed = 5\nplayers = 2\n"
                                      f"house_bots = [{str(house / 'broken.toml')!r}]\n")
    runner = RunnerProcess(data)
    try:
        wait_for("the house bot's check failed", lambda: club.value(
            "list(CheckRun.objects.values_list('state', flat=True))") == ["failed"], runner)
    finally:
        runner.stop()
        club.close()
    assert (house / "broken" / "main.py").exists() and (house / "beside.txt").exists()
