"""A version's content hash (its unpacked files), to tell an upload identical to the bot's
newest version (club.uploads)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("club", "0009_taken_out"),
    ]

    operations = [
        migrations.AddField(
            model_name="botversion",
            name="content_sha256",
            field=models.CharField(blank=True, default="", max_length=64),
        ),
    ]
