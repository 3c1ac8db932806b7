from django.db import migrations, models


def forget(apps, schema_editor):
    """Analyses stored before Pods asking for extended resources that a DeviceClass maps were
    DRA Pods (issue 23) counted them out of the lists, counts and metrics: they are dropped, and
    each snapshot is analysed again when it is next opened, or by ``manage.py analyse
    --missing``."""
    apps.get_model("analysis", "SnapshotAnalysis").objects.all().delete()


class Migration(migrations.Migration):
    dependencies = [("analysis", "0003_reanalyse_for_cel_dialect")]

    operations = [
        migrations.AddField(
            model_name="podverdict",
            name="extended",
            field=models.JSONField(blank=True, default=dict),
        ),
        migrations.RunPython(forget, migrations.RunPython.noop),
    ]
