"""The embedder interface: what every embedding provider implements.

A provider turns texts into L2-normalised float32 vectors of one fixed width. Failures are
`EmbedderError`s with a `kind` callers can act on: a reindex counts consecutive failures,
recall reports `degraded`, doctor names the kind.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    # Every write imports this interface (graph/ops/kit/writes.py asks the provider whether to
    # queue an embedding); only an embedder at work needs numpy, ~0.2 s to import.
    import numpy as np


class EmbedderError(Exception):
    """A provider failure. `kind`: `auth` and `not_found` are configuration (never retried);
    `rate_limited`, `server`, `network` and `timeout` are weather (retried with a bound);
    `bad_response` is a reply not in the provider's format or not at the expected width;
    `bad_request` another 4xx; `unavailable` a local model that is not installed."""

    def __init__(self, message: str, *, kind: str, status: int | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.status = status


@dataclass(frozen=True)
class EmbedderConfig:
    """What the configuration says about embeddings (graph.embedding.config reads it)."""

    provider: str  # local | ollama | openai | none | deterministic
    model: str = ""
    base_url: str = ""
    api_key: str = ""
    dimensions: int | None = None  # requested width, where the provider lets us choose
    timeout: float = 30.0


class Embedder(ABC):
    """One embedding provider, configured. Instances are shared by the threads of a process."""

    provider: str
    model: str
    # Whether embed_with_pieces gives each text's content pieces for late interaction
    # (graph.search.late_interaction): the local model does; a remote API returns one vector.
    late_interaction = False
    # (offset, scale): this model's cosine s is read by recall as offset + scale·s, the scale
    # its fusion constants were measured on (all-MiniLM-L6-v2's: docs/recall.md, "The local
    # models"). A model whose unrelated texts sit at 0.45 rather than 0.15 would otherwise
    # look like every memory answers every query. The map keeps the model's own order.
    similarity_map: tuple[float, float] = (0.0, 1.0)

    @property
    def identity(self) -> str:
        """Names the embedding space: vectors of different identities are never compared."""
        return f"{self.provider}/{self.model}"

    @property
    @abstractmethod
    def dimensions(self) -> int | None:
        """The vector width when known without a call (None: learnt from the first reply)."""

    @abstractmethod
    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors for `texts`, shape (len(texts), width), float32, each of unit length.

        Raises EmbedderError. An empty `texts` returns an empty (0, width) array without a call
        when the width is known.
        """

    def embed_with_pieces(self, texts: Sequence[str]) -> tuple[np.ndarray, list[bytes]]:
        """`embed`, plus each text's packed content pieces (empty where the provider has
        none: late interaction then leaves the ranking alone)."""
        return self.embed(texts), [b""] * len(texts)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """`embed` for search queries: a model trained with an instruction on its queries (and
        none on its passages) gets it here; the others embed a query as any text."""
        return self.embed(texts)

    def embed_queries_with_pieces(self, texts: Sequence[str]) -> tuple[np.ndarray, list[bytes]]:
        """`embed_with_pieces` for search queries (see embed_queries)."""
        return self.embed_with_pieces(texts)

    def warm_up(self) -> None:
        """Make the first real call as fast as the next ones, where that costs no request to
        anyone (a local model loads; a remote provider is not called)."""
        return None


def normalise_rows(vectors: np.ndarray) -> np.ndarray:
    """Scale each row to unit length (a zero row stays zero)."""
    import numpy as np

    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms == 0.0, 1.0, norms)
