"""Several competitions on one server: the club's one season becomes its first competition
(the same row, pk 1, its state, report and folder `season/` kept: nothing of it moves), with
a slug for its pages; other competitions are rows beside it, each with its bots' entries; each
standing belongs to a competition (the season's standings to the first)."""

from django.db import migrations, models

FIRST = 1


def first_competition(apps, schema_editor):   # noqa: ANN001, ANN201 - Django's signature
    Competition = apps.get_model("club", "Competition")
    for row in Competition.objects.all():
        # The first's pages are /c/season/ whatever its name (services.RESERVED_SLUGS keeps it).
        row.slug = "season" if row.pk == FIRST else f"c{row.pk}"
        row.folder = "season"
        row.created_at = row.updated_at
        row.save(update_fields=["slug", "folder", "created_at"])


class Migration(migrations.Migration):
    dependencies = [("club", "0011_job_queue")]
    operations = [
        migrations.RenameModel("Season", "Competition"),
        migrations.AlterModelOptions(name="competition", options={"ordering": ["pk"]}),
        migrations.AlterField("competition", "state", models.CharField(
            choices=[("running", "open"), ("paused", "paused"), ("closed", "closed")],
            default="running", max_length=10)),
        migrations.AddField("competition", "slug", models.SlugField(
            max_length=40, null=True)),
        migrations.AddField("competition", "folder", models.CharField(
            default="season", max_length=100)),
        migrations.AddField("competition", "settings", models.JSONField(
            blank=True, default=dict)),
        migrations.AddField("competition", "who_may_enter", models.CharField(
            choices=[("students", "every student"), ("house", "the house bots only")],
            default="students", max_length=10)),
        migrations.AddField("competition", "bots_per_student", models.PositiveIntegerField(
            default=1)),
        migrations.AddField("competition", "created_at", models.DateTimeField(
            blank=True, null=True)),
        migrations.AddField("standing", "competition", models.ForeignKey(
            default=FIRST, on_delete=models.deletion.CASCADE, related_name="standings",
            to="club.competition")),
        migrations.RunPython(first_competition, migrations.RunPython.noop),
        migrations.AlterField("competition", "slug", models.SlugField(
            max_length=40, unique=True)),
        migrations.CreateModel(
            name="CompetitionEntry",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True,
                                           serialize=False, verbose_name="ID")),
                ("entered_at", models.DateTimeField(auto_now_add=True)),
                ("bot", models.ForeignKey(on_delete=models.deletion.CASCADE,
                                          related_name="entries", to="club.bot")),
                ("competition", models.ForeignKey(on_delete=models.deletion.CASCADE,
                                                  related_name="entries",
                                                  to="club.competition")),
            ],
            options={"ordering": ["competition", "bot"]},
        ),
        migrations.AddConstraint("competitionentry", models.UniqueConstraint(
            fields=("competition", "bot"), name="club_entry_once")),
    ]
