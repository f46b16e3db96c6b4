"""The job queue kept in step with the rows it points at: whichever page, command or runner
step saves a check, a test game or a game in the browser, its Job says the same (queued,
running or ended, and when it started). Changes made with `update()` call `sync_jobs`."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from referee.server.club.models import CheckRun, HumanGame, Job, TestGame

QueueRow = CheckRun | TestGame | HumanGame

KIND_OF: dict[type, str] = {CheckRun: Job.CHECK, TestGame: Job.TEST_GAME,
                            HumanGame: Job.BROWSER_GAME}
MODEL_OF: dict[str, type[QueueRow]] = {kind: model for model, kind in KIND_OF.items()}


def job_state(row_state: str) -> str:
    """The queue's word for a row's state: queued, running, or ended (every verdict)."""
    return row_state if row_state in (Job.QUEUED, Job.RUNNING) else Job.ENDED


def queued_at(row: QueueRow) -> datetime:
    """When the row joined the queue (each model names it its own way)."""
    if isinstance(row, CheckRun):
        return row.queued_at
    return row.requested_at if isinstance(row, TestGame) else row.created_at


def owner_of(row: QueueRow) -> tuple[int | None, bool]:
    """Whose the row is (the student's id; None for a house bot's check), and whether it is
    a house bot's check."""
    if isinstance(row, CheckRun):
        bot = row.version.bot
        return bot.owner_id, bot.house
    return (row.requester_id if isinstance(row, TestGame) else row.owner_id), False


def sync_job(row: QueueRow) -> None:
    """Make the row's Job say what the row says (made the first time)."""
    kind = KIND_OF[type(row)]
    state = job_state(row.state)
    if Job.objects.filter(kind=kind, ref=row.pk).update(state=state, started_at=row.started_at):
        return
    owner, house = owner_of(row)
    Job.objects.create(kind=kind, ref=row.pk, owner_id=owner, house=house, state=state,
                       queued_at=queued_at(row), started_at=row.started_at)


def sync_jobs(rows: Iterable[QueueRow]) -> None:
    """`sync_job` for rows changed with `update()` (which saves no row, so tells no one)."""
    for row in rows:
        sync_job(row)


@receiver(post_save, sender=CheckRun)
@receiver(post_save, sender=TestGame)
@receiver(post_save, sender=HumanGame)
def row_saved(sender: Any, instance: QueueRow, **_kwargs: Any) -> None:
    """Every save of a queue row reaches its Job."""
    sync_job(instance)


@receiver(post_delete, sender=CheckRun)
@receiver(post_delete, sender=TestGame)
@receiver(post_delete, sender=HumanGame)
def row_deleted(sender: Any, instance: QueueRow, **_kwargs: Any) -> None:
    """A row deleted (its version, its student gone) leaves the queue with it."""
    Job.objects.filter(kind=KIND_OF[sender], ref=instance.pk).delete()
