"""One Operation per peer tool (`memory_remember`, …, `ping_memory`), each calling the memesh
service it maps onto; the REST routes (api/rest/peer_views.py) run the same Operations. They are
tools but no /v1 routes, and are listed only when the switch is on (switch.py).

`memory_consolidate` has no unreviewed equivalent in memesh: consolidation is a dream digest a
person accepts (DESIGN §7), so it answers `operation.failed` saying where to go.
"""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from core.errors import NotFound, OperationFailed
from graph.models import Entity, Tag
from graph.ops.forget import ForgetInput, entity_forget
from graph.ops.kit.operation import READ_ONLY, CallContext, Operation, ToolHints, validated
from graph.ops.kit.scope import read_scope
from graph.ops.memory_list import MemoryListInput, memory_list
from graph.ops.observe import ObserveInput, memory_observe
from graph.ops.peer.schema import (
    PeerConsolidateInput,
    PeerForgetInput,
    PeerForgetOutput,
    PeerListInput,
    PeerListOutput,
    PeerMemory,
    PeerObserveInput,
    PeerRecalled,
    PeerRecallInput,
    PeerRecallOutput,
    PeerRememberInput,
    PeerSuperseded,
    PeerSupersedeInput,
    PeerSupersedeOutput,
    PingMemoryInput,
    PingMemoryOutput,
    peer_memory,
    trust_hint,
)
from graph.ops.ping import PingInput, memesh_ping
from graph.ops.recall import RecallInput
from graph.ops.recall.selector import entity_recall
from graph.ops.remember import RememberInput, entity_remember
from graph.ops.remember.note import parse_note
from graph.ops.supersede import SupersedeInput, memory_supersede
from graph.project_tags import is_project_tag, project_tag

PROVENANCE = ("source", "confidence", "invalidation_tag", "invalidation_condition", "kind")
_RANK = {"fact": 0, "hypothesis": 1, "retired": 2}


def _row(entity_id: int) -> PeerMemory:
    [doc] = Entity.objects.documents([entity_id])
    return peer_memory(doc, timezone.now())


def _named(entity_id: int) -> Entity:
    entity = Entity.objects.filter(pk=entity_id).first()
    if entity is None:
        raise NotFound(f"No memory with id {entity_id}", field="id")
    return entity


@transaction.atomic
def _remember(data: PeerRememberInput, ctx: CallContext) -> PeerMemory:
    fields = {key: getattr(data, key) for key in (*PROVENANCE, "parent_id", "ttl_hours")}
    remember_input = validated(
        RememberInput,
        {
            "name": parse_note(data.content).name,
            "type": "note",
            "observations": [data.content],
            **({"project": data.namespace} if data.namespace else {}),
            **{key: value for key, value in fields.items() if value is not None},
        },
    )
    out = entity_remember(
        data=remember_input,
        source_host=ctx.source_host,
        project=ctx.project if ctx.guide_rules else None,
        keep_projects_apart=ctx.guide_rules,
    )
    return _row(out.entityId)


def _recall(data: PeerRecallInput, ctx: CallContext) -> PeerRecallOutput:
    retired = data.status == "retired"
    recall_input = RecallInput(
        query=data.query,
        limit=data.limit,
        tag=project_tag(data.namespace) if data.namespace else None,
        include_archived=data.include_retired or retired,
        include_expired=data.include_expired,
        status=data.status if data.status in ("fact", "hypothesis") else None,
        session_id=ctx.session_id,
    )
    now = timezone.now()
    # Scoped as recall is (graph/ops/kit/scope.py): the bound project's memories, those with no
    # project and global ones; a `namespace` names the project.
    scope = read_scope(project=None, tag=recall_input.tag, cross_project=False, ctx=ctx)
    result = entity_recall(data=recall_input, scope=scope, now=now)
    docs = {d.id: d for d in Entity.objects.documents([e.id for e in result.entities])}
    rows = []
    for entity in result.entities:
        doc = docs[entity.id]
        row = peer_memory(doc, now)
        if retired and row.status != "retired":
            continue
        rows.append(
            PeerRecalled(
                **row.model_dump(),
                similarity=entity.match.relevance if entity.match is not None else 0.0,
                unattributable=entity.trust.unattributable,
                trust=trust_hint(doc, now),
            )
        )
    # Facts first, then hypotheses, then retired rows; recall's order within each.
    rows.sort(key=lambda r: _RANK[r.status])
    return PeerRecallOutput(query=data.query, results=rows)


def _list(data: PeerListInput, ctx: CallContext) -> PeerListOutput:
    status = "archived" if data.status == "retired" else data.status
    listed = memory_list(
        data=MemoryListInput(
            status=status,
            tag=project_tag(data.namespace) if data.namespace else None,
            include_expired=data.include_expired,
            limit=data.limit,
        )
    )
    now = timezone.now()
    docs = Entity.objects.documents([m.id for m in listed.memories])
    rows = [peer_memory(doc, now) for doc in docs]
    return PeerListOutput(memories=rows, count=len(rows))


@transaction.atomic
def _supersede(data: PeerSupersedeInput, ctx: CallContext) -> PeerSupersedeOutput:
    old = _named(data.id)
    tags = list(Tag.objects.filter(entity=old).values_list("name", flat=True))
    if data.namespace:
        tags = [t for t in tags if not is_project_tag(t)] + [project_tag(data.namespace)]
    fields = {key: getattr(data, key) for key in (*PROVENANCE, "ttl_hours")}
    supersede_input = validated(
        SupersedeInput,
        {
            "id": old.pk,
            "observations": [data.content],
            "tags": tags,
            **{key: value for key, value in fields.items() if value is not None},
        },
    )
    # The peer has no `why`: a superseded decision is not refused for the lack of one.
    out = memory_supersede(data=supersede_input, source_host=ctx.source_host)
    return PeerSupersedeOutput(
        superseded=PeerSuperseded(
            id=out.superseded.id, status="retired", superseded_by=out.superseded.superseded_by
        ),
        new=_row(out.new.entityId),
    )


def _forget(data: PeerForgetInput, ctx: CallContext) -> PeerForgetOutput:
    entity = _named(data.id)
    out = entity_forget(data=ForgetInput(name=entity.name, reason=data.reason))
    return PeerForgetOutput(id=entity.pk, status="retired", reason=out.reason or data.reason)


def _observe(data: PeerObserveInput, ctx: CallContext) -> PeerMemory:
    out = memory_observe(
        data=ObserveInput(id=data.id, source=data.source, confidence=data.confidence)
    )
    return _row(out.id)


def _consolidate(data: PeerConsolidateInput, ctx: CallContext) -> PeerMemory:
    raise OperationFailed(
        "memory_consolidate: memesh consolidates only through reviewed dream proposals — "
        "POST /v1/dream/run (or `memesh dream run`) stages digests of episodic memories, and a "
        "person accepts them at /review/. An accepted digest is what the peer's consolidate "
        "promises: a hypothesis at its sources' minimum confidence, holding the union of their "
        "invalidation conditions, one hop further, its sources archived and linked"
    )


def _ping(data: PingMemoryInput, ctx: CallContext) -> PingMemoryOutput:
    out = memesh_ping(data=PingInput(message=data.message), ctx=ctx)
    return PingMemoryOutput(
        message=out.message,
        agent=out.agent.source_host,
        embed_model=out.embedder.identity,
        embed_reachable=out.embedder.reachable,
        backend=f"{out.backend.engine} {out.backend.version}",
    )


WRITE = ToolHints(read_only=False, destructive=False, idempotent=False)
PEER_OPERATIONS: list[Operation] = [
    Operation(
        name="memory_remember",
        rest=False,
        summary="Save a memory (sourced => fact, unsourced => hypothesis). memesh's remember.",
        input_model=PeerRememberInput,
        output_model=PeerMemory,
        handler=_remember,
        hints=WRITE,
        examples=[
            {
                "content": "The deploy script restarts php8.4-fpm after composer install.",
                "source": "runbook",
                "invalidation_condition": "delete if deploys move to a zero-downtime reload",
            }
        ],
    ),
    Operation(
        name="memory_recall",
        rest=False,
        summary="Semantic top-k with provenance + trust, facts first. memesh's recall.",
        input_model=PeerRecallInput,
        output_model=PeerRecallOutput,
        handler=_recall,
        hints=READ_ONLY,
        examples=[{"query": "what happens to php-fpm on deploy?"}],
    ),
    Operation(
        name="memory_list",
        rest=False,
        summary="Browse / audit recent rows (no search). memesh's memory_list.",
        input_model=PeerListInput,
        output_model=PeerListOutput,
        handler=_list,
        hints=READ_ONLY,
        examples=[{"namespace": "proj", "limit": 20}],
    ),
    Operation(
        name="memory_supersede",
        rest=False,
        summary="Correct: new row replaces old, old kept. memesh's supersede.",
        input_model=PeerSupersedeInput,
        output_model=PeerSupersedeOutput,
        handler=_supersede,
        hints=WRITE,
        examples=[
            {"id": 42, "content": "The admin dashboard moved to /manage.", "source": "routes"}
        ],
    ),
    Operation(
        name="memory_forget",
        rest=False,
        summary="Tombstone a memory with a reason. memesh's forget.",
        input_model=PeerForgetInput,
        output_model=PeerForgetOutput,
        handler=_forget,
        hints=ToolHints(read_only=False, destructive=True, idempotent=True),
        examples=[{"id": 42, "reason": "staging decommissioned"}],
    ),
    Operation(
        name="memory_observe",
        rest=False,
        summary="Fresh observation; promotes hypothesis -> fact (with a source). memesh's observe.",
        input_model=PeerObserveInput,
        output_model=PeerMemory,
        handler=_observe,
        hints=WRITE,
        examples=[{"id": 42}],
    ),
    Operation(
        name="memory_consolidate",
        rest=False,
        summary="Not available unreviewed: memesh consolidates through dream proposals a person "
        "accepts (POST /v1/dream/run); this answers operation.failed saying so.",
        input_model=PeerConsolidateInput,
        output_model=PeerMemory,
        handler=_consolidate,
        hints=READ_ONLY,
        examples=[{"namespace": "proj", "dry_run": False}],
    ),
    Operation(
        name="ping_memory",
        rest=False,
        summary="Health check (agent, embed model, backend). memesh's ping.",
        input_model=PingMemoryInput,
        output_model=PingMemoryOutput,
        handler=_ping,
        hints=READ_ONLY,
        examples=[{"message": "hello"}],
    ),
]


def peer_operation(name: str) -> Operation:
    return next(op for op in PEER_OPERATIONS if op.name == name)
