"""The club's records (the contract between the web process and the runner).

The web process writes accounts, uploads, versions with their checks, test-game and
browser-game requests and the season's state; the runner claims them from the one job queue
(Job), enters and retires versions and writes standings. They talk only through these tables
and the files in the data folder.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.core.validators import RegexValidator
from django.db import models

BOT_NAME = RegexValidator(
    r"^[a-z0-9][a-z0-9-]*\Z",
    "a bot name is lower-case letters, digits and dashes, starting with a letter or digit",
)


class Profile(models.Model):
    """A student: a User with a display name and a cap on their bots."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                                related_name="profile")
    display_name = models.CharField(max_length=40, unique=True)
    max_bots = models.PositiveIntegerField(default=3)

    def __str__(self) -> str:
        return self.display_name


class JoinCode(models.Model):
    """A code the organiser hands out; a student joins with it (no e-mail address needed)."""

    code = models.CharField(max_length=32, unique=True)
    note = models.CharField(max_length=100, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    max_uses = models.PositiveIntegerField(default=50)
    uses = models.PositiveIntegerField(default=0)
    active = models.BooleanField(default=True)

    def __str__(self) -> str:
        return self.code


TOKEN_LIFETIME = timedelta(days=90)


class ApiToken(models.Model):
    """A personal token for `referee submit`: only its sha256 is kept. It works for
    TOKEN_LIFETIME from when it was made, until revoked, or until its user is disabled."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                             related_name="tokens")
    token_hash = models.CharField(max_length=64, unique=True)
    prefix = models.CharField(max_length=8)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.prefix}…"

    @property
    def expires_at(self) -> datetime:
        """When the token stops working, revoked or not."""
        return self.created_at + TOKEN_LIFETIME


class Competition(models.Model):
    """A competition of the club: a season with its own rules, table sizes, pace, limits, house
    bots and entry rules, its own league folder (`folder`, relative to DIR) and state. The
    first (`Competition.first()`, pk 1: the club's one season before there were several,
    migration 0012) takes its settings from the season file, and every bot of the club plays
    in it; another takes them from `settings` (a season file's table: the same keys, read by
    the same parser, shared.seasonkeys.competition_settings) and plays the bots entered in it
    (CompetitionEntry)."""

    FIRST = 1   # the primary key of the first competition (migration 0002 made its row)
    RUNNING, PAUSED, CLOSED = "running", "paused", "closed"   # running: open, playing
    STATES = [(RUNNING, "open"), (PAUSED, "paused"), (CLOSED, "closed")]
    STUDENTS, HOUSE_ONLY = "students", "house"
    ENTRY = [(STUDENTS, "every student"), (HOUSE_ONLY, "the house bots only")]

    name = models.CharField(max_length=100, default="season")
    slug = models.SlugField(max_length=40, unique=True)
    folder = models.CharField(max_length=100, default="season")   # relative to DIR
    state = models.CharField(max_length=10, choices=STATES, default=RUNNING)
    settings = models.JSONField(default=dict, blank=True)   # {}: the season file's (the first)
    who_may_enter = models.CharField(max_length=10, choices=ENTRY, default=STUDENTS)
    bots_per_student = models.PositiveIntegerField(default=1)
    created_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)
    closed_at = models.DateTimeField(null=True, blank=True)
    report_path = models.CharField(max_length=300, blank=True)

    class Meta:
        ordering = ["pk"]

    def __str__(self) -> str:
        return f"{self.name} ({self.state_word})"

    @property
    def is_first(self) -> bool:
        """The club's first competition (its settings are the season file's)."""
        return self.pk == self.FIRST

    @property
    def state_word(self) -> str:
        """open, paused or closed."""
        return dict(self.STATES).get(self.state, self.state)

    @classmethod
    def first(cls) -> Competition:
        """The first competition's row (made if a database lost it: both processes always
        find it)."""
        return cls.objects.get_or_create(pk=cls.FIRST, defaults={"slug": "season"})[0]

    @classmethod
    def first_row(cls) -> models.QuerySet[Competition]:
        """The first competition's row as a query, for a change made in one statement."""
        return cls.objects.filter(pk=cls.FIRST)


class Bot(models.Model):
    """A student's bot: a name in the season, with a version per upload; or a house bot (owned
    by nobody), one the season file names, that plays from the season's first start."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                              related_name="bots", null=True, blank=True)
    house = models.BooleanField(default=False)
    name = models.CharField(max_length=32, unique=True, validators=[BOT_NAME])
    created_at = models.DateTimeField(auto_now_add=True)
    disabled = models.BooleanField(default=False)
    disabled_reason = models.CharField(max_length=200, blank=True)

    def __str__(self) -> str:
        return self.name


class CompetitionEntry(models.Model):
    """A bot entered in a competition other than the first (every bot plays in the first):
    its newest version that passed its check plays there, from the competition's next round.
    Withdrawing the bot deletes the row; its games stay in the competition's store."""

    competition = models.ForeignKey(Competition, on_delete=models.CASCADE,
                                    related_name="entries")
    bot = models.ForeignKey("Bot", on_delete=models.CASCADE, related_name="entries")
    entered_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["competition", "bot"],
                                               name="club_entry_once")]
        ordering = ["competition", "bot"]

    def __str__(self) -> str:
        return f"{self.bot_id} in {self.competition_id}"


class BotVersion(models.Model):
    """One upload of a bot: its unpacked folder, its check and its place in the season."""

    FOLDER, IMAGE = "folder", "image"
    KINDS = [(FOLDER, "folder"), (IMAGE, "image")]
    QUEUED, RUNNING, PASSED, FAILED = "queued", "running", "passed", "failed"
    REPLACED = "replaced"   # a newer upload of the bot came before this one's check ran
    CHECK_STATES = [(QUEUED, "queued"), (RUNNING, "running"), (PASSED, "passed"),
                    (FAILED, "failed"), (REPLACED, "replaced")]
    WAITING, ACTIVE, RETIRED, DISABLED = "waiting", "active", "retired", "disabled"
    SEASON_STATES = [(WAITING, "waiting"), (ACTIVE, "active"), (RETIRED, "retired"),
                     (DISABLED, "disabled")]

    bot = models.ForeignKey(Bot, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)
    kind = models.CharField(max_length=10, choices=KINDS, default=FOLDER)
    archive_name = models.CharField(max_length=200)
    archive_sha256 = models.CharField(max_length=64)
    # the unpacked files' hash (uploads.content_hash): the same files zipped again match
    content_sha256 = models.CharField(max_length=64, blank=True, default="")
    archive_size = models.BigIntegerField()
    folder = models.CharField(max_length=300)   # relative to DIR: uploads/<bot>/<n>/bot
    spec = models.CharField(max_length=200)     # relative to folder
    league_name = models.CharField(max_length=48, unique=True)   # <bot>.v<n>
    check_state = models.CharField(max_length=10, choices=CHECK_STATES, default=QUEUED)
    season_state = models.CharField(max_length=10, choices=SEASON_STATES, default=WAITING)
    entered_at = models.DateTimeField(null=True, blank=True)
    retired_at = models.DateTimeField(null=True, blank=True)
    error = models.TextField(blank=True)
    # Taken out of the season by the runner (it could not start, or forfeited game after game;
    # `error` says which): a new upload of the bot, or the organiser's word, puts it back.
    taken_out = models.BooleanField(default=False)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["bot", "number"],
                                               name="club_version_number_unique")]
        ordering = ["bot", "number"]

    def __str__(self) -> str:
        return self.league_name

    @property
    def with_owner(self) -> str:
        """The version as lists of bots name it: its owner beside it (`mine.v2 (ann)`), or
        `(house)` for a house bot, as the leaderboard's student column tells them apart."""
        owner = self.bot.owner.username if self.bot.owner_id and self.bot.owner else ""
        return f"{self.league_name} ({'house' if self.bot.house or not owner else owner})"

    @property
    def season_shown(self) -> str:
        """The version's place in the season as its owner reads it: a version that failed its
        check never plays (whatever newer version took the bot's place since)."""
        if self.check_state == self.FAILED:
            return "never: its check failed"
        return self.season_state


class CheckRun(models.Model):
    """The `referee check` of one version, run by the runner in the sandbox."""

    QUEUED, RUNNING, PASSED, FAILED = BotVersion.QUEUED, BotVersion.RUNNING, \
        BotVersion.PASSED, BotVersion.FAILED
    REPLACED = BotVersion.REPLACED
    STATES = BotVersion.CHECK_STATES

    # Reached from a version as `version.checkrun` (`check` is taken by Django's Model.check()).
    version = models.OneToOneField(BotVersion, on_delete=models.CASCADE, related_name="checkrun")
    state = models.CharField(max_length=10, choices=STATES, default=QUEUED)
    queued_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    summary = models.CharField(max_length=300, blank=True)
    attempts = models.PositiveIntegerField(default=0)

    def __str__(self) -> str:
        return f"check of {self.version}"


class CheckLine(models.Model):
    """One line a check printed (build output included), in order."""

    # `run`, not `check`: Django's Model.check() owns that name.
    run = models.ForeignKey(CheckRun, on_delete=models.CASCADE, related_name="lines")
    seq = models.PositiveIntegerField()
    text = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["run", "seq"]
        constraints = [models.UniqueConstraint(fields=["run", "seq"],
                                               name="club_checkline_seq_unique")]


class TestGame(models.Model):
    """An unrated game a student asked for: one of their versions against bots they chose."""

    __test__ = False   # not a pytest test class, whatever its name says

    QUEUED, RUNNING, DONE, FAILED = "queued", "running", "done", "failed"
    STATES = [(QUEUED, "queued"), (RUNNING, "running"), (DONE, "done"), (FAILED, "failed")]

    requester = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)
    version = models.ForeignKey(BotVersion, on_delete=models.CASCADE, related_name="test_games")
    opponents = models.ManyToManyField(BotVersion, related_name="+")
    state = models.CharField(max_length=10, choices=STATES, default=QUEUED)
    requested_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    record_file = models.CharField(max_length=300, blank=True)   # relative to DIR
    error = models.TextField(blank=True)


class Standing(models.Model):
    """A snapshot of a competition's table after a refit; pages show the newest one."""

    # (an older club's standings, and one written without saying, are the first's)
    competition = models.ForeignKey(Competition, on_delete=models.CASCADE,
                                    default=Competition.FIRST, related_name="standings")
    created_at = models.DateTimeField(auto_now_add=True)
    games = models.PositiveIntegerField()
    data = models.JSONField()

    class Meta:
        get_latest_by = ["created_at", "id"]


class RatingHistory(models.Model):
    """A bot's strength over the season, for its page's chart: one point per version and refit
    that rated new games of it, `[time, version, games, strength, low, high]` (time in seconds
    since the epoch; the 95% interval), oldest first. The runner appends them as it stores a
    standing and thins them, so a season's length never grows a row past HISTORY_POINTS; and
    it draws their chart then, once (history.rating_chart), so that no page request does."""

    # A bot's page reads its chart with the bot (select_related): no query of its own.
    bot = models.OneToOneField(Bot, on_delete=models.CASCADE, related_name="history")
    points = models.JSONField(default=list)
    chart = models.TextField(blank=True, default="")     # HTML drawn from numbers only


class ClubMessage(models.Model):
    """A message from the organiser to every student, on their My bots page until removed."""

    created_at = models.DateTimeField(auto_now_add=True)
    text = models.CharField(max_length=500)


class Notice(models.Model):
    """A message from the runner to one student (or, with no user, to the organiser)."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, null=True,
                             blank=True, related_name="notices")
    created_at = models.DateTimeField(auto_now_add=True)
    text = models.CharField(max_length=500)
    version = models.ForeignKey(BotVersion, on_delete=models.SET_NULL, null=True, blank=True)
    read = models.BooleanField(default=False)


class HumanGame(models.Model):
    """A game a student plays in the browser against bots they chose (never rated).

    The runner plays it with a human seat (referee.server.runner.humangames) whose decisions
    come from the page through HumanMove rows; it keeps the game's public steps and board here
    as they happen, so the page draws the game so far after a reload."""

    QUEUED, RUNNING, DONE, FAILED = "queued", "running", "done", "failed"
    STATES = [(QUEUED, "queued"), (RUNNING, "running"), (DONE, "done"), (FAILED, "failed")]
    PLAYER_SEAT = 0   # the player sits first; the opponents follow in the order chosen

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                              related_name="human_games")
    opponents = models.ManyToManyField(BotVersion, related_name="+")
    state = models.CharField(max_length=10, choices=STATES, default=QUEUED)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    names = models.JSONField(default=list)    # the seats' names, the player's seat first
    steps = models.JSONField(default=list)    # the game's public lines so far (no bot output)
    board = models.JSONField(default=dict)    # the casinos and seats as they stand now
    limits = models.CharField(max_length=100, blank=True)   # the human seat's time limits
    record_file = models.CharField(max_length=300, blank=True)   # relative to DIR
    error = models.TextField(blank=True)


class HumanMove(models.Model):
    """One question the runner's human seat asks the page, and the player's answer: `choice`
    is an index into `question["choices"]` (the legal actions), set once by the page."""

    OPEN, ANSWERED, EXPIRED = "open", "answered", "expired"
    STATES = [(OPEN, "open"), (ANSWERED, "answered"), (EXPIRED, "expired")]

    game = models.ForeignKey(HumanGame, on_delete=models.CASCADE, related_name="moves")
    number = models.PositiveIntegerField()
    question = models.JSONField()             # the roll and the choices' labels
    state = models.CharField(max_length=10, choices=STATES, default=OPEN)
    choice = models.PositiveIntegerField(null=True, blank=True)
    asked_at = models.DateTimeField(auto_now_add=True)
    answered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["game", "number"]
        constraints = [models.UniqueConstraint(fields=["game", "number"],
                                               name="club_humanmove_number_unique")]


class RateCounter(models.Model):
    """How many requests of one kind (`key`: a kind and a hash of who) one fixed window has
    counted (referee.server.club.ratecount). A row is only ever incremented, in one statement,
    and deleted only after its window has ended: no cache evicts it early."""

    key = models.CharField(max_length=80)
    window_start = models.BigIntegerField()   # Unix seconds, a multiple of the window
    window_end = models.BigIntegerField(db_index=True)
    count = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["key", "window_start"],
                                               name="one_counter_per_key_and_window")]


class Job(models.Model):
    """One entry of the runner's one job queue: a version's check, a test game or a game in
    the browser, by `kind` and the id of its row (`ref`). The row keeps what its page shows;
    this keeps what the queue needs to claim fairly (whose it is, when it was queued, when it
    started), so that one claim (referee.server.runner.jobqueue) serves all three kinds.
    Kept in step with its row by shared.jobsync on every save of the row."""

    CHECK, TEST_GAME, BROWSER_GAME = "check", "testgame", "browsergame"
    KINDS = [(CHECK, "check"), (TEST_GAME, "test game"), (BROWSER_GAME, "browser game")]
    QUEUED, RUNNING, ENDED = "queued", "running", "ended"
    STATES = [(QUEUED, "queued"), (RUNNING, "running"), (ENDED, "ended")]

    kind = models.CharField(max_length=12, choices=KINDS)
    ref = models.PositiveIntegerField()             # the CheckRun, TestGame or HumanGame id
    owner_id = models.IntegerField(null=True, blank=True)   # the student's; None: a house bot
    house = models.BooleanField(default=False)      # a house bot's check
    state = models.CharField(max_length=10, choices=STATES, default=QUEUED)
    queued_at = models.DateTimeField()
    started_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["kind", "ref"],
                                               name="club_job_one_per_row")]
        indexes = [models.Index(fields=["kind", "state"], name="club_job_kind_state")]

    def __str__(self) -> str:
        return f"{self.kind} {self.ref} ({self.state})"
