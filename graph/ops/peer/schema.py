"""The peer's argument models and its memory row (the trusted-memory service's reference).

Where the two models differ, memesh's meaning is kept and translated:
- the peer's `namespace` (a sub-scope) is memesh's project: the `project:<namespace>` tag;
- `content` is one observation of a memory whose name is derived from the text, as
  remember's `note` derives one (the same content twice is one memory);
- `status` is the trust status, and `retired` is memesh's archived (forgotten or superseded);
- `similarity` is recall's fused relevance (`match.relevance`), 0–1.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import Field

from graph.ops.kit.fields import MAX_QUERY_CHARS, ObservationText, Output, StrictInput
from graph.ops.kit.trust.fields import (
    ConfidenceValue,
    MemoryId,
    ParentIdField,
    ProvenanceInput,
    ReasonText,
    SourceText,
)
from graph.ops.kit.trust.view import trust_output
from graph.project_tags import MAX_PROJECT_CHARS, is_project_tag, project_of
from graph.storage.documents import EntityDocument

PeerStatus = Literal["fact", "hypothesis", "retired"]
Namespace = Annotated[str, Field(min_length=1, max_length=MAX_PROJECT_CHARS)]
NAMESPACE_HELP = "Sub-scope: memesh's project (tag `project:<namespace>`)."
MAX_PEER_RECALL = 50
DEFAULT_PEER_RECALL = 8
MAX_PEER_LIST = 100
DEFAULT_PEER_LIST = 20


class PeerRememberInput(ProvenanceInput):
    content: ObservationText = Field(description="The memory text: a self-contained statement.")
    namespace: Namespace | None = Field(default=None, description=NAMESPACE_HELP)
    parent_id: ParentIdField = None


class PeerRecallInput(StrictInput):
    query: Annotated[str, Field(min_length=1, max_length=MAX_QUERY_CHARS)] = Field(
        description="Natural language."
    )
    namespace: Namespace | None = Field(default=None, description=NAMESPACE_HELP)
    limit: int = Field(
        default=DEFAULT_PEER_RECALL,
        ge=1,
        le=MAX_PEER_RECALL,
        description=f"1-{MAX_PEER_RECALL}, default {DEFAULT_PEER_RECALL}.",
    )
    include_retired: bool = Field(default=False, description="Also retired/superseded rows.")
    include_expired: bool = Field(default=False, description="Also expired ephemeral rows.")
    status: PeerStatus | None = Field(default=None, description="Restrict to one status.")


class PeerListInput(StrictInput):
    namespace: Namespace | None = Field(default=None, description=NAMESPACE_HELP)
    status: PeerStatus | None = Field(
        default=None,
        description="Default: live rows (fact + hypothesis); `retired` lists tombstones.",
    )
    include_expired: bool = Field(default=False, description="Also expired ephemeral rows.")
    limit: int = Field(
        default=DEFAULT_PEER_LIST,
        ge=1,
        le=MAX_PEER_LIST,
        description=f"1-{MAX_PEER_LIST}, default {DEFAULT_PEER_LIST}.",
    )


class PeerSupersedeInput(ProvenanceInput):
    id: MemoryId = Field(description="The memory the new one replaces.")
    content: ObservationText = Field(description="The new memory's text.")
    namespace: Namespace | None = Field(
        default=None, description="Default: the replaced memory's namespace."
    )


class PeerForgetInput(StrictInput):
    id: MemoryId = Field(description="The memory to retire (kept for history).")
    reason: ReasonText | None = Field(default=None, description="Why; stored and shown.")


class PeerObserveInput(StrictInput):
    id: MemoryId = Field(description="The memory observed.")
    source: SourceText | None = Field(
        default=None, description="Where it was observed; needed to promote a hypothesis."
    )
    confidence: ConfidenceValue | None = Field(
        default=None, description="The confidence after it (default: raised by 0.1)."
    )


class PeerConsolidateInput(StrictInput):
    namespace: Namespace | None = Field(default=None, description=NAMESPACE_HELP)
    dry_run: bool = Field(default=False, description="Preview without writing.")
    max_clusters: int | None = Field(default=None, ge=1, description="Cap on clusters.")


class PingMemoryInput(StrictInput):
    message: Annotated[str, Field(max_length=1000)] | None = Field(
        default=None, description="Echoed back."
    )


# --- results ------------------------------------------------------------------------------------


class PeerMemory(Output):
    id: int
    status: PeerStatus
    source: str | None
    content: str
    namespace: str | None
    kind: str
    confidence: float
    learned_at: str
    last_observed_at: str | None
    hop_count: int
    parent_id: int | None
    invalidation_tag: str | None
    invalidation_condition: str | None
    expires_at: str | None
    ephemeral: bool
    expiry: str = Field(description="`permanent`, `expires <time>` or `expired <time>`.")


class PeerRecalled(PeerMemory):
    similarity: float
    unattributable: bool
    trust: str = Field(description="A one-line trust hint.")


class PeerRecallOutput(Output):
    query: str
    results: list[PeerRecalled]


class PeerListOutput(Output):
    memories: list[PeerMemory]
    count: int


class PeerSuperseded(Output):
    id: int
    status: PeerStatus
    superseded_by: int


class PeerSupersedeOutput(Output):
    superseded: PeerSuperseded
    new: PeerMemory


class PeerForgetOutput(Output):
    id: int
    status: PeerStatus
    reason: str | None


class PingMemoryOutput(Output):
    message: str
    agent: str
    embed_model: str | None
    embed_reachable: bool | None
    backend: str


def _status(doc: EntityDocument) -> PeerStatus:
    if doc.status != "active":
        return "retired"
    return "fact" if doc.trust == "fact" else "hypothesis"


def peer_memory(doc: EntityDocument, now: datetime) -> PeerMemory:
    """A memesh document as the peer's memory row."""
    trust = trust_output(doc, now)
    projects = [project_of(t) for t in doc.tags if is_project_tag(t)]
    if trust.expires_at is None:
        expiry = "permanent"
    else:
        expiry = f"{'expired' if trust.expired else 'expires'} {trust.expires_at}"
    return PeerMemory(
        id=doc.id,
        status=_status(doc),
        source=doc.source,
        content="\n".join(doc.observations) or doc.title or doc.name,
        namespace=projects[0] if projects else None,
        kind=doc.kind,
        confidence=doc.confidence,
        learned_at=doc.created_at,
        last_observed_at=doc.last_observed_at,
        hop_count=doc.hop_count,
        parent_id=doc.parent_id,
        invalidation_tag=trust.invalidation_tag,
        invalidation_condition=trust.invalidation_condition,
        expires_at=trust.expires_at,
        ephemeral=trust.expires_at is not None,
        expiry=expiry,
    )


def trust_hint(doc: EntityDocument, now: datetime) -> str:
    """The peer's one-line trust hint, in memesh's words for the same states."""
    trust = trust_output(doc, now)
    if doc.status != "active":
        return "retired: superseded or forgotten, kept for history — do not rely on it"
    if trust.status == "fact" and not trust.stale:
        return "fact: sourced and observed — trustworthy, but still falsifiable"
    if trust.status == "fact":
        since = (trust.unconfirmed_since or "")[:10]
        return f"fact, unconfirmed since {since}: re-check before relying"
    if trust.unattributable:
        return (
            f"hypothesis: derived ({trust.hop_count} hop{'s' if trust.hop_count != 1 else ''}) "
            "with no source of its own — verify before relying"
        )
    return "hypothesis: unsourced — verify before relying; `memory_observe` with a source"
