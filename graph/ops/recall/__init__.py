"""recall: search stored knowledge, or list recent memories without a query.

schema.py holds its models, selector.py the pipeline, vector_side.py the query embedding,
access.py the batched access counting of what it returns.

The pipeline (selector.py, and through it vector_side.py and numpy) is imported when a recall
runs, not with this package: a write imports access.py (feedback counts citations through it),
and every module of a package runs its __init__ first (docs/performance-notes.md)."""

from __future__ import annotations

from graph.ops.kit.operation import READ_ONLY, CallContext, Operation
from graph.ops.kit.scope import read_scope
from graph.ops.recall.schema import RecallInput, RecallOutput

__all__ = ["RECALL", "RecallInput", "RecallOutput"]


def _recall(data: RecallInput, ctx: CallContext) -> RecallOutput:
    from graph.ops.recall.selector import entity_recall  # the module docstring says why

    session_id = ctx.session(data.session_id)
    if session_id != data.session_id:
        data = data.model_copy(update={"session_id": session_id})
    scope = read_scope(
        project=data.project, tag=data.tag, cross_project=data.cross_project, ctx=ctx
    )
    return entity_recall(data=data, scope=scope)


RECALL = Operation(
    name="recall",
    summary=(
        "Search stored knowledge: terms are OR-ed and ranked by relevance, then by recency, "
        "use, confidence and impact. Call with no query to list recent memories. Searches "
        "the bound project's memories, those with no project and global ones (`scope` says "
        "which); `cross_project: true` searches every project."
    ),
    input_model=RecallInput,
    output_model=RecallOutput,
    handler=_recall,
    # Access counts are bookkeeping, not content: nothing a user stored changes.
    hints=READ_ONLY,
    examples=[{"query": "authentication"}, {"query": "auth", "tag": "project:myapp"}, {}],
)
