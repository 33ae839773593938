"""Is a memory mined from a transcript already known? Checked with the vector index recall
uses (the live generation, `EntityVector.objects.nearest`, the configured embedder), before
a candidate is staged:

- against active memories: the nearest ones to the candidate's embedding text (name, title,
  observations: what an entity's vector is built from, graph/search/text.py), so a memory a
  person already accepted — or wrote — is not proposed again;
- against mined memories still waiting for review and ones a person rejected (their proposals
  are not in the index: their texts are embedded once per run), so a repeat from another
  session neither doubles the queue nor brings a rejected memory back;
- against the candidates staged earlier in the same run.

A candidate at or above DUPLICATE_SIMILARITY (cosine) to any of them is a near-duplicate —
unless it states a number the known memory does not (`_same_numbers`): a revision that
changes one value ("the default limit is 20" after "… is 10") is as close as a restatement,
and must reach the reviewer. When
the check cannot run (no embedder, no sqlite-vec, an index of another embedder, a failing
embedder), `unavailable` says why and nothing is skipped: the person reviewing sees every
candidate. Memories still waiting for a vector are embedded first, so they are compared too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from graph.embedding import provider
from graph.embedding.base import Embedder, EmbedderError
from graph.indexing import embedding_pass, generations, query_cache
from graph.models import Entity, EntityVector, Status
from graph.search.text import embedding_text
from proposals.models import Proposal, ProposalKind, ProposalStatus

# Cosine similarity at which a candidate restates a known memory. Measured on MiniLM with 17
# hand-made pairs (docs/dream.md, "Transcript mining"): restatements in other words 0.75–0.93,
# different memories on the same topic 0.04–0.46, revisions 0.69–0.95. High on purpose: a
# duplicate missed costs a reviewer one reject; a revision skipped would lose the update.
DUPLICATE_SIMILARITY = 0.85
NEIGHBOURS = 5
COARSE_CANDIDATES = 400  # as recall re-ranks (graph/ops/recall/selector.py)
MAX_PROPOSALS_COMPARED = 200  # of each status, newest first


_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def _same_numbers(candidate: str, known: str) -> bool:
    """Every number the candidate states is in the known memory too."""
    return set(_NUMBER.findall(candidate)) <= set(_NUMBER.findall(known))


def candidate_text(proposed: dict[str, Any]) -> str:
    observations = [str(o) for o in proposed.get("observations") or []]
    title = proposed.get("title")
    return embedding_text(
        str(proposed.get("name") or ""), title if isinstance(title, str) else None, observations
    )


@dataclass(frozen=True)
class Duplicate:
    similarity: float
    entity_id: int | None = None
    entity_name: str | None = None
    proposal_id: int | None = None
    proposal_status: str | None = None

    def as_json(self) -> dict[str, Any]:
        of: dict[str, Any] = (
            {"entityId": self.entity_id, "name": self.entity_name}
            if self.entity_id is not None
            else {"proposalId": self.proposal_id, "status": self.proposal_status}
        )
        return {**of, "similarity": round(self.similarity, 4)}


class DuplicateCheck:
    """One run's check; `unavailable` is None when it runs."""

    def __init__(self) -> None:
        self.unavailable: str | None = None
        self.not_compared = 0  # active memories left without a vector (the embedder failed)
        self._embedder: Embedder | None = None
        self._generation: generations.Generation | None = None
        self._known: list[tuple[np.ndarray, int, str, str]] | None = None
        self._prepare()

    def _prepare(self) -> None:
        report = embedding_pass.embed_pending()
        if report.skipped or report.error:
            self.unavailable = report.skipped or f"the embedder failed: {report.error}"
            return
        embedder = provider.current()
        live = generations.live_generation()
        if embedder is None or live is None:
            self.unavailable = "there is no vector index"
            return
        if embedder.dimensions not in (None, live.dimensions):
            self.unavailable = "the vector index has another width than the embedder"
            return
        self._embedder, self._generation = embedder, live
        self.not_compared = EntityVector.objects.pending_count(live.generation)

    def as_json(self) -> dict[str, Any]:
        if self.unavailable is not None:
            return {"ran": False, "reason": self.unavailable}
        assert self._generation is not None
        return {
            "ran": True,
            "index": f"{self._generation.identity}, generation {self._generation.generation}",
            "threshold": DUPLICATE_SIMILARITY,
            "notCompared": self.not_compared,
        }

    def find(self, text: str) -> Duplicate | None:
        """The known memory `text` restates, or None (also when the check cannot run)."""
        if self._embedder is None or self._generation is None:
            return None
        try:
            query = query_cache.query_vector(self._embedder, text)
            known = self._known_proposals()
        except EmbedderError as exc:
            self._fail(exc)
            return None
        best: Duplicate | None = None
        for entity_id, sim in EntityVector.objects.nearest(
            self._generation.generation,
            query,
            k=NEIGHBOURS,
            coarse=COARSE_CANDIDATES,
            token=self._generation.created_at,
        ):
            if sim < DUPLICATE_SIMILARITY or (best is not None and sim <= best.similarity):
                continue
            name = (
                Entity.objects.filter(pk=entity_id, status=Status.ACTIVE)
                .values_list("name", flat=True)
                .first()
            )
            known_text = Entity.objects.embedding_texts([entity_id]).get(entity_id, "")
            if name is not None and _same_numbers(text, known_text):
                best = Duplicate(sim, entity_id=entity_id, entity_name=name)
        for vector, proposal_id, status, proposal_text in known:
            sim = float(vector @ query)
            if sim < DUPLICATE_SIMILARITY or (best is not None and sim <= best.similarity):
                continue
            if _same_numbers(text, proposal_text):
                best = Duplicate(sim, proposal_id=proposal_id, proposal_status=status)
        return best

    def staged(self, text: str, proposal_id: int) -> None:
        """A candidate staged in this run: later candidates are compared with it too."""
        if self._embedder is None or self._known is None:
            return
        try:
            vector = query_cache.query_vector(self._embedder, text)
        except EmbedderError as exc:
            self._fail(exc)
            return
        self._known.append((vector, proposal_id, ProposalStatus.PENDING.value, text))

    def _known_proposals(self) -> list[tuple[np.ndarray, int, str, str]]:
        """(vector, proposal id, status, text) of mined memories pending or rejected, embedded
        on first use."""
        if self._known is None:
            assert self._embedder is not None
            rows: list[tuple[int, str, str]] = []
            for status in (ProposalStatus.PENDING, ProposalStatus.REJECTED):
                for pk, proposed in Proposal.objects.filter(
                    kind=ProposalKind.MEMORY, status=status
                ).values_list("pk", "proposed")[:MAX_PROPOSALS_COMPARED]:
                    rows.append((pk, status.value, candidate_text(proposed or {})))
            self._known = []
            if rows:
                embedded = self._embedder.embed([text for _, _, text in rows])
                for (pk, status_value, text), vector in zip(rows, embedded, strict=True):
                    self._known.append(
                        (np.asarray(vector, dtype=np.float32), pk, status_value, text)
                    )
        return self._known

    def _fail(self, exc: EmbedderError) -> None:
        self.unavailable = f"the embedder failed: {exc}"
        self._embedder = None
