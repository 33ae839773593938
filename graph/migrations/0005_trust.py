"""Provenance and trust on every memory (docs/trust.md): the columns, and an honest
classification of the memories stored before them.

Schema. The columns are added with `ALTER TABLE … ADD COLUMN` (constant defaults, so SQLite
writes nothing per row): Django's SQLite editor would remake graph_entity once per field,
copying a large table nine times. The state half declares the same fields to Django. Undoing
the migration drops them with `ALTER TABLE … DROP COLUMN`.

Data, one rule per memory, first match wins (`classify`; every row gets a `trust_history`
entry naming its rule, and the confidence it had when the migration lowered it):
1. imported (`metadata.untrusted`, `metadata.import` or `provenance.imported`): a hypothesis,
   confidence at most 0.5, never observed here;
2. accepted from a dream proposal (`provenance.source_host` "dream"): a hypothesis derived
   from the memories it summarises (`summarizes`) or is evidence of (`evidence_for`):
   confidence at most the minimum of theirs, the union of their invalidation conditions,
   hop_count 1, parent the first of them, never observed;
3. captured by a hook (a hook's source_host, a heuristic title, an auto-capture or note-file
   tag, or an activity type: commits, sessions, checkpoints): a hypothesis at most 0.5 — unless
   it carries its source: a commit with its hash is a fact sourced `git:<hash>`, observed when
   it was captured;
4. anything else was stored on purpose (remember over the CLI, REST or MCP, learn, the memory
   tool): a fact, its author as its source (`legacy:<source_host>`), observed at its last
   write, its confidence kept as it was (0.8 at creation + 0.05 per new observation, the rule
   before this migration).
Every memory with a `metadata.why` keeps that reason as its invalidation condition; episodic
kind for activity types, semantic otherwise. Nothing is ever raised: a confidence is only kept
or lowered.

The rules are written out here rather than imported: a migration must keep meaning what it
meant when it ran, whatever graph/ops/kit/trust/ becomes.
"""

from __future__ import annotations

from typing import Any

from django.db import migrations, models
from django.utils import timezone

HYPOTHESIS_CONFIDENCE = 0.5
BATCH = 500
ACTIVITY_TYPES = frozenset(
    {
        "commit",
        "session",
        "session_summary",
        "session-summary",
        "session_keypoint",
        "workflow_checkpoint",
        "conversation",
    }
)
HOOK_HOSTS = frozenset({"hook", "hooks", "claude-code-hook", "memesh-hook"})
HOOK_TAGS = frozenset({"source:auto-capture", "source:note-file", "source:note-file:missing"})
DREAM_HOST = "dream"
DERIVED_FROM = {"summarizes": "from", "evidence_for": "to"}  # relation type -> derived end

ADD_COLUMNS = [
    "ALTER TABLE graph_entity ADD COLUMN trust varchar(16) NOT NULL DEFAULT 'hypothesis'",
    "ALTER TABLE graph_entity ADD COLUMN source varchar(500) NULL",
    "ALTER TABLE graph_entity ADD COLUMN invalidation_tag varchar(64) NOT NULL DEFAULT ''",
    "ALTER TABLE graph_entity ADD COLUMN invalidation_condition text NOT NULL DEFAULT ''",
    "ALTER TABLE graph_entity ADD COLUMN kind varchar(16) NOT NULL DEFAULT 'semantic'",
    "ALTER TABLE graph_entity ADD COLUMN parent_id bigint NULL "
    "REFERENCES graph_entity (id) DEFERRABLE INITIALLY DEFERRED",
    "ALTER TABLE graph_entity ADD COLUMN hop_count integer unsigned NOT NULL DEFAULT 0 "
    "CHECK (hop_count >= 0)",
    "ALTER TABLE graph_entity ADD COLUMN last_observed_at datetime NULL",
    "ALTER TABLE graph_entity ADD COLUMN expires_at datetime NULL",
    "CREATE INDEX entity_parent ON graph_entity (parent_id)",
    "CREATE INDEX entity_expires ON graph_entity (expires_at)",
]
NEW_COLUMNS = (
    "trust",
    "source",
    "invalidation_tag",
    "invalidation_condition",
    "kind",
    "parent_id",
    "hop_count",
    "last_observed_at",
    "expires_at",
)


# The same columns in PostgreSQL's names for the types SQLite takes as written.
POSTGRES_TYPES = (("integer unsigned", "integer"), (" datetime ", " timestamp with time zone "))


def column_sql(vendor: str) -> list[str]:
    if vendor != "postgresql":
        return ADD_COLUMNS
    statements = []
    for sql in ADD_COLUMNS:
        for sqlite_type, postgres_type in POSTGRES_TYPES:
            sql = sql.replace(sqlite_type, postgres_type)
        statements.append(sql)
    return statements


def add_columns(apps: Any, schema_editor: Any) -> None:
    for sql in column_sql(schema_editor.connection.vendor):
        schema_editor.execute(sql)


def remove_columns(apps: Any, schema_editor: Any) -> None:
    # DROP COLUMN (SQLite >= 3.35) refuses an indexed column: the indexes go first.
    for index in ("entity_parent", "entity_expires"):
        schema_editor.execute(f"DROP INDEX IF EXISTS {index}")
    for column in NEW_COLUMNS:
        schema_editor.execute(f"ALTER TABLE graph_entity DROP COLUMN {column}")


def _is_imported(metadata: dict[str, Any]) -> bool:
    provenance = metadata.get("provenance")
    return (
        metadata.get("untrusted") is True
        or "import" in metadata
        or (isinstance(provenance, dict) and provenance.get("imported") is True)
    )


def _host(metadata: dict[str, Any]) -> str:
    provenance = metadata.get("provenance")
    host = provenance.get("source_host") if isinstance(provenance, dict) else None
    return host if isinstance(host, str) and host else "unknown"


def _is_hook_capture(type_: str, metadata: dict[str, Any], tags: set[str]) -> bool:
    host = _host(metadata)
    return (
        host in HOOK_HOSTS
        or host.startswith("hook:")
        or metadata.get("title_source") == "heuristic"
        or bool(tags & HOOK_TAGS)
        or type_ in ACTIVITY_TYPES
    )


def _why(metadata: dict[str, Any]) -> str:
    why = metadata.get("why")
    return " ".join(why.split()) if isinstance(why, str) else ""


def classify(
    type_: str,
    metadata: dict[str, Any],
    tags: set[str],
    confidence: float,
    updated_at: Any,
    created_at: Any,
) -> dict[str, Any]:
    """The trust fields of one memory stored before this migration (rules 1, 3 and 4 of the
    module docstring; rule 2 needs the other memories and is applied by `_derive`)."""
    fields: dict[str, Any] = {
        "kind": "episodic" if type_ in ACTIVITY_TYPES else "semantic",
        "invalidation_condition": _why(metadata),
        "hop_count": 0,
        "source": None,
        "last_observed_at": None,
    }
    if _is_imported(metadata):
        rule = "imported"
    elif _host(metadata) == DREAM_HOST:
        rule = "dream"
    elif _is_hook_capture(type_, metadata, tags):
        commit_hash = metadata.get("hash")
        if type_ == "commit" and isinstance(commit_hash, str) and commit_hash.strip():
            rule = "hook-sourced"
            fields.update(source=f"git:{commit_hash.strip()}", last_observed_at=created_at)
        else:
            rule = "hook"
    else:
        rule = "explicit"
        fields.update(source=f"legacy:{_host(metadata)}", last_observed_at=updated_at)
    fields["trust"] = "fact" if fields["source"] else "hypothesis"
    # A derived one is capped by its sources instead (`_derive`), as an accept caps it now.
    capped = fields["trust"] == "hypothesis" and rule != "dream"
    fields["confidence"] = min(confidence, HYPOTHESIS_CONFIDENCE) if capped else confidence
    if rule == "dream":
        fields["hop_count"] = 1
    fields["rule"] = rule
    return fields


def _history(metadata: dict[str, Any], rule: str, before: float, after: float, at: str) -> None:
    event: dict[str, Any] = {"at": at, "action": "migrate", "rule": rule}
    if after != before:
        event["from_confidence"] = before
    metadata["trust_history"] = [*metadata.get("trust_history", []), event]


def _derive(Entity: Any, Relation: Any, dream_ids: list[int]) -> None:
    """Rule 2 for the memories accepted from dream proposals, once every other memory has its
    trust fields: no more confident than its sources, and no less doubtful."""
    for entity in Entity.objects.filter(pk__in=dream_ids):
        sources: list[int] = []
        for type_, end in DERIVED_FROM.items():
            if end == "from":
                rows = Relation.objects.filter(from_entity_id=entity.pk, type=type_)
                sources += list(rows.order_by("id").values_list("to_entity_id", flat=True))
            else:
                rows = Relation.objects.filter(to_entity_id=entity.pk, type=type_)
                sources += list(rows.order_by("id").values_list("from_entity_id", flat=True))
        found = {s.pk: s for s in Entity.objects.filter(pk__in=sources)}
        ordered = [found[i] for i in sources if i in found]
        if not ordered:
            continue
        conditions = [entity.invalidation_condition] if entity.invalidation_condition else []
        for source in ordered:
            for line in source.invalidation_condition.splitlines():
                if line and line not in conditions:
                    conditions.append(line)
        lowered = min([entity.confidence, *(s.confidence for s in ordered)])
        if lowered != entity.confidence:
            # What unclassify_all gives back: the confidence before the migration.
            history = entity.metadata.get("trust_history") or [{}]
            history[-1].setdefault("from_confidence", entity.confidence)
            entity.metadata = {**entity.metadata, "trust_history": history}
        entity.confidence = lowered
        entity.invalidation_condition = "\n".join(conditions)
        entity.hop_count = max(s.hop_count for s in ordered) + 1
        entity.parent_id = ordered[0].pk
        entity.save(
            update_fields=[
                "confidence",
                "invalidation_condition",
                "hop_count",
                "parent",
                "metadata",
            ]
        )


def classify_all(apps: Any, schema_editor: Any) -> None:
    Entity = apps.get_model("graph", "Entity")
    Tag = apps.get_model("graph", "Tag")
    Relation = apps.get_model("graph", "Relation")
    at = timezone.now().isoformat()
    dream_ids: list[int] = []
    last = 0
    while True:
        batch = list(Entity.objects.filter(pk__gt=last).order_by("pk")[:BATCH])
        if not batch:
            break
        last = batch[-1].pk
        tags: dict[int, set[str]] = {}
        for entity_id, name in Tag.objects.filter(entity_id__in=[e.pk for e in batch]).values_list(
            "entity_id", "name"
        ):
            tags.setdefault(entity_id, set()).add(name)
        for entity in batch:
            metadata = dict(entity.metadata) if isinstance(entity.metadata, dict) else {}
            fields = classify(
                entity.type,
                metadata,
                tags.get(entity.pk, set()),
                entity.confidence,
                entity.updated_at,
                entity.created_at,
            )
            rule = fields.pop("rule")
            if rule == "dream":
                dream_ids.append(entity.pk)
            _history(metadata, rule, entity.confidence, fields["confidence"], at)
            for key, value in fields.items():
                setattr(entity, key, value)
            entity.metadata = metadata
        Entity.objects.bulk_update(batch, [*fields, "metadata"])
    _derive(Entity, Relation, dream_ids)


def unclassify_all(apps: Any, schema_editor: Any) -> None:
    """Give back the confidence the migration lowered (its trust_history entry says what it
    was) and drop that entry; the columns go in the schema step."""
    Entity = apps.get_model("graph", "Entity")
    for entity in Entity.objects.all().iterator():
        metadata = dict(entity.metadata) if isinstance(entity.metadata, dict) else {}
        history = metadata.get("trust_history") or []
        migrated = [e for e in history if isinstance(e, dict) and e.get("action") == "migrate"]
        if not migrated:
            continue
        before = migrated[0].get("from_confidence")
        if isinstance(before, int | float):
            entity.confidence = float(before)
        rest = [e for e in history if e not in migrated]
        if rest:
            metadata["trust_history"] = rest
        else:
            metadata.pop("trust_history", None)
        entity.metadata = metadata
        entity.save(update_fields=["confidence", "metadata"])


class Migration(migrations.Migration):
    dependencies = [("graph", "0004_session_outcomes")]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunPython(add_columns, remove_columns)],
            state_operations=[
                migrations.AddField(
                    model_name="entity",
                    name="trust",
                    field=models.CharField(
                        choices=[("fact", "Fact"), ("hypothesis", "Hypothesis")],
                        default="hypothesis",
                        max_length=16,
                    ),
                ),
                migrations.AddField(
                    model_name="entity",
                    name="source",
                    field=models.CharField(blank=True, max_length=500, null=True),
                ),
                migrations.AddField(
                    model_name="entity",
                    name="invalidation_tag",
                    field=models.CharField(blank=True, default="", max_length=64),
                ),
                migrations.AddField(
                    model_name="entity",
                    name="invalidation_condition",
                    field=models.TextField(blank=True, default=""),
                ),
                migrations.AddField(
                    model_name="entity",
                    name="kind",
                    field=models.CharField(
                        choices=[("semantic", "Semantic"), ("episodic", "Episodic")],
                        default="semantic",
                        max_length=16,
                    ),
                ),
                migrations.AddField(
                    model_name="entity",
                    name="parent",
                    field=models.ForeignKey(
                        blank=True,
                        db_index=False,
                        null=True,
                        on_delete=models.deletion.SET_NULL,
                        related_name="derived",
                        to="graph.entity",
                    ),
                ),
                migrations.AddField(
                    model_name="entity",
                    name="hop_count",
                    field=models.PositiveIntegerField(default=0),
                ),
                migrations.AddField(
                    model_name="entity",
                    name="last_observed_at",
                    field=models.DateTimeField(blank=True, null=True),
                ),
                migrations.AddField(
                    model_name="entity",
                    name="expires_at",
                    field=models.DateTimeField(blank=True, null=True),
                ),
                migrations.AlterField(
                    model_name="entity",
                    name="confidence",
                    field=models.FloatField(default=0.5),
                ),
                migrations.AddIndex(
                    model_name="entity",
                    index=models.Index(fields=["parent"], name="entity_parent"),
                ),
                migrations.AddIndex(
                    model_name="entity",
                    index=models.Index(fields=["expires_at"], name="entity_expires"),
                ),
            ],
        ),
        migrations.RunPython(classify_all, unclassify_all),
    ]
