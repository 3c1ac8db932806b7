import hashlib

import django.db.models.deletion
import orjson
from django.db import migrations, models

BATCH = 2000


def move(apps, schema_editor):
    """Each pool's and node's JSON moves to RowFacts, stored once per content: no analysis is
    dropped. (A digest here is of the JSON as the database returns it, whose key order is not
    the analysis's: the facts of a row stored before and after this can be stored twice, until
    the older snapshots go.)"""
    facts = apps.get_model("analysis", "RowFacts").objects
    for name in ("PoolRow", "NodeRow"):
        model = apps.get_model("analysis", name)
        last = 0
        while batch := list(
            model.objects.filter(id__gt=last).order_by("id").values_list("id", "data")[:BATCH]
        ):
            last = batch[-1][0]
            texts = {pk: orjson.dumps(data) for pk, data in batch}
            digests = {pk: hashlib.sha256(text).hexdigest() for pk, text in texts.items()}
            facts.bulk_create(
                [
                    facts.model(digest=digests[pk], data=data)
                    for pk, data in {digests[pk]: (pk, data) for pk, data in batch}.values()
                ],
                ignore_conflicts=True,
            )
            ids = dict(facts.filter(digest__in=set(digests.values())).values_list("digest", "id"))
            model.objects.bulk_update(
                [model(id=pk, facts_id=ids[digests[pk]]) for pk in digests], ["facts"]
            )


class Migration(migrations.Migration):
    dependencies = [("analysis", "0013_token_keys")]

    operations = [
        migrations.CreateModel(
            name="RowFacts",
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
                "verbose_name_plural": "row facts",
                "constraints": [
                    models.UniqueConstraint(fields=("digest",), name="rowfacts_digest")
                ],
            },
        ),
        *[
            migrations.AddField(
                model_name=model,
                name="facts",
                field=models.ForeignKey(
                    null=True,
                    on_delete=django.db.models.deletion.PROTECT,
                    related_name="+",
                    to="analysis.rowfacts",
                ),
            )
            for model in ("poolrow", "noderow")
        ],
        migrations.RunPython(move, migrations.RunPython.noop),
        *[
            migrations.RemoveField(model_name=model, name="data")
            for model in ("poolrow", "noderow")
        ],
        *[
            migrations.AlterField(
                model_name=model,
                name="facts",
                field=models.ForeignKey(
                    on_delete=django.db.models.deletion.PROTECT,
                    related_name="+",
                    to="analysis.rowfacts",
                ),
            )
            for model in ("poolrow", "noderow")
        ],
    ]
