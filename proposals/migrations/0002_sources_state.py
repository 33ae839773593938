"""Proposals remember the state of their sources (proposals/source_state.py), so a cluster a
person rejected is not proposed again while its memories are unchanged.

Proposals staged before this get the state their sources are in now: a rejection made before
the upgrade holds until one of its memories changes, like one made after it.
"""

from typing import Any

from django.db import migrations, models

from proposals.source_state import SourceView, state_hash


def fill_sources_state(apps: Any, schema_editor: Any) -> None:
    Proposal = apps.get_model("proposals", "Proposal")
    Entity = apps.get_model("graph", "Entity")
    Observation = apps.get_model("graph", "Observation")
    for proposal in Proposal.objects.all().iterator():
        ids = [int(i) for i in proposal.source_ids or []]
        observations: dict[int, list[str]] = {}
        for entity_id, text in (
            Observation.objects.filter(entity_id__in=ids)
            .order_by("id")
            .values_list("entity_id", "text")
        ):
            observations.setdefault(entity_id, []).append(text)
        found = [
            SourceView(pk, name, type_, title, observations.get(pk, []))
            for pk, name, type_, title in Entity.objects.filter(pk__in=ids).values_list(
                "pk", "name", "type", "title"
            )
        ]
        proposal.sources_state = state_hash(ids, found)
        proposal.save(update_fields=["sources_state"])


class Migration(migrations.Migration):
    dependencies = [
        ("proposals", "0001_initial"),
        ("graph", "0003_vector_generations"),
    ]

    operations = [
        migrations.AddField(
            model_name="proposal",
            name="sources_state",
            field=models.CharField(blank=True, db_index=True, default="", max_length=64),
        ),
        migrations.RunPython(fill_sources_state, migrations.RunPython.noop),
    ]
