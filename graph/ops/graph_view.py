"""The graph view (the dashboard's, REST only): GET /v1/graph, ?layer=work, and the
drill-down GET /v1/graph/evidence?node=NAME. Entities come in recall's shape
(graph/ops/entity_view.py); relations as `{from, to, type}`. Nothing is counted as an access.

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

from typing import Literal

from pydantic import Field

from graph.errors import NotFound
from graph.models import Entity
from graph.ops.entity_types import EVIDENCES, NOISE_TYPES, WORK_TYPES
from graph.ops.entity_view import EntityOutput, RelationOutput, built, entity_outputs
from graph.ops.fields import Name, Output, StrictInput
from graph.ops.operation import READ_ONLY, CallContext, Operation
from graph.storage.cursor import read_snapshot

NOISE_CAP = 200
EVIDENCE_CAP = 200
WORK_LAYER = "work"


class GraphInput(StrictInput):
    layer: Literal["work"] | None = Field(
        default=None,
        description=(
            "`work`: only the work layer (decisions, lessons, plans, ...), with per-node "
            "evidence counts. Omit for the full graph."
        ),
    )


class GraphOutput(Output):
    entities: list[EntityOutput]
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


def graph_get(*, layer: str | None = None) -> GraphOutput:
    """The full graph view, or the work layer with its evidence counts."""
    objects = Entity.objects
    with read_snapshot():
        if layer == WORK_LAYER:
            ids = objects.layer_ids(WORK_TYPES)
            relations = objects.layer_relation_names(WORK_TYPES)
            counts: dict[str, int] | None = objects.incoming_counts(EVIDENCES, WORK_TYPES)
        else:
            ids = objects.ids_capping_types(NOISE_TYPES, NOISE_CAP)
            relations = objects.relation_names()
            counts = None
        docs = objects.documents(ids)
    return GraphOutput.model_construct(
        entities=entity_outputs(docs), relations=_relations(relations), evidenceCounts=counts
    )


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


def _graph_evidence(data: GraphEvidenceInput, ctx: CallContext) -> GraphEvidenceOutput:
    return graph_evidence_get(node=data.node)


GRAPH = Operation(
    name="graph",
    summary=(
        "The graph for visualisation: every entity except noise (commits, session records), "
        "the 200 most recent noise entities, and every relation; or, with layer=work, only "
        "the work layer (decisions, lessons, plans, ...) with per-node evidence counts."
    ),
    input_model=GraphInput,
    output_model=GraphOutput,
    handler=_graph,
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
