"""The session-outcome ledger (graph.models.SessionOutcome): per session, which memories recall
returned and which the session cited, so that graph/ops/feedback.py counts each memory at most
once per session in recall_hits / recall_misses (columns the entity has had since 0001)."""

import django.utils.timezone
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("graph", "0003_vector_generations"),
    ]

    operations = [
        migrations.CreateModel(
            name="SessionOutcome",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("session_id", models.CharField(max_length=128)),
                ("entity_id", models.BigIntegerField()),
                (
                    "outcome",
                    models.CharField(
                        choices=[("returned", "Returned"), ("hit", "Hit"), ("miss", "Miss")],
                        max_length=8,
                    ),
                ),
                ("created_at", models.DateTimeField(default=django.utils.timezone.now)),
                ("updated_at", models.DateTimeField(default=django.utils.timezone.now)),
            ],
            options={
                "indexes": [models.Index(fields=["updated_at"], name="outcome_updated")],
                "constraints": [
                    models.UniqueConstraint(
                        fields=("session_id", "entity_id"), name="outcome_unique_per_session"
                    )
                ],
            },
        ),
    ]
