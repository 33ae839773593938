"""A word-hashing embedder for the test suite: deterministic, instant, and meaningless.

Each lower-cased word maps to a fixed pseudo-random direction and a text is the normalised
sum of its words, so texts sharing words are close and others are not. It exists so tests of
vector maintenance and reindexing run without the model; it must never be configured for use.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import numpy as np

from graph.embedding.base import Embedder, normalise_rows

_WORD = re.compile(r"\w+")


class DeterministicEmbedder(Embedder):
    provider = "deterministic"

    def __init__(self, dimensions: int | None = None) -> None:
        self._width = dimensions or 384
        self.model = f"word-hash-{self._width}"

    @property
    def dimensions(self) -> int:
        return self._width

    def _word(self, word: str) -> np.ndarray:
        seed = int.from_bytes(hashlib.sha256(word.encode()).digest()[:8], "little")
        return np.random.default_rng(seed).standard_normal(self._width).astype(np.float32)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self._width), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in _WORD.findall(text.lower()):
                out[row] += self._word(word)
        return normalise_rows(out)
