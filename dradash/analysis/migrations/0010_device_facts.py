import django.db.models.deletion
from django.db import migrations, models

INDEX = "analysis_devicefacts_tokens_gin"


def forget(apps, schema_editor):
    """The device rows move their API row and tokens to DeviceFacts, shared by the snapshots
    that show a device unchanged. The stored rows are dropped with their snapshots' analyses:
    each snapshot is analysed again when it is next opened, or by ``manage.py analyse
    --missing``."""
    rows = apps.get_model("analysis", "DeviceRow").objects
    snapshots = rows.values("snapshot_id").distinct()
    apps.get_model("analysis", "SnapshotAnalysis").objects.filter(
        snapshot_id__in=snapshots
    ).delete()
    rows.all().delete()


def create_gin(apps, schema_editor):
    """A GIN index on DeviceFacts.tokens answers the devices page's class and attribute filters
    (``tokens @> '["…"]'``) without reading the rows; PostgreSQL only (elsewhere the filters
    search the text column)."""
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(
            f"CREATE INDEX {INDEX} ON analysis_devicefacts USING gin (tokens jsonb_path_ops)"
        )


def drop_gin(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f"DROP INDEX IF EXISTS {INDEX}")


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
                ("attributes", models.TextField(blank=True)),
                ("tokens", models.JSONField(blank=True, default=list)),
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
        migrations.RemoveField(model_name="devicerow", name="attributes"),
        migrations.RemoveField(model_name="devicerow", name="tokens"),
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
        migrations.RunPython(create_gin, drop_gin),
    ]
