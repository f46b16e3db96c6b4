"""A check can be replaced: a newer upload of the same bot came before it ran."""

from django.db import migrations, models

CHECK_STATES = [("queued", "queued"), ("running", "running"), ("passed", "passed"),
                ("failed", "failed"), ("replaced", "replaced")]


class Migration(migrations.Migration):

    dependencies = [
        ("club", "0002_season_row"),
    ]

    operations = [
        migrations.AlterField(
            model_name="botversion",
            name="check_state",
            field=models.CharField(choices=CHECK_STATES, default="queued", max_length=10),
        ),
        migrations.AlterField(
            model_name="checkrun",
            name="state",
            field=models.CharField(choices=CHECK_STATES, default="queued", max_length=10),
        ),
    ]
