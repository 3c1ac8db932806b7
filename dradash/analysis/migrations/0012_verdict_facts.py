import django.db.models.deletion
from django.db import migrations, models


def forget(apps, schema_editor):
    """The verdicts move their evidence and chain to VerdictFacts, shared by the snapshots
    that give an object the same verdict. The stored verdicts are dropped with their
    snapshots' analyses: each snapshot is analysed again when it is next opened, or by
    ``manage.py analyse --missing``."""
    snapshots = set()
    for model in ("PodVerdict", "ClaimVerdict"):
        rows = apps.get_model("analysis", model).objects
        snapshots |= set(rows.values_list("snapshot_id", flat=True).distinct())
        rows.all().delete()
    apps.get_model("analysis", "SnapshotAnalysis").objects.filter(
        snapshot_id__in=sorted(snapshots)
    ).delete()


class Migration(migrations.Migration):
    dependencies = [("analysis", "0011_compacted")]

    operations = [
        migrations.CreateModel(
            name="VerdictFacts",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("digest", models.CharField(max_length=64)),
                ("detail", models.JSONField(blank=True, default=dict)),
                ("chain", models.JSONField(blank=True, default=list)),
            ],
            options={
                "verbose_name_plural": "verdict facts",
                "constraints": [
                    models.UniqueConstraint(fields=("digest",), name="verdictfacts_digest")
                ],
            },
        ),
        migrations.RunPython(forget, migrations.RunPython.noop),
        migrations.RemoveField(model_name="podverdict", name="detail"),
        migrations.RemoveField(model_name="podverdict", name="chain"),
        migrations.RemoveField(model_name="claimverdict", name="detail"),
        migrations.RemoveField(model_name="claimverdict", name="chain"),
        migrations.AddField(
            model_name="podverdict",
            name="facts",
            field=models.ForeignKey(
                default=None,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to="analysis.verdictfacts",
            ),
            preserve_default=False,
        ),
        migrations.AddField(
            model_name="claimverdict",
            name="facts",
            field=models.ForeignKey(
                default=None,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to="analysis.verdictfacts",
            ),
            preserve_default=False,
        ),
    ]
