"""The runner's one job queue (club.models.Job): checks, test games and games in the browser
in one table, claimed by one function. Every row of the three kinds an older club holds gets
its Job, in the state it is in, so a club upgraded mid-season claims what it had queued."""

from django.db import migrations, models

ENDED = "ended"


def fill_queue(apps, schema_editor):   # noqa: ANN001, ANN201 - Django's migration signature
    Job = apps.get_model("club", "Job")
    CheckRun = apps.get_model("club", "CheckRun")
    TestGame = apps.get_model("club", "TestGame")
    HumanGame = apps.get_model("club", "HumanGame")

    def state(row_state):   # noqa: ANN001, ANN202
        return row_state if row_state in ("queued", "running") else ENDED

    jobs = [Job(kind="check", ref=c.pk, owner_id=c.version.bot.owner_id,
                house=c.version.bot.house, state=state(c.state), queued_at=c.queued_at,
                started_at=c.started_at)
            for c in CheckRun.objects.select_related("version__bot").order_by("pk")]
    jobs += [Job(kind="testgame", ref=g.pk, owner_id=g.requester_id, state=state(g.state),
                 queued_at=g.requested_at, started_at=g.started_at)
             for g in TestGame.objects.order_by("pk")]
    jobs += [Job(kind="browsergame", ref=g.pk, owner_id=g.owner_id, state=state(g.state),
                 queued_at=g.created_at, started_at=g.started_at)
             for g in HumanGame.objects.order_by("pk")]
    Job.objects.bulk_create(jobs, batch_size=500)


class Migration(migrations.Migration):
    dependencies = [
        ("club", "0010_version_content_hash"),
    ]

    operations = [
        migrations.CreateModel(
            name="Job",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True,
                                           serialize=False, verbose_name="ID")),
                ("kind", models.CharField(choices=[("check", "check"),
                                                   ("testgame", "test game"),
                                                   ("browsergame", "browser game")],
                                          max_length=12)),
                ("ref", models.PositiveIntegerField()),
                ("owner_id", models.IntegerField(blank=True, null=True)),
                ("house", models.BooleanField(default=False)),
                ("state", models.CharField(choices=[("queued", "queued"),
                                                    ("running", "running"),
                                                    ("ended", "ended")],
                                           default="queued", max_length=10)),
                ("queued_at", models.DateTimeField()),
                ("started_at", models.DateTimeField(blank=True, null=True)),
            ],
            options={
                "constraints": [models.UniqueConstraint(fields=("kind", "ref"),
                                                        name="club_job_one_per_row")],
                "indexes": [models.Index(fields=["kind", "state"],
                                         name="club_job_kind_state")],
            },
        ),
        migrations.RunPython(fill_queue, migrations.RunPython.noop),
    ]
