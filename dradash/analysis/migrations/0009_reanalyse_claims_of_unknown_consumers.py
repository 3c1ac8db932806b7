from django.db import migrations


def forget(apps, schema_editor):
    """Analyses that judged a claim of a snapshot without Pods stuck (allocated-not-bound or
    claim-unallocated, snapshot-incomplete, "whether a Pod … is unknown", severity error) are
    dropped: such a claim's verdict is now unknown (consumers-unknown, severity "unknown"),
    which /metrics and the overview count apart. Each snapshot is analysed again when it is
    next opened, or by ``manage.py analyse --missing``; its rows are replaced then."""
    claims = apps.get_model("analysis", "ClaimVerdict").objects.filter(
        reason="snapshot-incomplete", summary__contains="whether a Pod"
    )
    snapshots = claims.values("snapshot_id").distinct()
    apps.get_model("analysis", "SnapshotAnalysis").objects.filter(
        snapshot_id__in=snapshots
    ).delete()


class Migration(migrations.Migration):
    dependencies = [("analysis", "0008_verdict_findings")]

    operations = [migrations.RunPython(forget, migrations.RunPython.noop)]
