"""A bot's strength over the season (its page's chart), kept by the runner at each standing."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("club", "0004_house_bots")]

    operations = [
        migrations.CreateModel(
            name="RatingHistory",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False,
                                           verbose_name="ID")),
                ("bot", models.OneToOneField(on_delete=django.db.models.deletion.CASCADE,
                                             related_name="history", to="club.bot")),
                ("points", models.JSONField(default=list)),
                ("chart", models.TextField(blank=True, default="")),
            ],
        ),
    ]
