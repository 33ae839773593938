"""Vector index generations (graph/storage/vector_index.py) replace the single vec0 table.

Each generation's vec0 table is created when that generation starts, at its provider's width,
so the fixed-width `graph_entity_vec` of 0002 goes. Existing entities get their
embedding_hash here; the embedding worker then sees them as waiting for a vector.
"""

import django.utils.timezone
from django.db import migrations, models

from graph.search.text import embedding_text, text_hash


def fill_embedding_hashes(apps, schema_editor):
    Entity = apps.get_model("graph", "Entity")
    Observation = apps.get_model("graph", "Observation")
    texts: dict[int, list[str]] = {}
    for entity_id, text in Observation.objects.order_by("id").values_list("entity_id", "text"):
        texts.setdefault(entity_id, []).append(text)
    for entity in Entity.objects.only("id", "name", "title"):
        digest = text_hash(embedding_text(entity.name, entity.title, texts.get(entity.id, [])))
        Entity.objects.filter(id=entity.id).update(embedding_hash=digest)


def drop_single_vector_table(apps, schema_editor):
    if getattr(schema_editor.connection, "vec_error", "not loaded") is None:
        schema_editor.execute("DROP TABLE IF EXISTS graph_entity_vec")


class Migration(migrations.Migration):
    dependencies = [("graph", "0002_search_indexes")]

    operations = [
        migrations.AddField(
            model_name="entity",
            name="embedding_hash",
            field=models.CharField(blank=True, default="", max_length=32),
        ),
        migrations.CreateModel(
            name="EntityVector",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("generation", models.PositiveIntegerField()),
                ("entity_id", models.BigIntegerField()),
                ("text_hash", models.CharField(max_length=32)),
                ("embedding", models.BinaryField()),
                ("created_at", models.DateTimeField(default=django.utils.timezone.now)),
            ],
            options={
                "indexes": [models.Index(fields=["entity_id"], name="vector_entity")],
                "constraints": [
                    models.UniqueConstraint(
                        fields=("generation", "entity_id"), name="vector_unique_per_generation"
                    )
                ],
            },
        ),
        migrations.RunPython(fill_embedding_hashes, migrations.RunPython.noop),
        migrations.RunPython(drop_single_vector_table, migrations.RunPython.noop),
    ]
