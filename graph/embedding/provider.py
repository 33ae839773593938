"""The configured embedder of this process (one instance, created on first use)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from django.conf import settings

from graph.embedding.base import Embedder, EmbedderConfig
from graph.embedding.config import load_config

logger = logging.getLogger(__name__)
_lock = threading.Lock()
_cached: tuple[EmbedderConfig, Embedder | None] | None = None
_local_pace: Callable[[], object] | None = None
# Local models of generations being replaced, by name (for_generation).
_previous: dict[str, Embedder] = {}


def build(config: EmbedderConfig) -> Embedder | None:
    """A new embedder for `config`; None for the `none` provider (keyword-only)."""
    if config.provider == "none":
        return None
    if config.provider == "local":
        from graph.embedding import local_models
        from graph.embedding.local import local_embedder

        spec = local_models.find(config.model)
        if spec is None:  # graph.embedding.config refuses an unknown name first
            raise ValueError(f"unknown local model {config.model!r}")
        return local_embedder(spec, pace=_local_pace)
    if config.provider == "deterministic":
        from graph.embedding.deterministic import DeterministicEmbedder

        return DeterministicEmbedder(config.dimensions)
    from graph.embedding.remote import OllamaEmbedder, OpenAIEmbedder

    return OllamaEmbedder(config) if config.provider == "ollama" else OpenAIEmbedder(config)


def configured() -> bool:
    """Whether an embedder is configured (`current()` is not None), without building it: every
    write asks, to queue its embedding, and building the local embedder imports numpy."""
    return load_config().provider != "none"


def current() -> Embedder | None:
    """The embedder the configuration names; rebuilt when the configuration changes."""
    global _cached
    config = load_config()
    with _lock:
        if _cached is None or _cached[0] != config:
            _cached = (config, build(config))
        return _cached[1]


def for_generation(provider: str, model: str) -> Embedder | None:
    """The embedder to search a generation built by (`provider`, `model`) with, when the
    configuration now names another: while the worker builds the configured local model's
    generation, recall goes on searching the old one with the local model that built it, so
    switching local models costs no semantic recall. None for any other provider: its queries
    would go to a service no longer configured (recall is keyword-only until a reindex)."""
    if provider != "local":
        return None
    from graph.embedding import local_models
    from graph.embedding.local import local_embedder

    spec = local_models.find(model)
    if spec is None or spec.name != model:
        return None
    with _lock:
        if model not in _previous:
            _previous[model] = local_embedder(spec)
        return _previous[model]


def warm_up() -> None:
    """Warm the configured embedder (Embedder.warm_up); a failure is left for the first real
    call to report, where it has a caller to tell."""
    try:
        embedder = current()
        if embedder is not None:
            embedder.warm_up()
    except Exception:  # see the docstring
        logger.debug("embedder warm-up failed", exc_info=True)


def use_threads(threads: int) -> None:
    """Give this process's local embedder `threads` onnxruntime threads unless
    MEMESH_EMBEDDER_THREADS chose (0 leaves the default, min(2, CPUs)). Call it before the
    model loads: the worker (MEMESH_WORKER_EMBEDDER_THREADS) before its first task, a server
    process (MEMESH_SERVER_EMBEDDER_THREADS) before its warm-up."""
    if threads and not settings.MEMESH_EMBEDDER_THREADS:
        settings.MEMESH_EMBEDDER_THREADS = threads


def pace_local_embedder(pace: Callable[[], object]) -> None:
    """Have this process's local embedder call `pace` before each model call: the worker waits
    there for a quiet moment of the server's (core/request_activity.py). Call it before
    the embedder is built. Remote providers are not paced: their work is not on this CPU."""
    global _local_pace
    _local_pace = pace
