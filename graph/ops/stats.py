"""stats: aggregate counts of the whole graph (GET /v1/stats; an MCP tool and `memesh stats`).

Every status counts (the status distribution tells active from archived). Totals: entities,
observations, relations, distinct tag names. Distributions, most common first and ties by
name: the TYPE_CAP most common types, the TAG_CAP most common tags (counting the entities
that carry each), every status. Nothing is counted as an access.
"""

from __future__ import annotations

from pydantic import Field

from graph.models import Entity
from graph.ops.kit.fields import Output, StrictInput
from graph.ops.kit.operation import READ_ONLY, CallContext, Operation
from graph.storage.cursor import read_snapshot

TYPE_CAP = 50
TAG_CAP = 30


class StatsInput(StrictInput):
    pass


class StatsTypeCount(Output):
    type: str
    count: int = Field(description="Entities of this type, every status.")


class StatsTagCount(Output):
    tag: str
    count: int = Field(description="Entities carrying this tag, every status.")


class StatsStatusCount(Output):
    status: str = Field(description="`active` or `archived`.")
    count: int


class StatsOutput(Output):
    totalEntities: int = Field(description="Entities, active and archived.")
    totalObservations: int
    totalRelations: int
    totalTags: int = Field(description="Distinct tag names.")
    typeDistribution: list[StatsTypeCount] = Field(
        description=f"The {TYPE_CAP} most common types, most common first."
    )
    tagDistribution: list[StatsTagCount] = Field(
        description=f"The {TAG_CAP} most common tags, most common first."
    )
    statusDistribution: list[StatsStatusCount]


def stats_get() -> StatsOutput:
    """The graph's totals and distributions, read from one snapshot."""
    objects = Entity.objects
    with read_snapshot():
        totals = objects.totals()
        types = objects.type_counts(TYPE_CAP)
        tags = objects.tag_counts(TAG_CAP)
        statuses = objects.status_counts()
    return StatsOutput(
        totalEntities=totals.entities,
        totalObservations=totals.observations,
        totalRelations=totals.relations,
        totalTags=totals.tags,
        typeDistribution=[StatsTypeCount(type=t, count=n) for t, n in types],
        tagDistribution=[StatsTagCount(tag=t, count=n) for t, n in tags],
        statusDistribution=[StatsStatusCount(status=s, count=n) for s, n in statuses],
    )


def _stats(data: StatsInput, ctx: CallContext) -> StatsOutput:
    return stats_get()


STATS = Operation(
    name="stats",
    summary=(
        "Aggregate counts of the memory graph: entities, observations, relations and distinct "
        "tags, with the type, tag and status distributions (most common first). Use it to see "
        "how much is stored and what kinds of memory dominate."
    ),
    input_model=StatsInput,
    output_model=StatsOutput,
    handler=_stats,
    hints=READ_ONLY,
    examples=[{}],
    method="GET",
)
