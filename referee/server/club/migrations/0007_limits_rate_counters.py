"""Rate-limit counters in the server's database (referee.server.club.ratecount)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("club", "0006_human_games"),
    ]

    operations = [
        migrations.CreateModel(
            name="RateCounter",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True,
                                           serialize=False, verbose_name="ID")),
                ("key", models.CharField(max_length=80)),
                ("window_start", models.BigIntegerField()),
                ("window_end", models.BigIntegerField(db_index=True)),
                ("count", models.PositiveIntegerField(default=0)),
            ],
        ),
        migrations.AddConstraint(
            model_name="ratecounter",
            constraint=models.UniqueConstraint(fields=("key", "window_start"),
                                               name="one_counter_per_key_and_window"),
        ),
    ]
