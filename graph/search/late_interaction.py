"""Late interaction: the top of a hybrid ranking re-ordered by how well each memory's words,
in context, answer the query's words.

The local model computes a vector for every word piece of a text and recall's vector is their
mean. The mean blurs a memory into one point; the pieces keep which words it holds and what
they mean where they stand. For each content piece of the query, the best cosine among a
memory's pieces is taken, and their mean is the memory's score (MaxSim, as in ColBERT). The
model was not trained for this; measured on both quality sets it still ranks the answer
higher among the hybrid ranking's first few (docs/recall.md, "Late interaction").

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


def maxsim(query: np.ndarray, memory: np.ndarray) -> float:
    """Mean over the query's pieces of the best cosine among the memory's pieces."""
    if len(query) == 0 or len(memory) == 0:
        return 0.0
    return float((query @ memory.T).max(axis=1).mean())


def reorder(
    ranked: Sequence[int],
    pieces: Mapping[int, bytes],
    query: bytes,
    covered: Mapping[int, float],
) -> list[int]:
    """`ranked` (best first) with its first DEPTH re-ordered by late interaction; unchanged
    unless the query and every one of those memories have their pieces (a memory whose
    vector is still being computed has none: the order is then the hybrid one).

    `covered` is each keyword candidate's share of the query (0 for one found by its vector
    alone). A memory ranked above another and holding more of the query by over
    COVERAGE_MARGIN stays above it: late interaction breaks the near-ties of a ranking, it
    does not overrule an exact match of a word only that memory holds."""
    head = list(ranked[:DEPTH])
    if len(head) < 2 or not query or any(not pieces.get(i) for i in head):
        return list(ranked)
    q = unpack(query)
    scores = [maxsim(q, unpack(pieces[i])) for i in head]
    low, high = min(scores), max(scores)
    spread = high - low
    if spread <= 0:
        return list(ranked)
    n = len(head)
    combined = [
        WEIGHT * (1.0 - place / n) + (1.0 - WEIGHT) * (score - low) / spread
        for place, score in enumerate(scores)
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
