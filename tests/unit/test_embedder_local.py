"""The default embedder: all-MiniLM-L6-v2 int8 run locally by onnxruntime (no network)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import onnxruntime
import pytest

from graph.embedding import batching, local
from graph.embedding.local import LocalMiniLM

PARAPHRASES = [
    ("We sign session tokens with RS256", "how are auth tokens signed?"),
    ("The office coffee machine is on the third floor", "where is the caffeine dispenser?"),
    ("Dogs are allowed in the office on Fridays", "bringing animals to work"),
    ("The public API allows 100 requests per minute per client", "throttling on our endpoints"),
]


@pytest.fixture
def sessions(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Any]]:
    """Counts the ONNX sessions created (the expensive part of loading the model)."""
    created: list[Any] = []
    real = onnxruntime.InferenceSession

    def counting(*args: Any, **kwargs: Any) -> Any:
        session = real(*args, **kwargs)
        created.append(session)
        return session

    monkeypatch.setattr(onnxruntime, "InferenceSession", counting)
    yield created


def cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_vectors_are_384_wide_float32_and_unit_length(model: LocalMiniLM) -> None:
    out = model.embed(["a short memory", "another, somewhat longer memory about databases"])

    assert model.dimensions == 384
    assert out.shape == (2, 384)
    assert out.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-5)


def test_the_identity_names_the_local_model(model: LocalMiniLM) -> None:
    assert model.identity == "local/all-MiniLM-L6-v2-int8"


def test_embedding_is_deterministic_across_calls_and_instances(model: LocalMiniLM) -> None:
    texts = ["We sign session tokens with RS256", "Postgres backups run nightly"]

    first = model.embed(texts)
    again = model.embed(texts)
    other = LocalMiniLM().embed(texts)

    np.testing.assert_array_equal(first, again)
    np.testing.assert_allclose(first, other, atol=1e-6)


def test_a_batch_keeps_the_input_order(model: LocalMiniLM) -> None:
    # Lengths out of order and more word pieces than one inference call takes: the embedder
    # sorts by length and chunks internally, and must still answer row i for text i.
    texts = [
        f"memory {i}: " + " ".join(["word"] * ((i * 7) % 23)) + f" topic{i}" for i in range(41)
    ]
    assert sum(len(t.split()) for t in texts) > 3 * local.TOKEN_BUDGET

    batch = model.embed(texts)
    singles = np.stack([model.embed([t])[0] for t in texts])

    assert batch.shape == (len(texts), 384)
    for i in range(len(texts)):
        assert cos(batch[i], singles[i]) > 0.99, i
        # Its own single embedding is its nearest one among all of them.
        assert int(np.argmax(singles @ batch[i])) == i


def test_constructing_does_not_load_the_model(sessions: list[Any]) -> None:
    embedder = LocalMiniLM()

    assert embedder.dimensions == 384  # known without loading
    assert embedder.embed([]).shape == (0, 384)
    assert sessions == []

    embedder.embed(["now it loads"])
    embedder.embed(["and only once"])
    assert len(sessions) == 1


def test_paraphrases_are_closer_than_unrelated_pairs(model: LocalMiniLM) -> None:
    memories = model.embed([m for m, _ in PARAPHRASES])
    queries = model.embed([q for _, q in PARAPHRASES])

    for i, (memory, query) in enumerate(PARAPHRASES):
        related = cos(memories[i], queries[i])
        for j in range(len(PARAPHRASES)):
            if j != i:
                assert related > cos(memories[j], queries[i]) + 0.15, (query, memory)


def test_long_text_is_truncated_without_error(model: LocalMiniLM) -> None:
    head = " ".join(f"token{i}" for i in range(600))  # far past 256 word pieces
    long_text = head + " the ending is different"

    out = model.embed([long_text, head + " something else entirely at the end"])

    assert out.shape == (2, 384)
    assert np.isfinite(out).all()
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-5)
    # Past the cut, nothing more is read: two texts sharing the first 256 pieces are one.
    assert cos(out[0], out[1]) > 0.9999


def test_an_empty_list_gives_an_empty_array(model: LocalMiniLM) -> None:
    out = model.embed([])

    assert out.shape == (0, 384)
    assert out.dtype == np.float32


def test_a_paced_embedder_calls_its_pace_before_each_model_call(
    model: LocalMiniLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worker's embedder waits for a quiet moment of the server before every model call
    (core/request_activity.py); the vectors are those of the unpaced model."""
    texts = [" ".join(["memory"] * 90), " ".join(["index"] * 100), "short", "brief note"]
    events: list[str] = []
    paced = LocalMiniLM(pace=lambda: events.append("pace"))
    real_run = LocalMiniLM._run

    def run(self: LocalMiniLM, encoded: list[Any], with_pieces: bool, skip: int = 0) -> Any:
        events.append("run")
        return real_run(self, encoded, with_pieces, skip)

    monkeypatch.setattr(LocalMiniLM, "_run", run)
    out = paced.embed(texts)
    # Two long texts alone (over half the token budget each), the two short ones together.
    assert events == ["pace", "run"] * 3
    np.testing.assert_allclose(out, model.embed(texts), atol=1e-6)


def test_an_idle_paced_embedder_measures_larger_calls_and_a_busy_one_keeps_them_small(
    model: LocalMiniLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pace that answers how long the server has been quiet: under a second, every call
    holds at most TOKEN_BUDGET word pieces; idle, the embedder tries the large budget too
    (graph/embedding/batching.py) and the vectors stay those of the unpaced model."""
    texts = [f"note {n} about the retry queue and its backoff" for n in range(40)]
    sizes: list[int] = []
    real_run = LocalMiniLM._run

    def run(self: LocalMiniLM, encoded: list[Any], with_pieces: bool, skip: int = 0) -> Any:
        sizes.append(len(encoded) * max(len(e.ids) for e in encoded))
        return real_run(self, encoded, with_pieces, skip)

    monkeypatch.setattr(LocalMiniLM, "_run", run)
    busy = LocalMiniLM(pace=lambda: 0.2)
    busy.embed(texts)
    assert max(sizes) <= local.TOKEN_BUDGET
    assert busy._budget.samples == {batching.SMALL_BUDGET: 0, batching.LARGE_BUDGET: 0}

    sizes.clear()
    idle = LocalMiniLM(pace=lambda: 30.0)
    out = idle.embed(texts)
    assert max(sizes) > local.TOKEN_BUDGET
    assert all(size <= batching.LARGE_BUDGET for size in sizes)
    assert sum(idle._budget.samples.values()) == len(sizes)  # every idle call was measured
    expected = model.embed(texts)
    # Padding rows change onnxruntime's int8 activation scales a little, nothing more.
    assert np.min(np.sum(out * expected, axis=1)) > 0.999

    # The worker asks for pieces too (late interaction): every text gets its own, whatever
    # the calls measured meanwhile.
    sizes.clear()
    with_pieces, pieces = LocalMiniLM(pace=lambda: 30.0).embed_with_pieces(texts)
    assert len(sizes) > 1
    np.testing.assert_allclose(with_pieces, out, atol=1e-6)
    assert all(len(blob) > 0 for blob in pieces)


def test_the_provider_paces_the_local_embedder_it_builds(monkeypatch: pytest.MonkeyPatch) -> None:
    from graph.embedding import provider
    from graph.embedding.base import EmbedderConfig

    calls: list[int] = []
    monkeypatch.setattr(provider, "_local_pace", None)
    provider.pace_local_embedder(lambda: calls.append(1))
    built = provider.build(EmbedderConfig(provider="local"))
    assert isinstance(built, LocalMiniLM)
    built.embed(["one memory"])
    assert calls == [1]
