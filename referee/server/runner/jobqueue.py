"""The runner's one job queue: checks, test games and games in the browser are claimed by
one function, `claim`, in one fair order.

The order: checks and games in the browser go round robin between students (a student with
a job of that kind running starts no other of it; of the rest, the student whose last one
started longest ago, or never, goes first, with their oldest queued job), so no student holds
more than one of the runner's places for that kind however many they queue. Test games, one
at a time, go oldest first. A claim is one transaction (SQLite's IMMEDIATE, which serialises
writers) that marks the job and its row running only if it is still queued: two claimers
never take the same job.
"""

from __future__ import annotations

from datetime import UTC, datetime

from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from referee.server.club.models import BotVersion, CheckRun, Job
from referee.server.shared.jobsync import MODEL_OF, sync_job

ROUND_ROBIN = frozenset({Job.CHECK, Job.BROWSER_GAME})
NEVER = datetime.min.replace(tzinfo=UTC)


def claim(kind: str, house_only: bool = False) -> Job | None:
    """Take the next queued job of `kind` by the fair order (marking it and its row running;
    a check's lines from while it waited are dropped and its attempt counted), or None when
    none may start now. `house_only`: only a house bot's check (uploads may not run here)."""
    with transaction.atomic():
        while (job := next_job(kind, house_only)) is not None:
            now = timezone.now()
            taken = Job.objects.filter(pk=job.pk, state=Job.QUEUED).update(
                state=Job.RUNNING, started_at=now)
            if taken and _start_row(job, now):
                job.state, job.started_at = Job.RUNNING, now
                return job
            _resync(job)   # its row left the queue unsaid (or is gone): the next one
    return None


def next_job(kind: str, house_only: bool = False) -> Job | None:
    """The job of `kind` to start next by the queue's fair order (module docstring)."""
    queued = Job.objects.filter(kind=kind, state=Job.QUEUED).order_by("queued_at", "ref")
    if house_only:
        queued = queued.filter(house=True)
    if kind not in ROUND_ROBIN:
        return queued.first()
    busy = set(Job.objects.filter(kind=kind, state=Job.RUNNING)
               .values_list("owner_id", flat=True))
    first: dict[int | None, Job] = {}
    for job in queued:
        if job.owner_id not in busy:
            first.setdefault(job.owner_id, job)
    if not first:
        return None
    last_start = dict(Job.objects.filter(kind=kind, owner_id__in=list(first))
                      .values("owner_id").annotate(last=Max("started_at"))
                      .values_list("owner_id", "last"))
    return min(first.values(), key=lambda j: (last_start.get(j.owner_id) or NEVER,
                                              j.queued_at, j.ref))


def _start_row(job: Job, now: datetime) -> bool:
    """Mark the job's row running if it is still queued; False if it is not (or is gone)."""
    model = MODEL_OF[job.kind]
    if job.kind != Job.CHECK:
        return bool(model.objects.filter(pk=job.ref, state=Job.QUEUED)
                    .update(state=Job.RUNNING, started_at=now))
    check = CheckRun.objects.filter(pk=job.ref, state=CheckRun.QUEUED).first()
    if check is None:
        return False
    check.lines.all().delete()
    check.state, check.started_at = CheckRun.RUNNING, now
    check.attempts += 1
    check.save(update_fields=["state", "started_at", "attempts"])
    BotVersion.objects.filter(pk=check.version_id).update(check_state=BotVersion.RUNNING)
    return True


def _resync(job: Job) -> None:
    """The job as its row says now, or gone with its row."""
    row = MODEL_OF[job.kind].objects.filter(pk=job.ref).first()
    if row is None:
        job.delete()
    else:
        sync_job(row)
