"""The Ollama and OpenAI embedders against a real HTTP server on loopback (no mocked httpx)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from email.utils import formatdate

import httpx
import numpy as np
import pytest

from graph.embedding.base import EmbedderConfig, EmbedderError, normalise_rows
from graph.embedding.remote import OllamaEmbedder, OpenAIEmbedder, parse_retry_after
from tests.fakes.embedding_server import FakeEmbeddingServer, Reply
from tests.processes import free_port

KEY = "sk-test-5f1e2d3c4b5a69788796a5b4c3d2e1f0"


class Waits:
    """Stands in for time.sleep: records the waits instead of spending them."""

    def __init__(self) -> None:
        self.calls: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


@pytest.fixture
def waits() -> Waits:
    return Waits()


@pytest.fixture
def closing() -> Iterator[list[OllamaEmbedder | OpenAIEmbedder]]:
    made: list[OllamaEmbedder | OpenAIEmbedder] = []
    yield made
    for embedder in made:
        embedder.close()


@pytest.fixture
def ollama(embedding_server: FakeEmbeddingServer, waits: Waits, closing: list) -> OllamaEmbedder:
    embedder = OllamaEmbedder(EmbedderConfig("ollama", base_url=embedding_server.url), sleep=waits)
    closing.append(embedder)
    return embedder


def make_openai(
    server: FakeEmbeddingServer, closing: list, waits: Waits | None = None, **config: object
) -> OpenAIEmbedder:
    settings: dict = {"model": "fake-embed", "base_url": server.base_url_openai, **config}
    embedder = OpenAIEmbedder(EmbedderConfig("openai", **settings), sleep=waits)
    closing.append(embedder)
    return embedder


def expected(server: FakeEmbeddingServer, texts: list[str], width: int | None = None):
    return normalise_rows(np.array([server.vector_for(t, width) for t in texts]))


def raises(embedder: OllamaEmbedder | OpenAIEmbedder, texts: list[str]) -> EmbedderError:
    with pytest.raises(EmbedderError) as caught:
        embedder.embed(texts)
    return caught.value


# -- happy paths --------------------------------------------------------------------------------


def test_ollama_embeds_unit_vectors_deterministically(
    embedding_server: FakeEmbeddingServer, ollama: OllamaEmbedder
) -> None:
    texts = ["alpha", "beta", "gamma"]
    assert ollama.model == "nomic-embed-text" and ollama.dimensions is None

    vectors = ollama.embed(texts)

    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)
    np.testing.assert_allclose(vectors, expected(embedding_server, texts), atol=1e-6)
    np.testing.assert_array_equal(ollama.embed(["beta"])[0], vectors[1])
    assert ollama.dimensions == 384  # learnt from the first reply
    request = embedding_server.requests[0]
    assert request.path == "/api/embed"
    assert request.body == {"model": "nomic-embed-text", "input": texts}


def test_openai_embeds_with_the_bearer_key(
    embedding_server: FakeEmbeddingServer, closing: list, waits: Waits
) -> None:
    embedding_server.api_key = KEY
    embedder = make_openai(embedding_server, closing, waits, api_key=KEY)
    assert embedder.dimensions is None  # an unknown model: learnt

    vectors = embedder.embed(["one", "two"])

    assert vectors.shape == (2, 384) and vectors.dtype == np.float32
    np.testing.assert_allclose(vectors, expected(embedding_server, ["one", "two"]), atol=1e-6)
    np.testing.assert_array_equal(embedder.embed(["one", "two"]), vectors)
    assert embedder.dimensions == 384
    request = embedding_server.requests[0]
    assert request.path == "/v1/embeddings"
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert request.body == {
        "model": "fake-embed",
        "input": ["one", "two"],
        "encoding_format": "float",
    }


@pytest.mark.parametrize(
    ("model", "width"),
    [
        ("", 1536),  # the default, text-embedding-3-small
        ("text-embedding-3-large", 3072),
        ("text-embedding-ada-002", 1536),
        ("some-compatible-model", None),
    ],
)
def test_openai_known_models_know_their_width_before_any_call(
    model: str, width: int | None
) -> None:
    with OpenAIEmbedder(EmbedderConfig("openai", model=model)) as embedder:
        assert embedder.dimensions == width
        assert embedder.base_url == "https://api.openai.com/v1"
    with OllamaEmbedder(EmbedderConfig("ollama", base_url="http://gpu-box:11434/")) as embedder:
        assert embedder.base_url == "http://gpu-box:11434"


def test_openai_default_model_at_its_known_width(
    embedding_server: FakeEmbeddingServer, closing: list
) -> None:
    embedding_server.width = 1536
    embedder = make_openai(embedding_server, closing, model="")
    assert embedder.model == "text-embedding-3-small"
    assert embedder.embed(["x"]).shape == (1, 1536)
    assert embedding_server.requests[0].model == "text-embedding-3-small"


def test_ollama_batches_32_and_keeps_order(
    embedding_server: FakeEmbeddingServer, ollama: OllamaEmbedder
) -> None:
    texts = [f"text number {i}" for i in range(70)]
    vectors = ollama.embed(texts)
    assert [len(r.texts) for r in embedding_server.requests] == [32, 32, 6]
    assert embedding_server.texts_sent() == texts
    np.testing.assert_allclose(vectors, expected(embedding_server, texts), atol=1e-6)


def test_openai_batches_64_and_sorts_by_index(
    embedding_server: FakeEmbeddingServer, closing: list
) -> None:
    embedding_server.reorder = True  # data comes back reversed; the index decides
    embedder = make_openai(embedding_server, closing)
    texts = [f"text number {i}" for i in range(130)]
    vectors = embedder.embed(texts)
    assert [len(r.texts) for r in embedding_server.requests] == [64, 64, 2]
    np.testing.assert_allclose(vectors, expected(embedding_server, texts), atol=1e-6)


def test_dimensions_is_sent_only_when_configured(
    embedding_server: FakeEmbeddingServer, closing: list
) -> None:
    make_openai(embedding_server, closing).embed(["a"])
    assert "dimensions" not in embedding_server.requests[-1].body

    sized = make_openai(embedding_server, closing, dimensions=256)
    assert sized.dimensions == 256
    assert sized.embed(["a"]).shape == (1, 256)
    assert embedding_server.requests[-1].body["dimensions"] == 256


def test_embedding_nothing_makes_no_request(
    embedding_server: FakeEmbeddingServer, ollama: OllamaEmbedder, closing: list
) -> None:
    assert ollama.embed([]).shape == (0, 0)
    assert make_openai(embedding_server, closing, dimensions=8).embed([]).shape == (0, 8)
    assert embedding_server.requests == []


def test_one_embedder_serves_many_threads(
    embedding_server: FakeEmbeddingServer, ollama: OllamaEmbedder
) -> None:
    results: dict[int, np.ndarray] = {}

    def work(n: int) -> None:
        results[n] = ollama.embed([f"thread {n} text {i}" for i in range(40)])

    threads = [threading.Thread(target=work, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for n in range(6):
        texts = [f"thread {n} text {i}" for i in range(40)]
        np.testing.assert_allclose(results[n], expected(embedding_server, texts), atol=1e-6)


# -- weather: retried -----------------------------------------------------------------------------


def test_429_waits_the_servers_retry_after_then_succeeds(
    embedding_server: FakeEmbeddingServer, closing: list, waits: Waits
) -> None:
    embedder = make_openai(embedding_server, closing, waits)
    embedding_server.script.append(Reply(status=429, headers={"Retry-After": "1"}))

    vectors = embedder.embed(["patience"])

    assert vectors.shape == (1, 384)
    assert len(embedding_server.requests) == 2
    assert waits.calls == [1.0]  # the server's Retry-After, once, between the two requests
    # Unless a caller injects one, the wait is a real sleep.
    assert make_openai(embedding_server, closing).sleep is time.sleep


def test_retry_after_as_an_http_date_and_the_cap(
    embedding_server: FakeEmbeddingServer, ollama: OllamaEmbedder, waits: Waits
) -> None:
    now = 1_700_000_000.0
    assert parse_retry_after(formatdate(now + 7, usegmt=True), now=now) == pytest.approx(7.0)
    assert parse_retry_after(formatdate(now - 7, usegmt=True), now=now) == 0.0
    assert parse_retry_after("2.5") == 2.5
    assert parse_retry_after("soon") is None and parse_retry_after(None) is None

    embedding_server.script.extend(
        [
            Reply(status=503, headers={"Retry-After": "3600"}),
            Reply(status=429, headers={"Retry-After": formatdate(time.time() + 3, usegmt=True)}),
        ]
    )
    ollama.embed(["x"])
    assert waits.calls[0] == 60.0
    assert 1.0 < waits.calls[1] <= 3.0


def test_500_twice_then_success_backs_off(
    embedding_server: FakeEmbeddingServer, ollama: OllamaEmbedder, waits: Waits
) -> None:
    embedding_server.script = [Reply(status=500), Reply(status=502)]
    assert ollama.embed(["x"]).shape == (1, 384)
    assert len(embedding_server.requests) == 3
    assert waits.calls == [0.5, 1.0]


def test_500_three_times_is_a_server_error(
    embedding_server: FakeEmbeddingServer, ollama: OllamaEmbedder, waits: Waits
) -> None:
    embedding_server.script = [Reply(status=500)] * 3
    error = raises(ollama, ["x"])
    assert (error.kind, error.status) == ("server", 500)
    assert len(embedding_server.requests) == 3 and waits.calls == [0.5, 1.0]
    assert "500" in str(error) and "/api/embed" in str(error)


def test_429_three_times_is_rate_limited(
    embedding_server: FakeEmbeddingServer, closing: list, waits: Waits
) -> None:
    embedding_server.fail_always = Reply(status=429, body="slow down")
    error = raises(make_openai(embedding_server, closing, waits), ["x"])
    assert (error.kind, error.status) == ("rate_limited", 429)
    assert len(embedding_server.requests) == 3 and "slow down" in str(error)

    embedding_server.fail_always = None  # cleared: the provider is healthy again
    assert make_openai(embedding_server, closing, waits).embed(["x"]).shape == (1, 384)


def test_a_hang_past_the_timeout_is_a_timeout(
    embedding_server: FakeEmbeddingServer, closing: list
) -> None:
    waits = Waits()
    embedder = OllamaEmbedder(
        EmbedderConfig("ollama", base_url=embedding_server.url, timeout=0.5), sleep=waits
    )
    closing.append(embedder)
    # Each reply comes after 1 s: only a client that gives up at 0.5 s sees a timeout (one
    # that waited would get the reply and succeed), on each of the three attempts.
    embedding_server.script = [Reply(hang=1.0)] * 3

    error = raises(embedder, ["x"])

    assert error.kind == "timeout" and error.status is None
    assert len(embedding_server.requests) == 3
    assert "/api/embed" in str(error)


def test_one_slow_reply_then_success(embedding_server: FakeEmbeddingServer, closing: list) -> None:
    embedder = make_openai(embedding_server, closing, Waits(), timeout=0.5)
    embedding_server.script.append(Reply(hang=1.0))
    assert embedder.embed(["x"]).shape == (1, 384)
    assert len(embedding_server.requests) == 2


def test_connection_refused_is_a_network_error(closing: list) -> None:
    waits = Waits()
    embedder = OllamaEmbedder(
        EmbedderConfig("ollama", base_url=f"http://127.0.0.1:{free_port()}"), sleep=waits
    )
    closing.append(embedder)
    error = raises(embedder, ["x"])
    assert error.kind == "network" and error.status is None
    assert waits.calls == [0.5, 1.0]  # three attempts


def test_a_dropped_connection_is_retried(
    embedding_server: FakeEmbeddingServer, ollama: OllamaEmbedder
) -> None:
    embedding_server.script.append(Reply(drop=True))
    assert ollama.embed(["x"]).shape == (1, 384)
    assert len(embedding_server.requests) == 2


# -- configuration: not retried -------------------------------------------------------------------


def test_401_is_auth_after_one_request(
    embedding_server: FakeEmbeddingServer, closing: list, waits: Waits
) -> None:
    embedding_server.api_key = "sk-the-right-one"
    error = raises(make_openai(embedding_server, closing, waits, api_key=KEY), ["x"])
    assert (error.kind, error.status) == ("auth", 401)
    assert len(embedding_server.requests) == 1 and waits.calls == []
    assert "401" in str(error) and "/v1/embeddings" in str(error)


def test_403_is_auth(embedding_server: FakeEmbeddingServer, ollama: OllamaEmbedder) -> None:
    embedding_server.script.append(Reply(status=403))
    error = raises(ollama, ["x"])
    assert (error.kind, error.status) == ("auth", 403)
    assert len(embedding_server.requests) == 1


def test_404_is_not_found_after_one_request(
    embedding_server: FakeEmbeddingServer, ollama: OllamaEmbedder, closing: list
) -> None:
    embedding_server.models = ["all-minilm"]  # nomic-embed-text was never pulled
    error = raises(ollama, ["x"])
    assert (error.kind, error.status) == ("not_found", 404)
    assert len(embedding_server.requests) == 1 and "try pulling it" in str(error)

    # An OpenAI base URL without its /v1 reaches no endpoint at all.
    wrong = make_openai(embedding_server, closing, base_url=embedding_server.url)
    assert raises(wrong, ["x"]).kind == "not_found"


def test_other_4xx_is_a_bad_request(embedding_server: FakeEmbeddingServer, closing: list) -> None:
    embedding_server.script = [Reply(status=400, json={"error": {"message": "input too long"}})]
    error = raises(make_openai(embedding_server, closing), ["x"])
    assert (error.kind, error.status) == ("bad_request", 400)
    assert len(embedding_server.requests) == 1 and "input too long" in str(error)


def test_a_base_url_without_a_scheme_is_not_retried(closing: list) -> None:
    waits = Waits()
    embedder = OllamaEmbedder(EmbedderConfig("ollama", base_url="127.0.0.1:11434"), sleep=waits)
    closing.append(embedder)
    assert raises(embedder, ["x"]).kind == "bad_request"
    assert waits.calls == []


# -- replies that are not the format ---------------------------------------------------------------


@pytest.mark.parametrize(
    "reply",
    [
        Reply(body=b"not json"),
        Reply(body=b"[" * 50_000 + b"]" * 50_000),
        Reply(json={"unexpected": True}),
        Reply(json=[1, 2]),
        Reply(json={"embeddings": [[0.1, 0.2]]}),  # one vector for two texts
        Reply(json={"embeddings": [[0.1, "x"], [0.3, 0.4]]}),
        Reply(json={"embeddings": [[0.1, 0.2], [0.3]]}),
        Reply(json={"embeddings": [[], []]}),
    ],
    ids=[
        "not-json",
        "too-deep",
        "no-field",
        "not-object",
        "count",
        "non-numeric",
        "ragged",
        "empty",
    ],
)
def test_malformed_ollama_replies_are_bad_responses(
    embedding_server: FakeEmbeddingServer, ollama: OllamaEmbedder, reply: Reply
) -> None:
    embedding_server.script.append(reply)
    error = raises(ollama, ["a", "b"])
    assert error.kind == "bad_response" and "/api/embed" in str(error)
    assert len(embedding_server.requests) == 1


@pytest.mark.parametrize(
    "data",
    [
        [{"index": 0, "embedding": [0.1, 0.2]}],  # one vector for two texts
        [{"index": 0, "embedding": [0.1, 0.2]}, {"index": 0, "embedding": [0.3, 0.4]}],
        [{"index": 0, "embedding": [0.1, 0.2]}, {"embedding": [0.3, 0.4]}],
        [{"index": 0, "embedding": [0.1, 0.2]}, {"index": 1}],
        [{"index": 0, "embedding": [0.1, 0.2]}, {"index": 1, "embedding": [True, 0.4]}],
    ],
    ids=["count", "duplicate-index", "no-index", "no-embedding", "boolean"],
)
def test_malformed_openai_replies_are_bad_responses(
    embedding_server: FakeEmbeddingServer, closing: list, data: list
) -> None:
    embedding_server.script.append(Reply(json={"data": data}))
    error = raises(make_openai(embedding_server, closing), ["a", "b"])
    assert error.kind == "bad_response" and len(embedding_server.requests) == 1


def test_a_width_change_mid_life_is_a_bad_response(
    embedding_server: FakeEmbeddingServer, ollama: OllamaEmbedder
) -> None:
    ollama.embed(["a"])
    embedding_server.width = 512
    error = raises(ollama, ["b"])
    assert error.kind == "bad_response" and "512" in str(error) and "384" in str(error)
    assert ollama.dimensions == 384


def test_a_configured_width_is_enforced_from_the_first_reply(
    embedding_server: FakeEmbeddingServer, closing: list
) -> None:
    embedder = OllamaEmbedder(
        EmbedderConfig("ollama", base_url=embedding_server.url, dimensions=768)
    )
    closing.append(embedder)
    assert raises(embedder, ["a"]).kind == "bad_response"
    embedding_server.width = 768
    assert embedder.embed(["a"]).shape == (1, 768)


# -- the key stays secret --------------------------------------------------------------------------


def test_the_api_key_never_appears_in_an_error(
    embedding_server: FakeEmbeddingServer, closing: list, waits: Waits
) -> None:
    embedding_server.api_key = "sk-something-else"
    embedder = make_openai(embedding_server, closing, waits, api_key=KEY)
    messages = [str(raises(embedder, ["x"]))]  # the fake's 401 echoes the presented key
    assert "Incorrect API key provided" in messages[0]

    embedding_server.api_key = None
    echoes = [
        Reply(status=400, body=f"bad request from Authorization: Bearer {KEY}"),
        Reply(status=500, body=f"{'x' * 190}{KEY}"),  # the key straddles the truncation
        Reply(body=f"<html>{KEY}</html>"),
    ]
    for echo in echoes:
        embedding_server.fail_always = echo
        messages.append(str(raises(embedder, ["x"])))
    for message in messages:
        assert KEY not in message and KEY[:12] not in message
    assert "[redacted]" in messages[0] and "[redacted]" in messages[1]


# -- the fake's other endpoints --------------------------------------------------------------------


def test_the_fake_lists_models_behind_the_key(embedding_server: FakeEmbeddingServer) -> None:
    embedding_server.api_key = KEY
    embedding_server.models = ["fake-embed", "fake-embed-large"]
    with httpx.Client() as client:
        assert client.get(embedding_server.base_url_openai + "/models").status_code == 401
        listed = client.get(
            embedding_server.base_url_openai + "/models", headers={"Authorization": f"Bearer {KEY}"}
        ).json()
    assert [m["id"] for m in listed["data"]] == ["fake-embed", "fake-embed-large"]
    assert embedding_server.requests == []  # listing models is not an embedding request


def test_the_fake_semantic_mode_brings_shared_words_together(
    embedding_server: FakeEmbeddingServer,
) -> None:
    embedding_server.semantic = True
    a, b, c = expected(
        embedding_server, ["sqlite vector index", "the sqlite vector", "banana bread"]
    )
    assert float(a @ b) > 0.5 > abs(float(a @ c))
