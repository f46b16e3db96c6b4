"""Games students play in the browser against bots."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

GAME_STATES = [("queued", "queued"), ("running", "running"), ("done", "done"),
               ("failed", "failed")]
MOVE_STATES = [("open", "open"), ("answered", "answered"), ("expired", "expired")]
CASCADE = django.db.models.deletion.CASCADE


def _id() -> models.BigAutoField:
    return models.BigAutoField(auto_created=True, primary_key=True, serialize=False,
                               verbose_name="ID")


class Migration(migrations.Migration):
    dependencies = [
        ("club", "0005_rating_history"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="HumanGame",
            fields=[
                ("id", _id()),
                ("state", models.CharField(choices=GAME_STATES, default="queued",
                                           max_length=10)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("started_at", models.DateTimeField(blank=True, null=True)),
                ("finished_at", models.DateTimeField(blank=True, null=True)),
                ("names", models.JSONField(default=list)),
                ("steps", models.JSONField(default=list)),
                ("board", models.JSONField(default=dict)),
                ("limits", models.CharField(blank=True, max_length=100)),
                ("record_file", models.CharField(blank=True, max_length=300)),
                ("error", models.TextField(blank=True)),
                ("opponents", models.ManyToManyField(related_name="+", to="club.botversion")),
                ("owner", models.ForeignKey(on_delete=CASCADE, related_name="human_games",
                                            to=settings.AUTH_USER_MODEL)),
            ],
        ),
        migrations.CreateModel(
            name="HumanMove",
            fields=[
                ("id", _id()),
                ("number", models.PositiveIntegerField()),
                ("question", models.JSONField()),
                ("state", models.CharField(choices=MOVE_STATES, default="open",
                                           max_length=10)),
                ("choice", models.PositiveIntegerField(blank=True, null=True)),
                ("asked_at", models.DateTimeField(auto_now_add=True)),
                ("answered_at", models.DateTimeField(blank=True, null=True)),
                ("game", models.ForeignKey(on_delete=CASCADE, related_name="moves",
                                           to="club.humangame")),
            ],
            options={
                "ordering": ["game", "number"],
                "constraints": [models.UniqueConstraint(fields=("game", "number"),
                                                        name="club_humanmove_number_unique")],
            },
        ),
    ]
