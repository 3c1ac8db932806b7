from django.db import migrations

INDEX = "analysis_devicerow_tokens_gin"


def create(apps, schema_editor):
    """A GIN index on DeviceRow.tokens answers the devices page's class and attribute filters
    (``tokens @> '["…"]'``) without reading the rows; PostgreSQL only (elsewhere the filters
    search the text column)."""
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(
            f"CREATE INDEX {INDEX} ON analysis_devicerow USING gin (tokens jsonb_path_ops)"
        )


def drop(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f"DROP INDEX IF EXISTS {INDEX}")


class Migration(migrations.Migration):
    dependencies = [("analysis", "0001_initial")]

    operations = [migrations.RunPython(create, drop)]
