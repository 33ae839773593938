"""remember's service: store a memory, or append to (or correct) the one of the same name.

One transaction. The keyword index is rewritten (graph.ops.kit.writes.index_after_write) inside
it on every path that changes searchable text or status (including the archive done by a
`supersedes` relation), so a failure anywhere leaves both as they were.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from django.db import transaction
from django.utils import timezone

from core.errors import InvalidInput
from graph.errors import NameInOtherProject
from graph.models import Entity, Namespace, Observation, Relation, Status, Tag
from graph.ops.feedback import record_citations
from graph.ops.kit.entity_view import RelationOutput
from graph.ops.kit.fields import DECISION_TYPE, NOTE_TYPE, WHY_PREFIX, NamespaceName
from graph.ops.kit.scope import entity_projects
from graph.ops.kit.trust.rules import (
    SUPERSEDED_BY_KEY,
    Facets,
    Requested,
    apply_to_existing,
    created_event,
    facets_for_new,
    parent_of,
    with_event,
)
from graph.ops.kit.trust.view import entity_trust
from graph.ops.kit.writes import entity_archive, index_after_insert, index_after_write
from graph.ops.remember.note import ParsedNote, parse_note
from graph.ops.remember.schema import DerivedNote, RememberInput, RememberOutput, Retag
from graph.project import plain_name
from graph.project_tags import has_project_tag, is_project_tag, project_of, project_tag
from graph.search.text import normalize_observation

RELATION_SUPERSEDES = "supersedes"


def dedupe(
    values: Iterable[str], existing: Iterable[str] = (), key: Callable[[str], str] = str
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


@dataclass(frozen=True, slots=True)
class _Incoming:
    """What one remember call asks to store, once `note`, `why` and `project` are unfolded."""

    name: str
    title: str | None
    observations: list[str]
    tags: list[str]
    project: str | None  # the project id this call files the memory under, if any


def _unfold(
    data: RememberInput, note: ParsedNote | None, exists: bool, current_project: str | None
) -> _Incoming:
    observations = [*(note.observations if note else []), *(o.strip() for o in data.observations)]
    if data.why is not None:
        # Stored as an observation as well as metadata.why: recall and the keyword index see
        # observations, and the briefing reads either.
        observations.append(f"{WHY_PREFIX}{data.why}")
    project: str | None
    if isinstance(data.project, str):
        project = data.project
    elif data.project is None and not exists and not has_project_tag(data.tags):
        # The caller's current project files a NEW memory only, and only one the call did not
        # file itself with a project: tag; appending to one filed elsewhere (or deliberately
        # under no project) must not refile it.
        project = current_project
    else:
        project = None
    tags = [*data.tags, *([project_tag(project)] if project else [])]
    name = data.name if data.name is not None else cast(ParsedNote, note).name
    return _Incoming(name, note.title if note else data.title, observations, tags, project)


def retag_own_project(data: RememberInput, project: str) -> tuple[RememberInput, list[Retag]]:
    """`data` with the session's `project` named by its plain name (graph.project.plain_name:
    `widgets` for `acme/widgets`) in `project` or a `project:` tag replaced by the id, and
    what was replaced. Any other plain name stays as it is: another project's, or a scope of
    its own."""
    plain = plain_name(project)
    if plain == project:
        return data, []
    own = project_tag(project)
    retags: list[Retag] = []
    update: dict[str, Any] = {}
    if isinstance(data.project, str) and data.project == plain:
        update["project"] = project
        retags.append(Retag.model_validate({"from": project_tag(plain), "to": own}))
    if any(is_project_tag(t) and project_of(t) == plain for t in data.tags):
        tags = []
        for tag in data.tags:
            if is_project_tag(tag) and project_of(tag) == plain:
                retags.append(Retag.model_validate({"from": tag, "to": own}))
                tag = own
            tags.append(tag)
        update["tags"] = dedupe(tags)
    return data.model_copy(update=update), retags


def refuse_other_projects_name(name: str, entity_id: int | None, allowed: set[str]) -> None:
    """NameInOtherProject when the memory called `name` is filed under projects, none of them
    in `allowed` (the agent guide: over MCP such a name is refused rather than shared)."""
    if entity_id is None:
        return
    held = entity_projects(entity_id)
    if held and not held & allowed:
        raise NameInOtherProject(
            f'"{name}" is the name of a memory of another project ({", ".join(sorted(held))}); '
            "pick a different name (names are unique across projects)",
            field="name",
        )


@transaction.atomic
def entity_remember(
    *,
    data: RememberInput,
    source_host: str,
    project: str | None = None,
    require_why: bool = False,
    count_citations: bool = False,
    session_id: str | None = None,
    keep_projects_apart: bool = False,
    derived: Facets | None = None,
    now: datetime | None = None,
) -> RememberOutput:
    """Store a memory, or append to the one with the same name (the reference's upsert).

    - A new entity gets type, title, namespace (default personal) and
      metadata.provenance.source_host from the transport.
    - An existing one keeps its type and provenance; a title replaces its title; a different
      namespace moves it (metadata.previous_namespace records where from); an archived one
      is reactivated. Its confidence does not rise with a new observation (it did by 0.05
      before the trust model: appending is not observing; only `observe` raises it).
    - Trust (graph/ops/kit/trust/): a new memory is a fact when the call gives a `source`, else
      a hypothesis, with the call's `confidence` or its status's default; `parent_id` makes an
      unsourced one a derivation of that memory. `derived` (a service's own write, such as an
      accepted dream digest) sets the new memory's trust instead. On an existing memory the
      call may add doubt and is refused (`trust.observe-required`) where it would raise trust.
    - Observations already stored (ignoring whitespace) and tags already present are skipped.
    - Relations to missing entities are reported, not fatal. `supersedes` archives the target.

    The agent guide's extensions (RememberInput documents the fields):
    - `note`: parsed by graph.ops.remember.note.parse_note; its observations come first, then any
      `observations`. A new entity's type defaults to `note`. Echoed under `derived`.
    - `why`: stored as metadata.why (the latest reason wins) and appended as the observation
      `Why: <reason>`. Required (400 naming `why`) on any `replace` leaving the entity a
      decision, and, when `require_why` (the agent-facing transports), on creating one.
      Creating stays optional by default because the API reference's own contract (and its
      example) creates a decision with no reason. Appending to an existing decision never
      needs one.
    - `project`: a string adds tag `project:<id>`; `false` adds none; omitted, a NEW entity
      gets `project` (the caller's current project from CallContext) when there is one.
    - `count_citations` (the remember operation, on every transport; not `learn`, the
      dreamer's or the memory tool's writes, which copy text rather than cite): the
      `[mem:<id>]` handles in the text this call stored (new observations, a title it set)
      count as hits for the memories they name (graph/ops/feedback.py; once per
      `session_id`), never for this one.
      Reported in `cited`. Nothing is settled: a session is still running when it remembers.
    - `keep_projects_apart` (the agent transports, with the caller's `project`): the caller's
      project named by its plain name is stored as its id (`retagged`), and a name held by a
      memory filed under other projects only — none the call names or the caller is in — is
      refused (NameInOtherProject) instead of appended to.
    - `replace` on an existing entity: observations become exactly the incoming ones; the old
      list is appended to metadata.replaced_history as {at, observations} (plus the old
      `title`/`tags`/`type` when the call changed them). Passing `tags` rewrites the tags, the
      `project:` ones following `project` (omitted keeps them). A different `type`
      reclassifies. Confidence does not rise: a correction is not corroboration. A replace
      that changes nothing records no version. On a missing name it creates, and needs
      `type` unless `note` gives the default.
    Any refusal is raised before the first write; the transaction covers the rest.
    `now` is the time the write is stamped with (tests move it).
    """
    now = now or timezone.now()
    note = parse_note(data.note) if data.note is not None else None
    name = data.name if data.name is not None else cast(ParsedNote, note).name
    entity_id = Entity.objects.id_for_name(name)
    retags: list[Retag] = []
    if keep_projects_apart and project is not None:
        data, retags = retag_own_project(data, project)
        named = {project_of(t) for t in data.tags if is_project_tag(t)}
        if isinstance(data.project, str):
            named.add(data.project)
        refuse_other_projects_name(name, entity_id, {project, *named})
    requested = Requested.of(data)
    created = entity_id is None
    incoming = _unfold(data, note, not created, project)
    moved_from: NamespaceName | None = None
    reactivated = False
    history_count: int | None = None

    entity = None if entity_id is None else Entity.objects.get(pk=entity_id)
    if entity is None:
        if data.type is None and note is None:
            raise InvalidInput(
                f'type: required to create "{name}" (a replace of a name that does not exist '
                "creates it)",
                field="type",
            )
        final_type = data.type or NOTE_TYPE
    else:
        final_type = data.type if data.replace and data.type else entity.type
    if (
        final_type == DECISION_TYPE
        and data.why is None
        and (data.replace or (created and require_why))
    ):
        raise InvalidInput(
            "why: a decision needs its reason and what would make it stop holding "
            "(required when creating or replacing a decision)",
            field="why",
        )

    fields: list[str] = []
    if entity is None:
        facets = derived or facets_for_new(
            requested,
            type_=final_type,
            why=data.why,
            parent=parent_of(data.parent_id),
            now=now,
        )
        metadata: dict[str, Any] = {"provenance": {"source_host": source_host}}
        if data.why is not None:
            metadata["why"] = data.why
        entity = Entity(
            name=name,
            type=final_type,
            title=incoming.title,
            namespace=data.namespace or Namespace.PERSONAL,
            created_at=now,
            updated_at=now,
            metadata=with_event(metadata, "remember", now, **created_event(facets)),
            **facets.columns(),
        )
        Entity.objects.insert_new(entity)
        existing_obs: list[str] = []
        existing_tags: list[str] = []
    else:
        trust_fields = apply_to_existing(entity, requested, now=now)
        if trust_fields:
            entity.metadata = with_event(entity.metadata, "remember", now, changed=trust_fields)
            fields += [*trust_fields, "metadata"]
        existing_obs = list(
            Observation.objects.filter(entity=entity).values_list("text", flat=True)
        )
        existing_tags = list(Tag.objects.filter(entity=entity).values_list("name", flat=True))

    if data.replace and not created:
        new_obs, new_tags, history_count = _replace(
            entity, data, incoming, existing_obs, existing_tags, final_type, now, fields
        )
    else:
        new_obs = dedupe(
            incoming.observations,
            {normalize_observation(t) for t in existing_obs},
            key=normalize_observation,
        )
        new_tags = dedupe(incoming.tags, set(existing_tags))
        Entity.objects.observations_append(entity.pk, new_obs, now)
        Entity.objects.tags_append(entity.pk, new_tags)

    changed = created or bool(new_obs or new_tags or fields)
    if not created:
        if incoming.title is not None and incoming.title != entity.title:
            entity.title = incoming.title
            fields.append("title")
        if data.why is not None and entity.metadata.get("why") != data.why:
            entity.metadata = {**entity.metadata, "why": data.why}
            fields.append("metadata")
        if data.namespace is not None and data.namespace != entity.namespace:
            moved_from = cast(NamespaceName, entity.namespace)
            entity.metadata = {**entity.metadata, "previous_namespace": moved_from}
            entity.namespace = data.namespace
            fields += ["namespace", "metadata"]
        if entity.status == Status.ARCHIVED:
            entity.status = Status.ACTIVE
            reactivated = True
            fields.append("status")
        if fields or changed:
            entity.updated_at = now
            entity.save(update_fields=sorted({*fields, "updated_at"}))
            changed = True

    # The entity's own index row is written before relations: a failure while relating
    # must (and does) roll the index back together with everything else.
    if created:
        # Nothing else has touched the new row: its index is written from what was inserted.
        index_after_insert(entity.pk, entity.name, entity.title, new_obs, new_tags)
    elif changed:
        index_after_write([entity.pk])

    created_relations, relation_errors, superseded = _relate(entity, data, now)
    cited = None
    if count_citations:
        title = incoming.title if created or "title" in fields else None
        written = "\n".join([*([title] if title else []), *new_obs])
        counted = record_citations(
            written, session_id=session_id, settle=False, exclude={entity.pk}
        )
        cited = [*counted.hits, *counted.unchanged] or None

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
        derived=(
            DerivedNote(name=entity.name, title=note.title, observations=note.observations)
            if note is not None
            else None
        ),
        replacedHistoryCount=history_count,
        project=incoming.project,
        cited=cited,
        retagged=retags or None,
        trust=entity_trust(entity, now),
    )


def _replace(
    entity: Entity,
    data: RememberInput,
    incoming: _Incoming,
    existing_obs: list[str],
    existing_tags: list[str],
    final_type: str,
    now: datetime,
    fields: list[str],
) -> tuple[list[str], list[str], int | None]:
    """Rewrite an existing entity's observations (and tags when passed), keeping the old
    version in metadata.replaced_history. Returns (observations stored, tags added, history
    length when a version was recorded); appends the entity fields it changed to `fields`."""
    new_obs = dedupe(incoming.observations, set(), key=normalize_observation)
    version: dict[str, Any] = {"at": now.isoformat(), "observations": existing_obs}
    same_obs = [normalize_observation(t) for t in existing_obs] == [
        normalize_observation(t) for t in new_obs
    ]
    if same_obs:
        new_obs = []
    else:
        Observation.objects.filter(entity=entity).delete()
        Entity.objects.observations_append(entity.pk, new_obs, now)

    if "tags" in data.model_fields_set:
        wanted = list(incoming.tags)
        if data.project is None:
            # `project` omitted: the memory stays filed where it is.
            wanted += [t for t in existing_tags if is_project_tag(t)]
        wanted = dedupe(wanted, set())
        new_tags = [t for t in wanted if t not in existing_tags]
        if set(wanted) != set(existing_tags):
            Tag.objects.filter(entity=entity).exclude(name__in=wanted).delete()
            version["tags"] = existing_tags
    else:
        new_tags = dedupe(incoming.tags, set(existing_tags))
    Entity.objects.tags_append(entity.pk, new_tags)

    if incoming.title is not None and incoming.title != entity.title:
        version["title"] = entity.title
    if final_type != entity.type:
        version["type"] = entity.type
        entity.type = final_type
        fields.append("type")
    if same_obs and len(version) == 2:  # only {at, observations}: nothing was rewritten
        return new_obs, new_tags, None
    history = [*entity.metadata.get("replaced_history", []), version]
    entity.metadata = {**entity.metadata, "replaced_history": history}
    fields.append("metadata")
    return new_obs, new_tags, len(history)


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
            entity_archive(target, now)
            # Kept and linked, never deleted: the old memory says what replaced it.
            metadata = {
                **with_event(target.metadata, "superseded", now, by=entity.pk),
                SUPERSEDED_BY_KEY: {"id": entity.pk, "name": entity.name},
            }
            Entity.objects.filter(pk=target.pk).update(metadata=metadata)
            index_after_write([target.pk])
            superseded.append(target.name)
    return created, errors, superseded
