"""Writes to the memory graph. Every function here is one transaction.

The keyword index is rewritten with `Entity.objects.index_sync` inside the same transaction as
the write it reflects, on every path that changes searchable text or status (including the
archive done by a `supersedes` relation), so a failure anywhere leaves both as they were.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime
from typing import cast

from django.db import transaction
from django.utils import timezone

from graph.models import Entity, Namespace, Observation, Relation, Status, Tag
from graph.schemas import (
    ForgetInput,
    ForgetOutput,
    NamespaceName,
    RelationOutput,
    RememberInput,
    RememberOutput,
)
from graph.text import normalize_observation

CONFIDENCE_STEP = 0.05
RELATION_SUPERSEDES = "supersedes"


def _dedupe(
    values: Iterable[str], existing: set[str], key: Callable[[str], str] = str
) -> list[str]:
    """`values` in order, without those whose key is in `existing` or seen earlier."""
    out: list[str] = []
    seen = set(existing)
    for value in values:
        k = key(value)
        if k not in seen:
            seen.add(k)
            out.append(value)
    return out


def _archive(entity: Entity, now: datetime) -> None:
    Entity.objects.filter(pk=entity.pk).update(status=Status.ARCHIVED, updated_at=now)
    entity.status = Status.ARCHIVED
    entity.updated_at = now


@transaction.atomic
def entity_remember(*, data: RememberInput, source_host: str) -> RememberOutput:
    """Store a memory, or append to the one with the same name (the reference's upsert).

    - A new entity gets type, title, namespace (default personal) and
      metadata.provenance.source_host from the transport.
    - An existing one keeps its type and provenance; a title replaces its title; a different
      namespace moves it (metadata.previous_namespace records where from); an archived one
      is reactivated; confidence rises by 0.05 (max 1.0) when an observation is new to it.
    - Observations already stored (ignoring whitespace) and tags already present are skipped.
    - Relations to missing entities are reported, not fatal. `supersedes` archives the target.
    """
    now = timezone.now()
    entity_id = Entity.objects.id_for_name(data.name)
    created = entity_id is None
    moved_from: NamespaceName | None = None
    reactivated = False

    if entity_id is None:
        entity = Entity(
            name=data.name,
            type=data.type,
            title=data.title,
            namespace=data.namespace or Namespace.PERSONAL,
            created_at=now,
            updated_at=now,
            metadata={"provenance": {"source_host": source_host}},
        )
        Entity.objects.insert_new(entity)
        existing_obs: set[str] = set()
        existing_tags: set[str] = set()
    else:
        entity = Entity.objects.get(pk=entity_id)
        existing_obs = {
            normalize_observation(t)
            for t in Observation.objects.filter(entity=entity).values_list("text", flat=True)
        }
        existing_tags = set(Tag.objects.filter(entity=entity).values_list("name", flat=True))

    new_obs = _dedupe(
        (o.strip() for o in data.observations), existing_obs, key=normalize_observation
    )
    new_tags = _dedupe(data.tags, existing_tags)
    Entity.objects.observations_append(entity.pk, new_obs, now)
    Entity.objects.tags_append(entity.pk, new_tags)

    changed = created or bool(new_obs or new_tags)
    if not created:
        fields: list[str] = []
        if data.title is not None and data.title != entity.title:
            entity.title = data.title
            fields.append("title")
        if data.namespace is not None and data.namespace != entity.namespace:
            moved_from = cast(NamespaceName, entity.namespace)
            entity.metadata = {**entity.metadata, "previous_namespace": moved_from}
            entity.namespace = data.namespace
            fields += ["namespace", "metadata"]
        if entity.status == Status.ARCHIVED:
            entity.status = Status.ACTIVE
            reactivated = True
            fields.append("status")
        if new_obs:
            entity.confidence = min(1.0, round(entity.confidence + CONFIDENCE_STEP, 6))
            fields.append("confidence")
        if fields or changed:
            entity.updated_at = now
            entity.save(update_fields=[*fields, "updated_at"])
            changed = True

    # The entity's own index row is written before relations: a failure while relating
    # must (and does) roll the index back together with everything else.
    if changed:
        Entity.objects.index_sync([entity.pk])

    created_relations, relation_errors, superseded = _relate(entity, data, now)

    return RememberOutput(
        stored=True,
        entityId=entity.pk,
        name=entity.name,
        type=entity.type,
        created=created,
        observations=len(new_obs),
        tags=len(new_tags),
        relations=len(created_relations),
        relationsCreated=created_relations if data.relations else None,
        relationErrors=relation_errors or None,
        superseded=superseded or None,
        movedFromNamespace=moved_from,
        reactivated=True if reactivated else None,
    )


def _relate(
    entity: Entity, data: RememberInput, now: datetime
) -> tuple[list[RelationOutput], list[str], list[str]]:
    if not data.relations:  # the usual call: skip building an ORM query that selects nothing
        return [], [], []
    targets = {t.name: t for t in Entity.objects.filter(name__in={r.to for r in data.relations})}
    created: list[RelationOutput] = []
    errors: list[str] = []
    superseded: list[str] = []
    for rel in data.relations:
        target = targets.get(rel.to)
        if target is None:
            errors.append(f'Target entity "{rel.to}" not found')
            continue
        if target.pk == entity.pk:
            errors.append(f'"{rel.to}" cannot be related to itself')
            continue
        _, was_created = Relation.objects.get_or_create(
            from_entity=entity, to_entity=target, type=rel.type, defaults={"created_at": now}
        )
        if was_created:
            created.append(
                RelationOutput(**{"from": entity.name, "to": target.name, "type": rel.type})
            )
        if rel.type == RELATION_SUPERSEDES and target.status == Status.ACTIVE:
            _archive(target, now)
            Entity.objects.index_sync([target.pk])
            superseded.append(target.name)
    return created, errors, superseded


@transaction.atomic
def entity_forget(*, data: ForgetInput) -> ForgetOutput:
    """Archive an entity (never delete it), or remove one observation (every exact copy)."""
    entity = Entity.objects.filter(name=data.name).first()
    if entity is None:
        return ForgetOutput(
            name=data.name, archived=False, message=f'Entity "{data.name}" not found'
        )
    now = timezone.now()
    archived = entity.status == Status.ARCHIVED

    if data.observation is not None:
        # remember stores observations stripped, so the text to match is stripped too.
        deleted, _ = Observation.objects.filter(
            entity=entity, text=data.observation.strip()
        ).delete()
        if not deleted:
            return ForgetOutput(
                name=entity.name,
                archived=archived,
                removed=False,
                removedCount=0,
                message="Observation not found (it must match the stored text exactly)",
            )
        Entity.objects.filter(pk=entity.pk).update(updated_at=now)
        Entity.objects.index_sync([entity.pk])
        return ForgetOutput(name=entity.name, archived=archived, removed=True, removedCount=deleted)

    if archived:
        return ForgetOutput(name=entity.name, archived=True, message="Entity was already archived")
    _archive(entity, now)
    Entity.objects.index_sync([entity.pk])
    return ForgetOutput(name=entity.name, archived=True)
