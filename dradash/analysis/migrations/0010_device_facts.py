import django.db.models.deletion
from django.db import migrations, models


def forget(apps, schema_editor):
    """The device rows move their API row to DeviceFacts, shared by the snapshots that show a
    device unchanged. The stored rows are dropped with their snapshots' analyses: each snapshot
    is analysed again when it is next opened, or by ``manage.py analyse --missing``."""
    rows = apps.get_model("analysis", "DeviceRow").objects
    snapshots = sorted(set(rows.values_list("snapshot_id", flat=True).distinct()))
    rows.all().delete()
    apps.get_model("analysis", "SnapshotAnalysis").objects.filter(
        snapshot_id__in=snapshots
    ).delete()


class Migration(migrations.Migration):
    dependencies = [("analysis", "0009_reanalyse_claims_of_unknown_consumers")]

    operations = [
        migrations.CreateModel(
            name="DeviceFacts",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("digest", models.CharField(max_length=64)),
                ("data", models.JSONField()),
            ],
            options={
                "verbose_name_plural": "device facts",
                "constraints": [
                    models.UniqueConstraint(fields=("digest",), name="devicefacts_digest")
                ],
            },
        ),
        migrations.RunPython(forget, migrations.RunPython.noop),
        migrations.RemoveField(model_name="devicerow", name="data"),
        migrations.AddField(
            model_name="devicerow",
            name="facts",
            field=models.ForeignKey(
                default=None,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to="analysis.devicefacts",
            ),
            preserve_default=False,
        ),
    ]
