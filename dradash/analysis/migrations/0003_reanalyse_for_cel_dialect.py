from django.db import migrations


def forget(apps, schema_editor):
    """Analyses stored before the device index carried the snapshot's CEL environment (its
    release, list-typed attributes) are dropped: each snapshot is analysed again when it is
    next opened, or by ``manage.py analyse --missing``. Their rows are replaced then."""
    apps.get_model("analysis", "SnapshotAnalysis").objects.all().delete()


class Migration(migrations.Migration):
    dependencies = [("analysis", "0002_device_tokens_gin")]

    operations = [migrations.RunPython(forget, migrations.RunPython.noop)]
