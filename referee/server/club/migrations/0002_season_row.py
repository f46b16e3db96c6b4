"""The season's one row (pk=1), so that both processes find it from the first start."""

from django.db import migrations


def create_season(apps, schema_editor):
    Season = apps.get_model("club", "Season")
    Season.objects.get_or_create(pk=1)


class Migration(migrations.Migration):
    dependencies = [("club", "0001_initial")]
    operations = [migrations.RunPython(create_season, migrations.RunPython.noop)]
