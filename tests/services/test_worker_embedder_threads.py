"""The background worker's local embedder runs on MEMESH_WORKER_EMBEDDER_THREADS onnxruntime
threads when that is set and MEMESH_EMBEDDER_THREADS is not
(api/cli/installation/management/commands/worker.py): with 1, a worker beside the server on a small
machine leaves a core to the requests. A server process's runs on MEMESH_SERVER_EMBEDDER_THREADS
(default 1), set before its warm-up."""

from __future__ import annotations

import pytest
from django.conf import settings

from graph.embedding.local import LocalMiniLM
from graph.embedding.provider import use_threads as use_embedder_threads


def test_the_worker_embeds_on_its_own_thread_count_when_none_is_configured(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(settings, "MEMESH_EMBEDDER_THREADS", 0)

    use_embedder_threads(1)

    assert LocalMiniLM()._threads == 1


def test_a_configured_thread_count_wins_over_the_worker_default(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(settings, "MEMESH_EMBEDDER_THREADS", 3)

    use_embedder_threads(1)

    assert LocalMiniLM()._threads == 3


def test_zero_leaves_the_server_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(settings, "MEMESH_EMBEDDER_THREADS", 0)

    use_embedder_threads(0)

    # 0: onnxruntime gets min(2, CPUs), as in the server (graph/embedding/local.py).
    assert LocalMiniLM()._threads == 0


def test_a_server_process_embeds_on_the_server_thread_count(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from graph.embedding import provider
    from memesh_site import asgi

    monkeypatch.setattr(settings, "MEMESH_EMBEDDER_THREADS", 0)
    monkeypatch.setattr(provider, "warm_up", lambda: None)  # the model itself is not needed

    asgi._warm_up_in_background()

    assert settings.MEMESH_SERVER_EMBEDDER_THREADS == 1  # the default
    assert LocalMiniLM()._threads == 1
