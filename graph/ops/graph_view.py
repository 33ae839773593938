"""The graph view (the dashboard's, REST only): GET /v1/graph, ?layer=work, and the
drill-down GET /v1/graph/evidence?node=NAME. Relations as `{from, to, type}`. Nothing is
counted as an access.

The two whole-graph views hold every entity of a view, so each is a light node (GraphNode:
what a graph view draws and filters by — name, title, type, status, trust status, tags,
times, how many observations), written as JSON by SQLite
(graph/storage/graph_reads.py) and sent as it comes (the operation's json_handler); Python
readers parse that same text (graph_get). The content is the drill-down's and the memory's
own page's: the evidence of one node comes in recall's shape (graph/ops/kit/entity_view.py).

- Full view: every entity whose type is not noise (graph/ops/entity_types.py NOISE_TYPES),
  most recently used (recalled or written) first, then the NOISE_CAP newest noise entities;
  every status (each entity says its own); every relation, also those touching a noise entity
  beyond the cap.
- Work layer (`layer=work`): the active entities of WORK_TYPES, most recently used first; the
  relations whose two ends are among them; `evidenceCounts`, name -> incoming `evidences`
  edges from active entities, for the nodes that have any (absent means none). Any other
  layer is a 400 `validation.bad-param`.
- Evidence of one node (`node`, an entity name, required): the active entities carrying an
  `evidences` edge to it, newest first, at most EVIDENCE_CAP, with those edges; `truncated`
  when more exist. A name that is no entity is a 404 `resource.not-found`; an entity without
  evidence is a 200 with empty lists.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from pydantic import Field
from pydantic_core import from_json

from core.errors import NotFound
from graph.models import Entity
from graph.ops.entity_types import EVIDENCES, NOISE_TYPES, WORK_TYPES
from graph.ops.kit.entity_view import EntityOutput, RelationOutput, built, entity_outputs
from graph.ops.kit.fields import Name, Output, StrictInput
from graph.ops.kit.operation import READ_ONLY, CallContext, Operation
from graph.ops.kit.trust.fields import TrustName
from graph.storage.commit_cache import kept_until_commit
from graph.storage.cursor import read_snapshot

NOISE_CAP = 200
EVIDENCE_CAP = 200
WORK_LAYER = "work"
GRAPH_READ_KEY = "graph_view.graph_read"


class GraphInput(StrictInput):
    layer: Literal["work"] | None = Field(
        default=None,
        description=(
            "`work`: only the work layer (decisions, lessons, plans, ...), with per-node "
            "evidence counts. Omit for the full graph."
        ),
    )


class GraphNode(Output):
    """One entity as the graph view draws it: no observations, metadata or trust block (the
    memory's page and the evidence drill-down carry those). SQLite writes it
    (graph/storage/graph_reads.py `_NODE_JSON`): a field added here is added there."""

    id: int
    name: str = Field(description="Identifier other operations address the memory by.")
    title: str | None = Field(description="Human-readable label, or null when none was given.")
    type: str
    status: Literal["active", "archived"]
    trust_status: TrustName = Field(
        description="`fact` (sourced and observed) or `hypothesis`: the trust block's status."
    )
    created_at: str = Field(description="ISO 8601 time of creation (UTC).")
    updated_at: str = Field(description="ISO 8601 time of the last write (UTC).")
    tags: list[str] = Field(
        description="In the order they were added; `project:<id>` files it under a project."
    )
    observation_count: int = Field(
        description="How many observations it holds (their text: GET /v1/entities/<name>)."
    )


class GraphOutput(Output):
    entities: list[GraphNode]
    relations: list[RelationOutput]
    evidenceCounts: dict[str, int] | None = Field(
        default=None,
        exclude_if=lambda v: v is None,
        description=(
            "layer=work only: node name -> incoming `evidences` edges from active entities; "
            "a node without any is absent. All zero until `memesh kg backfill-relations` ran."
        ),
    )


class GraphEvidenceInput(StrictInput):
    node: Name = Field(description="The work node's entity name.")


class GraphEvidenceOutput(Output):
    entities: list[EntityOutput] = Field(
        description=f"The evidence, newest first, at most {EVIDENCE_CAP}."
    )
    relations: list[RelationOutput] = Field(description="Their `evidences` edges to the node.")
    truncated: bool = Field(description="True when more evidence exists than was returned.")


def _relations(triples: list[tuple[str, str, str]]) -> list[RelationOutput]:
    return [built(RelationOutput, {"from_": f, "to": t, "type": type_}) for f, t, type_ in triples]


@dataclass(frozen=True, slots=True)
class GraphRead:
    """One read of a graph view as SQLite wrote it: each node's and each relation's JSON text
    (graph/storage/graph_reads.py), in the view's order; `total_nodes` the view's, which is
    more than `nodes` holds when the read was limited (a drawing's first nodes). Shared by
    the callers of one thread between two commits: never changed."""

    nodes: tuple[str, ...]
    relations: tuple[str, ...]
    evidence_counts: dict[str, int] | None
    total_nodes: int

    def answer_json(self) -> str:
        """GET /v1/graph's answer: the rows joined; the keys are GraphOutput's (by alias)."""
        if len(self.nodes) != self.total_nodes:
            raise ValueError("a limited read is no answer: it lacks nodes of the view")
        parts = ['{"entities":[', ",".join(self.nodes), '],"relations":[']
        parts += [",".join(self.relations), "]"]
        if self.evidence_counts is not None:
            counts = json.dumps(self.evidence_counts, ensure_ascii=False, separators=(",", ":"))
            parts += [',"evidenceCounts":', counts]
        parts.append("}")
        return "".join(parts)

    def output(self) -> GraphOutput:
        """The read parsed (its nodes, every relation). Constructed, not validated: the text
        is SQLite's encoding of stored columns, its keys GraphNode's fields in order (the
        tests hold them equal), and validating 8,200 nodes again cost more than reading
        them."""
        relations = from_json("[" + ",".join(self.relations) + "]")
        return GraphOutput.model_construct(
            entities=[built(GraphNode, n) for n in from_json("[" + ",".join(self.nodes) + "]")],
            relations=[
                built(RelationOutput, {"from_": r["from"], "to": r["to"], "type": r["type"]})
                for r in relations
            ],
            evidenceCounts=None if self.evidence_counts is None else dict(self.evidence_counts),
        )


def graph_read(*, layer: str | None = None, max_nodes: int | None = None) -> GraphRead:
    """The full graph view, or the work layer with its evidence counts, in one snapshot; only
    its first `max_nodes` nodes when given (every relation still). Kept by this thread until
    the next commit (graph/storage/commit_cache.py): the dashboard asks for the same view page after
    page, and reading it costs tens of milliseconds at 10k memories."""
    return kept_until_commit(
        (GRAPH_READ_KEY, layer, max_nodes), lambda: _graph_read(layer, max_nodes)
    )


def _graph_read(layer: str | None, max_nodes: int | None) -> GraphRead:
    objects = Entity.objects
    with read_snapshot():
        if layer == WORK_LAYER:
            nodes = objects.layer_nodes_json(WORK_TYPES, max_nodes)
            return GraphRead(
                nodes=tuple(nodes),
                relations=tuple(objects.layer_relations_json(WORK_TYPES)),
                evidence_counts=objects.incoming_counts(EVIDENCES, WORK_TYPES),
                total_nodes=_total(nodes, max_nodes, lambda: objects.layer_count(WORK_TYPES)),
            )
        nodes = objects.nodes_capping_types_json(NOISE_TYPES, NOISE_CAP, max_nodes)
        return GraphRead(
            nodes=tuple(nodes),
            relations=tuple(objects.relations_json()),
            evidence_counts=None,
            total_nodes=_total(
                nodes, max_nodes, lambda: objects.count_capping_types(NOISE_TYPES, NOISE_CAP)
            ),
        )


def _total(nodes: list[str], max_nodes: int | None, count: Callable[[], int]) -> int:
    """How many nodes the view holds: those read, unless the limit may have cut it."""
    return count() if max_nodes is not None and len(nodes) >= max_nodes else len(nodes)


def graph_json(*, layer: str | None = None) -> str:
    """GET /v1/graph's answer as JSON text, as SQLite wrote it (the REST route's)."""
    return graph_read(layer=layer).answer_json()


def graph_get(*, layer: str | None = None) -> GraphOutput:
    """GET /v1/graph's answer, parsed: the operation's handler, and the dashboard's."""
    return graph_read(layer=layer).output()


def graph_evidence_get(*, node: str) -> GraphEvidenceOutput:
    """The evidence of one node (NotFound when no entity has that name)."""
    objects = Entity.objects
    with read_snapshot():
        node_id = objects.id_for_name(node)
        if node_id is None:
            raise NotFound(f'No entity named "{node}"', field="node")
        # One more than the cap: whether the page filled and more exist.
        ids = objects.source_ids(node_id, EVIDENCES, EVIDENCE_CAP + 1)
        docs = objects.documents(ids[:EVIDENCE_CAP])
    return GraphEvidenceOutput.model_construct(
        entities=entity_outputs(docs),
        relations=_relations([(doc.name, node, EVIDENCES) for doc in docs]),
        truncated=len(ids) > EVIDENCE_CAP,
    )


def _graph(data: GraphInput, ctx: CallContext) -> GraphOutput:
    return graph_get(layer=data.layer)


def _graph_json(data: GraphInput, ctx: CallContext) -> str:
    return graph_json(layer=data.layer)


def _graph_evidence(data: GraphEvidenceInput, ctx: CallContext) -> GraphEvidenceOutput:
    return graph_evidence_get(node=data.node)


GRAPH = Operation(
    name="graph",
    summary=(
        "The graph for visualisation: every entity except noise (commits, session records), "
        "the 200 most recent noise entities, and every relation; or, with layer=work, only "
        "the work layer (decisions, lessons, plans, ...) with per-node evidence counts. "
        "Entities are graph nodes without their content (graph/evidence and entities/<name> "
        "carry it)."
    ),
    input_model=GraphInput,
    output_model=GraphOutput,
    handler=_graph,
    json_handler=_graph_json,
    hints=READ_ONLY,
    examples=[{}, {"layer": "work"}],
    method="GET",
    # The dashboard's data: the whole graph is no answer for an agent's context window.
    tool=False,
)

GRAPH_EVIDENCE = Operation(
    name="graph_evidence",
    summary=(
        "The evidence supporting one work node: the active entities with an `evidences` edge "
        "to it, newest first, at most 200 (truncated says when more exist)."
    ),
    input_model=GraphEvidenceInput,
    output_model=GraphEvidenceOutput,
    handler=_graph_evidence,
    hints=READ_ONLY,
    examples=[{"node": "auth-decision"}],
    method="GET",
    route="graph/evidence",
    tool=False,
)
