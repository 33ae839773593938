"""Late interaction (graph/search/late_interaction.py): each vector row may keep its text's
content pieces. The local model's existing rows have none, so they are marked as built from
other text: the embedding worker computes them again, pieces included, while recall keeps
searching the old vectors (docs/recall.md, "Late interaction"). Remote providers return one
vector per text: their rows are left alone."""

from django.db import migrations, models

LIVE_KEY = "vectors.live"


def recompute_local_vectors(apps, schema_editor):
    MetaEntry = apps.get_model("graph", "MetaEntry")
    EntityVector = apps.get_model("graph", "EntityVector")
    marker = MetaEntry.objects.filter(key=LIVE_KEY).values_list("value", flat=True).first()
    if isinstance(marker, dict) and marker.get("provider") == "local":
        EntityVector.objects.filter(generation=marker.get("generation")).update(text_hash="")


class Migration(migrations.Migration):
    dependencies = [
        ("graph", "0006_query_vectors"),
    ]

    operations = [
        migrations.AddField(
            model_name="entityvector",
            name="pieces",
            field=models.BinaryField(default=None, null=True),
        ),
        migrations.RunPython(recompute_local_vectors, migrations.RunPython.noop),
    ]
