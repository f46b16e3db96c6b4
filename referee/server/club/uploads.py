"""An uploaded file becomes a new version of one of the student's bots, or nothing.

The file is unpacked (as hostile input, by `referee.server.unpack`) into a staging folder,
moved to DIR/uploads/<bot>/<n>/ and only then recorded as a BotVersion with its queued
CheckRun, in one transaction: an upload that fails anywhere leaves no version, and a folder
left by a crash between the move and the commit is taken for the next upload of that number.
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
import shutil
from pathlib import Path

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from referee.bots.diskwatch import disk_use
from referee.present.text import safe_line
from referee.server.club.models import BOT_NAME, Bot, BotVersion, CheckRun, Notice
from referee.server.shared.botnames import HOUSE_PREFIX, bot_name_from
from referee.server.shared.clubfolder import ClubFolder
from referee.server.shared.diskuse import over_budget, student_use, uploaded_folder
from referee.server.shared.seasonkeys import ServerLimits
from referee.server.unpack import UploadLimits, UploadRefused, unpack_upload

__all__ = ["UploadRefused", "accept_upload", "bot_name_from", "replace_queued_checks"]


def _check_name(name: str) -> None:
    if len(name) > 32 or not re.match(BOT_NAME.regex, name):
        raise UploadRefused(f"{safe_line(name, limit=60)!r} is not a bot name: lower-case "
                            f"letters, digits and dashes, at most 32, starting with a letter or "
                            f"digit")
    if name.startswith(HOUSE_PREFIX):   # nobody's bot may pass for one of the club's own
        raise UploadRefused(f"{name!r}: names starting with {HOUSE_PREFIX!r} are the club's "
                            f"house bots'; pick another")


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        while chunk := stream.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def content_hash(folder: Path, spec: str) -> str:
    """The hash of an unpacked upload's files: each file's path, whether it is executable and
    its bytes, in path order; the same files zipped again (other timestamps, another order)
    hash the same. Paths are taken from the spec's own folder when every file lies in it: a
    spec inside its bot's folder zipped with that folder (`zip -r mybot-cpp.zip mybot-cpp`)
    or without it (`referee submit mybot-cpp/bot.toml` zips its contents) is the same bot."""
    files = sorted((path for path in folder.rglob("*")
                    if path.is_file() and not path.is_symlink()),
                   key=lambda found: found.relative_to(folder).parts)
    base = (folder / spec).parent
    if not all(path.is_relative_to(base) for path in files):
        base = folder
    digest = hashlib.sha256()
    for path in files:
        executable = "x" if path.stat().st_mode & 0o111 else "-"
        digest.update(f"{path.relative_to(base).as_posix()}\0{executable}\0".encode())
        with path.open("rb") as file:   # streamed: an image archive may be large
            digest.update(hashlib.file_digest(file, "sha256").digest())
    return digest.hexdigest()


def _refuse_identical(bot: Bot, archive_sha: str, content: str) -> None:
    """UploadRefused when the upload is the bot's newest version again, byte for byte or file
    for file: it would be a new version that changes nothing. A newest version whose check
    failed may be sent again (to try its check again: a build's network was down)."""
    newest = bot.versions.order_by("-number").first()
    if newest is None or newest.check_state == BotVersion.FAILED:
        return
    if newest.archive_sha256 == archive_sha or (
            newest.content_sha256 and newest.content_sha256 == content):
        raise UploadRefused(f"identical to {newest.league_name} (v{newest.number}, the same "
                            f"files), nothing new: no version was made")


def free_name(name: str, username: str) -> str:
    """A bot name like `name` that no bot has: the name with the student's own name, else a
    number (two students who follow the same guide keep its name and tell their bots apart)."""
    own = re.sub(r"[^a-z0-9-]+", "-", username.lower()).strip("-") or "me"
    stem = name[:32 - len(own) - 1].rstrip("-")
    candidates = [f"{stem}-{own}", *(f"{name[:28].rstrip('-')}-{n}" for n in range(2, 1000))]
    for candidate in candidates:
        if re.match(BOT_NAME.regex, candidate) and not candidate.startswith(HOUSE_PREFIX) \
                and not Bot.objects.filter(name=candidate).exists():
            return candidate
    return f"{name[:20]}-{secrets.token_hex(4)}"


def _bot_for(user: User, name: str) -> Bot:
    """The user's bot `name`, made if they may have another; UploadRefused otherwise."""
    bot = Bot.objects.filter(name=name).first()
    if bot is not None:
        if bot.owner_id != user.pk:
            raise UploadRefused(f"the bot name {name!r} belongs to another student; pick "
                                f"another, e.g. {free_name(name, user.username)!r} (free now)")
        if bot.disabled:
            reason = f": {bot.disabled_reason}" if bot.disabled_reason else ""
            raise UploadRefused(f"the organiser disabled {name}{reason}")
        return bot
    profile = getattr(user, "profile", None)
    if profile is not None and user.bots.count() >= profile.max_bots:
        raise UploadRefused(f"you have {profile.max_bots} bots already, the most you may have; "
                            f"upload a new version of one of them instead")
    return Bot.objects.create(owner=user, name=name)


def accept_upload(user: User, upload: Path, original_name: str, bot_name: str | None,
                  limits: ServerLimits) -> BotVersion:
    """Make `upload` (a file in DIR/tmp) the next version of the user's bot `bot_name` (or of
    the bot named by its spec). UploadRefused, one line, when it cannot be."""
    if bot_name:
        _check_name(bot_name)
    folder = ClubFolder.of_django()
    staging = folder.incoming / secrets.token_hex(8)
    try:
        staging.mkdir(parents=True)
        archive = staging / "archive"
        try:
            os.link(upload, archive)   # same disk: no copy; Django removes its own name
        except OSError:
            shutil.copyfile(upload, archive)
        unpacked = unpack_upload(archive, staging / "bot", UploadLimits(
            upload_max_bytes=limits.upload_max_bytes,
            unpacked_max_bytes=limits.unpacked_max_bytes, max_files=limits.max_files),
            name=bot_name or "bot")
        name = bot_name or bot_name_from(unpacked.name)
        _check_name(name)
        sha = _sha256(archive)
        content = content_hash(staging / "bot", unpacked.spec)
        size = archive.stat().st_size
        _within_budget(user, name, staging, limits)   # measured outside the write lock
        with transaction.atomic():
            bot = _bot_for(user, name)
            _refuse_identical(bot, sha, content)
            last = bot.versions.order_by("-number").values_list("number", flat=True).first()
            number = (last or 0) + 1
            dest = folder.version_upload(name, number)
            if dest.exists():   # left by a crash before the commit: no version owns it
                shutil.rmtree(dest)
            dest.parent.mkdir(parents=True, exist_ok=True)
            os.rename(staging, dest)
            try:
                version = BotVersion.objects.create(
                    bot=bot, number=number, kind=unpacked.kind,
                    archive_name=safe_line(original_name, limit=200)[:200],
                    archive_sha256=sha, content_sha256=content, archive_size=size,
                    folder=folder.version_folder(name, number), spec=unpacked.spec,
                    league_name=f"{name}.v{number}")
                CheckRun.objects.create(version=version)
                replace_queued_checks(version)
            except BaseException:
                shutil.rmtree(dest, ignore_errors=True)
                raise
        return version
    except OSError as exc:   # a full disk, most likely: one line, nothing half-written
        raise UploadRefused(f"the server could not store the upload ({exc.strerror or exc}); "
                            f"nothing was kept, try again later") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _within_budget(user: User, name: str, staging: Path, limits: ServerLimits) -> None:
    """UploadRefused (one line: the budget and the use) when the student's uploads and this
    one (archive and folder, as stored) pass their disk budget. The folders of the bot's
    versions still queued do not count: this upload replaces them, and they go."""
    data = Path(settings.DATA_DIR)
    queued = BotVersion.objects.filter(bot__name=name, bot__owner=user,
                                       checkrun__state=CheckRun.QUEUED)
    going = [folder for folder in (uploaded_folder(data, v) for v in queued) if folder]
    used = student_use(data, user.pk) - disk_use(going)
    why = over_budget(used, disk_use([staging]), limits.student_disk_mb)
    if why:
        raise UploadRefused(why)


def _remove_when_committed(version_id: int) -> None:
    """The retention rule for a replaced version: its `bot` folder goes (nothing will run
    it), its archive and its page stay; once the transaction that replaced it is committed."""
    version = BotVersion.objects.get(pk=version_id)
    folder = uploaded_folder(Path(settings.DATA_DIR), version)
    if folder is not None:
        transaction.on_commit(lambda: shutil.rmtree(folder, ignore_errors=True))


def replace_queued_checks(version: BotVersion) -> int:
    """The bot's older versions whose checks still wait in the queue are replaced by `version`
    (in the caller's transaction): only the newest upload of a bot waits for a check, so a
    student cannot fill the queue by uploading again and again. A check already running goes
    on. Each replaced version says so, and its owner gets a notice. Returns how many."""
    older = (CheckRun.objects.select_related("version")
             .filter(version__bot_id=version.bot_id, state=CheckRun.QUEUED,
                     version__number__lt=version.number))
    summary = f"replaced by v{version.number}, uploaded before this version's check ran"
    count = 0
    for check in older:
        check.state, check.finished_at, check.summary = CheckRun.REPLACED, timezone.now(), summary
        check.save(update_fields=["state", "finished_at", "summary"])
        BotVersion.objects.filter(pk=check.version_id).update(check_state=BotVersion.REPLACED)
        Notice.objects.create(user_id=version.bot.owner_id, version_id=check.version_id,
                              text=f"{version.bot.name} v{check.version.number}: {summary}")
        _remove_when_committed(check.version_id)
        count += 1
    return count
