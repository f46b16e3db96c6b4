"""What a student's uploads take on disk: a budget on it, and the rule that frees it.

Every upload is kept as DIR/uploads/<bot>/<n>/: `archive` (the file as uploaded) and `bot`
(the folder it unpacked to, which its check's build grows: node_modules, compiled programs).
The budget (`student_disk_mb`) bounds all of a student's bots' folders there together, as
`referee.bots.diskwatch.disk_use` measures them (blocks taken, every entry at least one):
an upload that would pass it is refused, and a check whose build takes the student past it
fails. The retention rule keeps what a version's page and the season need: a version that is
replaced, failed or retired keeps its archive and its check's report (in the database); its
`bot` folder is removed once nothing can run it, that is once it is no student's current
version and no queued or running test game or browser game names it.
"""

from __future__ import annotations

import shutil
from collections.abc import Collection
from pathlib import Path

from django.db.models import Q

from referee.bots.diskwatch import MIB, disk_use
from referee.server.club.models import Bot, BotVersion, HumanGame, TestGame
from referee.server.shared.clubfolder import ClubFolder

# Said on the season page and My bots (without the word "retired": My bots shows it as a
# version's state, and a failed version must not read as one).
RULE = ("a version replaced by a newer upload, failed, or succeeded in the season by a newer "
        "one keeps its archive and its check's report; its built folder is removed once no "
        "game in play needs it")


def student_use(data: Path, user_id: int) -> int:
    """The bytes all the student's bots take under DIR/uploads, archives and folders."""
    names = Bot.objects.filter(owner_id=user_id, house=False).values_list("name", flat=True)
    return disk_use([ClubFolder(data).bot_uploads(name) for name in names])


def mib(size: int) -> str:
    """A size in MiB as the pages and refusals say it."""
    return f"{size / MIB:,.1f} MiB"


def over_budget(used: int, adding: int, budget_mb: int) -> str | None:
    """One line saying why `adding` bytes more than `used` passes the budget, or None."""
    if used + adding <= budget_mb * MIB:
        return None
    return (f"your bots take {mib(used)} on the server and this version {mib(adding)} more: "
            f"over your disk budget of {budget_mb:,} MiB (student_disk_mb); older versions' "
            f"built folders are removed as they retire, ask the organiser for more")


def uploaded_folder(data: Path, version: BotVersion) -> Path | None:
    """The version's `bot` folder if it is an upload's own (under DIR/uploads; a house bot's
    folder is the organiser's and never removed), else None."""
    folder = (data / version.folder).resolve()
    uploads = ClubFolder(data).uploads.resolve()
    return folder if folder.is_relative_to(uploads) and folder != uploads else None


def in_play() -> set[int]:
    """The versions a queued or running test game or browser game names."""
    live = [TestGame.QUEUED, TestGame.RUNNING]
    tested = TestGame.objects.filter(state__in=live)
    needed = set(tested.values_list("version_id", flat=True))
    needed |= set(TestGame.opponents.through.objects.filter(testgame__state__in=live)
                  .values_list("botversion_id", flat=True))
    needed |= set(HumanGame.opponents.through.objects.filter(humangame__state__in=live)
                  .values_list("botversion_id", flat=True))
    return needed


def prunable(data: Path, keep: Collection[str] = ()) -> list[Path]:
    """The `bot` folders the retention rule removes now: of versions replaced, failed or
    retired, that no game in play names, that no other competition plays (their league
    names `keep`), and that are still there."""
    done = BotVersion.objects.filter(
        Q(check_state__in=[BotVersion.REPLACED, BotVersion.FAILED])
        | Q(season_state=BotVersion.RETIRED), bot__house=False).exclude(
        pk__in=in_play()).exclude(league_name__in=list(keep))
    found = []
    for version in done:
        folder = uploaded_folder(data, version)
        if folder is not None and folder.exists():
            found.append(folder)
    return found


def remove_folders(folders: list[Path]) -> int:
    """Remove the folders (each a version's `bot`, never its archive beside it); how many."""
    for folder in folders:
        shutil.rmtree(folder, ignore_errors=True)
    return len(folders)
