"""House bots: a bot owned by nobody, marked as the house's (the season file names them)."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("club", "0003_check_replaced"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(model_name="bot", name="house",
                            field=models.BooleanField(default=False)),
        migrations.AlterField(
            model_name="bot", name="owner",
            field=models.ForeignKey(blank=True, null=True,
                                    on_delete=django.db.models.deletion.CASCADE,
                                    related_name="bots", to=settings.AUTH_USER_MODEL)),
    ]
