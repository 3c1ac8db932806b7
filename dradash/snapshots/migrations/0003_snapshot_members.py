"""A snapshot lists its objects as one packed value (Snapshot.members) instead of a row per
object; what an object is (kind, namespace, name) moves onto its blob."""

from __future__ import annotations

import struct
import zlib

from django.db import migrations, models


def _pack(ids):  # dradash.snapshots.members.pack as of this migration
    ordered = sorted(set(ids))
    deltas = [b - a for a, b in zip([0, *ordered], ordered, strict=False)]
    return b"M1" + zlib.compress(struct.pack(f"<{len(deltas)}Q", *deltas), 6)


def forwards(apps, schema_editor):
    Snapshot = apps.get_model("snapshots", "Snapshot")
    SnapshotObject = apps.get_model("snapshots", "SnapshotObject")
    ObjectBlob = apps.get_model("snapshots", "ObjectBlob")
    named = set()
    for snapshot in Snapshot.objects.all().iterator():
        rows = SnapshotObject.objects.filter(snapshot_id=snapshot.pk).values_list(
            "blob_id", "kind", "namespace", "name", "api_version"
        )
        ids = []
        for blob_id, kind, namespace, name, api_version in rows.iterator():
            ids.append(blob_id)
            if blob_id not in named:
                named.add(blob_id)
                ObjectBlob.objects.filter(pk=blob_id).update(
                    kind=kind, namespace=namespace, name=name, api_version=api_version
                )
        Snapshot.objects.filter(pk=snapshot.pk).update(members=_pack(ids))


class Migration(migrations.Migration):
    dependencies = [("snapshots", "0002_capture_runs")]

    operations = [
        migrations.AddField(
            model_name="objectblob",
            name="kind",
            field=models.CharField(default="", max_length=63),
            preserve_default=False,
        ),
        migrations.AddField(
            model_name="objectblob",
            name="namespace",
            field=models.CharField(blank=True, default="", max_length=253),
            preserve_default=False,
        ),
        migrations.AddField(
            model_name="objectblob",
            name="name",
            field=models.CharField(default="", max_length=253),
            preserve_default=False,
        ),
        migrations.AddField(
            model_name="objectblob",
            name="api_version",
            field=models.CharField(default="", max_length=128),
            preserve_default=False,
        ),
        migrations.AddField(
            model_name="snapshot",
            name="members",
            field=models.BinaryField(default=bytes, editable=False),
        ),
        migrations.RunPython(forwards, migrations.RunPython.noop, elidable=True),
        migrations.DeleteModel(name="SnapshotObject"),
    ]
