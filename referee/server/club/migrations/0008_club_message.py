"""Messages from the organiser to every student (the organiser's page posts and removes them)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("club", "0007_limits_rate_counters"),
    ]

    operations = [
        migrations.CreateModel(
            name="ClubMessage",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True,
                                           serialize=False, verbose_name="ID")),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("text", models.CharField(max_length=500)),
            ],
        ),
    ]
