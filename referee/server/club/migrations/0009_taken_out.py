"""A version the runner took out of the season (failed starts or forfeits in a row) is marked,
so the organiser can put it back."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("club", "0008_club_message"),
    ]

    operations = [
        migrations.AddField(
            model_name="botversion",
            name="taken_out",
            field=models.BooleanField(default=False),
        ),
    ]
