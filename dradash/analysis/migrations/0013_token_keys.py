from django.db import migrations

# Each token but the snapshot's own becomes its key (analysis.models.token_key), in place.
REKEY = """
UPDATE analysis_devicerow SET tokens = (
    SELECT coalesce(jsonb_agg(
        CASE WHEN left(t, 9) = 'snapshot:' THEN to_jsonb(t)
        ELSE to_jsonb(left(encode(sha256(convert_to(t, 'UTF8')), 'base64'), 12)) END
    ), '[]'::jsonb)
    FROM jsonb_array_elements_text(tokens) AS t
)
WHERE tokens <> '[]'::jsonb
"""


def rekey(apps, schema_editor):
    """DeviceRow.tokens hold their tokens' keys (PostgreSQL only: elsewhere the filters search
    the tokens as text). No analysis is dropped: the keys are computed from the stored tokens."""
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(REKEY)


def forget(apps, schema_editor):
    """Keys cannot be turned back into tokens: the snapshots with device rows are analysed
    again when next opened, or by ``manage.py analyse --missing``."""
    rows = apps.get_model("analysis", "DeviceRow").objects
    snapshots = sorted(set(rows.values_list("snapshot_id", flat=True).distinct()))
    apps.get_model("analysis", "SnapshotAnalysis").objects.filter(
        snapshot_id__in=snapshots
    ).delete()


class Migration(migrations.Migration):
    dependencies = [("analysis", "0012_verdict_facts")]

    operations = [migrations.RunPython(rekey, forget)]
