"""remember: store knowledge as an entity with observations, tags and relations.

schema.py holds its models, note.py the `note` parser, service.py the write."""

from __future__ import annotations

from graph.ops.kit.operation import CallContext, Operation, ToolHints
from graph.ops.remember.schema import RememberInput, RememberOutput
from graph.ops.remember.service import entity_remember

__all__ = ["REMEMBER", "RememberInput", "RememberOutput", "entity_remember"]


def _remember(data: RememberInput, ctx: CallContext) -> RememberOutput:
    # Filing a memory under the caller's project unasked is the agent guide's rule for agent
    # transports; the reference's remember tags nothing by itself.
    return entity_remember(
        data=data,
        source_host=ctx.source_host,
        project=ctx.project if ctx.guide_rules else None,
        require_why=ctx.guide_rules,
        count_citations=True,
        session_id=ctx.session(data.session_id),
        keep_projects_apart=ctx.guide_rules,
    )


REMEMBER = Operation(
    name="remember",
    summary=(
        "Store knowledge as an entity with observations, tags and relations. Calling it "
        "again with an existing name appends (observations added, tags deduplicated, the "
        "original type kept)."
    ),
    input_model=RememberInput,
    output_model=RememberOutput,
    handler=_remember,
    # Appends; `replace` keeps history, so nothing stored is lost.
    hints=ToolHints(read_only=False, destructive=False, idempotent=False),
    examples=[
        {
            "name": "auth-decision",
            "type": "decision",
            "observations": [
                "Chose JWT for authentication",
                "Using RS256 algorithm for token signing",
            ],
            "tags": ["project:myapp", "topic:auth"],
            "why": "Stateless tokens let every service verify a request on its own",
        }
    ],
)
