"""Late interaction: the top of a hybrid ranking lifted and re-ordered by how well each
memory's words, in context, answer the query's words.

The local model computes a vector for every word piece of a text and recall's vector is their
mean. The mean blurs a memory into one point; the pieces keep which words it holds and what
they mean where they stand. For each content piece of the query, the best cosine among a
memory's pieces is taken, and their mean is the memory's score (MaxSim, as in ColBERT). The
model was not trained for this; measured on both quality sets it still ranks the answer
higher among the hybrid ranking's first few (docs/recall.md, "Late interaction"). It is
used twice: `lift_order` raises the fused ranking's first LIFT_DEPTH by their MaxSim before
the session context and usage factors, and `reorder` re-orders the final first DEPTH.

What is stored per memory, beside its vector (graph_entityvector.pieces): the pieces that
carry content — not [CLS]/[SEP], punctuation, or a whole English function word
(graph.search.text.STOPWORDS) — at most MAX_PIECES of them, each projected to DIMS by a
fixed ±1 matrix and kept as int8 (64 bytes a piece). Cosines survive the projection closely
enough for ranking; 384 float32 values a piece would make the vectors table ~20× larger.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

from graph.search.fusion import Fused
from graph.search.text import STOPWORDS

if TYPE_CHECKING:
    import numpy as np

# Width of a stored piece, and the most pieces kept of one text: the first 64 content pieces
# (the model reads 256). A typical memory has 25–45 (both quality sets: 0.2 % have more);
# a long one is compared by its beginning, and stores at most 4 KB.
DIMS = 64
MAX_PIECES = 64
# Re-ordered: the hybrid ranking's first DEPTH memories. Each keeps WEIGHT of its place in
# that ranking (1 for the first, falling by 1/DEPTH a place) and gains 1 − WEIGHT times its
# MaxSim, scaled to 0..1 among the DEPTH. Six or more lost bench/data/quality's mixed or
# multilingual queries at hit@5 (docs/recall.md has the grid).
DEPTH = 5
WEIGHT = 0.5
# A memory holding more of the query than one ranked below it, by over COVERAGE_MARGIN of the
# query (IDF-weighted, graph.search.fusion.coverage), is not moved below it. Without it, the
# HTTP workload's rare-word queries lost hit@1 1.00 → 0.80 (the memory holding the rare word
# fell behind ones whose common words read closer); 0.4 keeps 1.00 there and every figure of
# both quality sets (0.5 lost one rare-word query, 0.3 and below lost LoCoMo hit@1).
COVERAGE_MARGIN = 0.4
# Before that re-order, the fused ranking's first LIFT_DEPTH candidates gain up to LIFT_WEIGHT
# of relevance by their MaxSim, scaled to 0..1 among them, when the best keyword candidate
# holds at least LIFT_MIN_COVERAGE of the query (IDF-weighted). Measured on both quality sets
# (docs/recall.md, "Late interaction in the fusion"): 0.3 lost a mixed query of
# bench/data/quality at hit@1; without the coverage condition its paraphrases lost at hit@1,
# @5 and @10 (a query sharing no word with its answer is the mean-pooled vector's to decide,
# the objective the model was trained for); 20 and 50 candidates did as well as 30.
# A query of one word is not lifted: every candidate holds that word, MaxSim is then one
# piece's cosine with its own occurrences, and neither quality set has such a query to
# measure it on (LoCoMo dev one of 760, bench/data/quality none); it would cost ~0.3 ms of
# the shortest, fastest recalls for nothing shown.
LIFT_DEPTH = 30
LIFT_WEIGHT = 0.25
LIFT_MIN_COVERAGE = 0.5
LIFT_MIN_TERMS = 2
# Stored pieces are comparable with a new query's only under the same projection and
# selection: a change to either needs a migration that has the worker compute them again
# (as graph/migrations/0007_vector_pieces.py does for rows from before pieces existed).
_SEED = b"memesh late interaction v1"


@lru_cache(maxsize=1)
def _projection(width: int) -> np.ndarray:
    """A fixed width × DIMS matrix of ±1, from a hash stream (the same on every machine and
    numpy version, so stored pieces stay comparable with new queries)."""
    import numpy as np

    needed = width * DIMS
    stream = bytearray()
    counter = 0
    while len(stream) * 8 < needed:
        stream += hashlib.blake2b(_SEED + counter.to_bytes(8, "little"), digest_size=64).digest()
        counter += 1
    bits = np.unpackbits(np.frombuffer(bytes(stream), dtype=np.uint8))[:needed]
    return (bits.astype(np.float32) * 2.0 - 1.0).reshape(width, DIMS)


def content_positions(pieces: Sequence[str]) -> list[int]:
    """Positions of the pieces that carry content: word pieces and their continuations, not the
    special tokens at both ends, punctuation or a whole English function word."""
    keep = []
    for i, piece in enumerate(pieces[1:-1], start=1):
        if piece.startswith("##") or (piece.isalnum() and piece.lower() not in STOPWORDS):
            keep.append(i)
    return keep[:MAX_PIECES]


def pack(states: np.ndarray) -> bytes:
    """The stored form of a text's content pieces (rows of `states`, the model's output)."""
    import numpy as np

    if len(states) == 0:
        return b""
    projected = np.asarray(states, dtype=np.float32) @ _projection(states.shape[1])
    peak = np.abs(projected).max(axis=1, keepdims=True)
    scaled = np.rint(projected / np.maximum(peak, 1e-12) * 127.0)
    return scaled.astype(np.int8).tobytes()


def unpack(blob: bytes) -> np.ndarray:
    """Unit rows of DIMS from a packed blob (empty when it holds no piece)."""
    import numpy as np

    rows = np.frombuffer(blob, dtype=np.int8)[: len(blob) // DIMS * DIMS].reshape(-1, DIMS)
    rows = rows.astype(np.float32)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return rows / np.maximum(norms, 1e-12)


def scores(query: bytes, pieces: Mapping[int, bytes]) -> dict[int, float]:
    """MaxSim of each memory in `pieces` that has any: the mean over the query's pieces of the
    best cosine among the memory's pieces. In one matrix product for all of them; memories
    with no piece are left out, and so is every memory when the query has none."""
    import numpy as np

    ids = [i for i, blob in pieces.items() if len(blob) >= DIMS]
    if not query or not ids:
        return {}
    counts = [len(pieces[i]) // DIMS for i in ids]
    joined = b"".join(pieces[i][: n * DIMS] for i, n in zip(ids, counts, strict=True))
    rows = np.frombuffer(joined, dtype=np.int8).reshape(-1, DIMS).astype(np.float32)
    # Cosines: dot products over the rows' norms (dividing the few products, not the rows).
    norms = np.sqrt(np.einsum("ij,ij->i", rows, rows))
    # Memory pieces × query pieces, end to end (this orientation is ~5× faster in BLAS).
    cosines = (rows @ np.ascontiguousarray(unpack(query).T)) / np.maximum(norms, 1e-12)[:, None]
    starts = np.concatenate(([0], np.cumsum(counts[:-1]))).astype(np.intp)
    best = np.maximum.reduceat(cosines, starts, axis=0)  # each query piece's best, per memory
    return dict(zip(ids, best.mean(axis=1).tolist(), strict=True))


def lift_order(
    fused: Sequence[Fused],
    pieces: Mapping[int, bytes],
    query: bytes,
    best_coverage: float,
    head: Sequence[int] | None = None,
) -> tuple[list[Fused], dict[int, float]]:
    """`fused` with the LIFT_DEPTH most relevant raised by up to LIFT_WEIGHT, in proportion
    to their MaxSim among them, and those MaxSims (for reorder to reuse). Unchanged, with no
    MaxSim, when the best keyword candidate holds less than LIFT_MIN_COVERAGE of the query,
    or when one of them has no pieces (its vector is still being computed: it is not pushed
    down for being new). `head`: head_of(fused), when the caller has it already."""
    if best_coverage < LIFT_MIN_COVERAGE or not query:
        return list(fused), {}
    head = head_of(fused) if head is None else head
    if len(head) < 2 or any(not pieces.get(i) for i in head):
        return list(fused), {}
    found = scores(query, {i: pieces[i] for i in head})
    low, high = min(found.values(), default=0.0), max(found.values(), default=0.0)
    if len(found) < len(head) or high <= low:
        return list(fused), found
    scale = LIFT_WEIGHT / (high - low)
    lifted = [
        Fused(f.entity_id, f.relevance + scale * (found[f.entity_id] - low), f.source, f.reported)
        if f.entity_id in found
        else f
        for f in fused
    ]
    return lifted, found


def head_of(fused: Sequence[Fused]) -> list[int]:
    """The ids lift_order reads the pieces of: the LIFT_DEPTH most relevant."""
    return [f.entity_id for f in sorted(fused, key=lambda f: -f.relevance)[:LIFT_DEPTH]]


def reorder(
    ranked: Sequence[int],
    pieces: Mapping[int, bytes],
    query: bytes,
    covered: Mapping[int, float],
    known: Mapping[int, float] | None = None,
) -> list[int]:
    """`ranked` (best first) with its first DEPTH re-ordered by late interaction; unchanged
    unless the query and every one of those memories have their pieces (a memory whose
    vector is still being computed has none: the order is then the hybrid one). `known`:
    MaxSims already computed for this query (lift_order's), not computed again.

    `covered` is each keyword candidate's share of the query (0 for one found by its vector
    alone). A memory ranked above another and holding more of the query by over
    COVERAGE_MARGIN stays above it: late interaction breaks the near-ties of a ranking, it
    does not overrule an exact match of a word only that memory holds."""
    head = list(ranked[:DEPTH])
    if len(head) < 2 or not query or any(not pieces.get(i) for i in head):
        return list(ranked)
    found = {i: known[i] for i in head if known and i in known}
    found.update(scores(query, {i: pieces[i] for i in head if i not in found}))
    if len(found) < len(head):  # a memory of pieces too short to hold one
        return list(ranked)
    maxsims = [found[i] for i in head]
    low, high = min(maxsims), max(maxsims)
    spread = high - low
    if spread <= 0:
        return list(ranked)
    n = len(head)
    combined = [
        WEIGHT * (1.0 - place / n) + (1.0 - WEIGHT) * (score - low) / spread
        for place, score in enumerate(maxsims)
    ]
    share = [covered.get(i, 0.0) for i in head]

    def held_back(place: int, left: list[int]) -> bool:
        return any(a < place and share[a] - share[place] > COVERAGE_MARGIN for a in left)

    order: list[int] = []
    left = list(range(n))
    while left:
        # The best by `combined` among those no memory left above them out-covers; the first
        # left always qualifies, so every step takes one.
        free = [place for place in left if not held_back(place, left)]
        pick = min(free, key=lambda p: (-combined[p], p))
        order.append(pick)
        left.remove(pick)
    return [head[place] for place in order] + list(ranked[DEPTH:])
