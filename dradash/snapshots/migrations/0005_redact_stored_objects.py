"""Redact the objects of snapshots stored before every path in redacted them (issue 13).

Imports and uploads used to store environment variable values, last-applied-configuration
annotations and managedFields verbatim; capture already removed them. Deduplicated blobs may
become equal to one already stored: snapshots then list that one (services.blobs_redact).
"""

from django.db import migrations


def redact_stored_objects(apps, schema_editor):
    from dradash.snapshots.services import blobs_redact

    blobs_redact(
        blob_model=apps.get_model("snapshots", "ObjectBlob"),
        snapshot_model=apps.get_model("snapshots", "Snapshot"),
    )


class Migration(migrations.Migration):
    dependencies = [("snapshots", "0004_blob_digest_constraint")]

    operations = [
        migrations.RunPython(redact_stored_objects, migrations.RunPython.noop, elidable=True)
    ]
