"""Late interaction (graph/search/late_interaction.py): what a memory's pieces keep, how MaxSim
scores them, and when the hybrid ranking's head is re-ordered."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from graph.embedding.local import LocalMiniLM
from graph.search import late_interaction as li


@pytest.fixture(scope="module")
def model() -> LocalMiniLM:
    return LocalMiniLM()


def unit_rows(rng: np.random.Generator, n: int, width: int = 384) -> np.ndarray:
    rows = rng.standard_normal((n, width)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_the_projection_is_fixed_so_stored_pieces_stay_comparable() -> None:
    # Pieces already stored were packed with this matrix: a change needs a migration that
    # re-embeds, and must never happen by accident (a numpy upgrade, another machine).
    matrix = li._projection(384)
    assert matrix.shape == (384, li.DIMS)
    assert set(np.unique(matrix)) == {-1.0, 1.0}
    digest = hashlib.sha256(matrix.astype(np.int8).tobytes()).hexdigest()
    assert digest[:16] == "e904be0f85dd28c5"


def test_packing_keeps_the_cosines_that_rank() -> None:
    rng = np.random.default_rng(7)
    states = unit_rows(rng, 40)
    unpacked = li.unpack(li.pack(states))

    assert len(li.pack(states)) == 40 * li.DIMS  # one int8 row of DIMS a piece
    assert unpacked.shape == (40, li.DIMS)
    np.testing.assert_allclose(np.linalg.norm(unpacked, axis=1), 1.0, atol=1e-5)
    # A near-duplicate of a piece stays its nearest after packing.
    twin = states[3] + 0.1 * unit_rows(rng, 1)[0]
    query = li.unpack(li.pack(twin[None, :] / np.linalg.norm(twin)))
    assert int(np.argmax(unpacked @ query[0])) == 3


def test_an_empty_text_packs_to_nothing_and_scores_zero() -> None:
    assert li.pack(np.zeros((0, 384), dtype=np.float32)) == b""
    assert li.unpack(b"").shape == (0, li.DIMS)
    assert li.maxsim(li.unpack(b""), li.unpack(b"")) == 0.0


def test_maxsim_is_the_mean_of_each_query_piece_s_best_match() -> None:
    q = np.array([[1.0, 0.0], [0.0, 1.0]], dtype=np.float32)
    d = np.array([[1.0, 0.0], [0.6, 0.8]], dtype=np.float32)
    assert li.maxsim(q, d) == pytest.approx((1.0 + 0.8) / 2)


def test_content_pieces_skip_special_tokens_punctuation_and_function_words() -> None:
    pieces = ["[CLS]", "the", "walrus", "##es", "keep", "their", "tusks", ".", "[SEP]"]
    kept = [pieces[i] for i in li.content_positions(pieces)]
    assert kept == ["walrus", "##es", "keep", "tusks"]


def test_a_text_keeps_at_most_max_pieces() -> None:
    pieces = ["[CLS]", *[f"w{i}" for i in range(300)], "[SEP]"]
    assert len(li.content_positions(pieces)) == li.MAX_PIECES


# A question and three memories: one answers it, two share none of its content words.
QUESTION = "When did Melanie take her kids to pottery?"
POTTERY = "Melanie went to the pottery class with her kids on Saturday"
GUITAR = "Caroline bought a new guitar for her band"
SINK = "The kitchen sink was fixed by the plumber"


def _pieces(model: LocalMiniLM, texts: dict[int, str]) -> dict[int, bytes]:
    _, packed = model.embed_with_pieces(list(texts.values()))
    return dict(zip(texts, packed, strict=True))


def test_the_head_is_reordered_towards_the_memory_whose_words_answer_the_query(
    model: LocalMiniLM,
) -> None:
    texts = {1: GUITAR, 2: POTTERY, 3: SINK}
    _, (query,) = model.embed_with_pieces([QUESTION])
    pieces = _pieces(model, texts)

    reordered = li.reorder([1, 3, 2], pieces, query, {})

    assert reordered[0] == 2
    assert sorted(reordered) == [1, 2, 3]


def test_only_the_first_depth_memories_move(model: LocalMiniLM) -> None:
    ranked = list(range(1, li.DEPTH + 6))
    texts = {i: f"note number {i} about ordinary things" for i in ranked}
    texts[ranked[-1]] = "Melanie went to the pottery class with her kids"
    _, (query,) = model.embed_with_pieces(["Melanie pottery kids"])

    reordered = li.reorder(ranked, _pieces(model, texts), query, {})

    assert sorted(reordered[: li.DEPTH]) == ranked[: li.DEPTH]
    assert reordered[li.DEPTH :] == ranked[li.DEPTH :]


def test_the_order_is_left_alone_when_a_head_memory_or_the_query_has_no_pieces(
    model: LocalMiniLM,
) -> None:
    texts = {1: "Caroline bought a guitar", 2: "Melanie went to pottery class with her kids"}
    pieces = _pieces(model, texts)
    _, (query,) = model.embed_with_pieces(["Melanie pottery"])

    assert li.reorder([1, 2], pieces, query, {})[0] == 2  # the control: it does move
    assert li.reorder([1, 2], {1: pieces[1]}, query, {}) == [1, 2]  # 2's vector still pending
    assert li.reorder([1, 2], {**pieces, 2: b""}, query, {}) == [1, 2]
    assert li.reorder([1, 2], pieces, b"", {}) == [1, 2]  # a query of function words only
    assert li.reorder([1], pieces, query, {}) == [1]


def test_a_memory_holding_much_more_of_the_query_keeps_its_place_above_another(
    model: LocalMiniLM,
) -> None:
    texts = {1: "Caroline bought a guitar", 2: "Melanie went to pottery class with her kids"}
    pieces = _pieces(model, texts)
    _, (query,) = model.embed_with_pieces(["Melanie pottery"])
    ahead = 0.2 + li.COVERAGE_MARGIN

    assert li.reorder([1, 2], pieces, query, {1: ahead + 0.01, 2: 0.2}) == [1, 2]
    # Within the margin, late interaction breaks the near-tie as before.
    assert li.reorder([1, 2], pieces, query, {1: ahead - 0.01, 2: 0.2})[0] == 2
    # The guard keeps a ranking's order; it does not lift the better-covered memory.
    assert li.reorder([2, 1], pieces, query, {1: 1.0, 2: 0.0}) == [2, 1]


def test_the_guard_holds_for_every_pair_in_the_head(model: LocalMiniLM) -> None:
    texts = {1: SINK, 2: GUITAR, 3: POTTERY}
    _, (query,) = model.embed_with_pieces([QUESTION])
    pieces = _pieces(model, texts)
    assert li.reorder([1, 2, 3], pieces, query, {})[0] == 3  # the control

    # 2 out-covers 3 by more than the margin: 3 may pass 1, never 2.
    reordered = li.reorder([1, 2, 3], pieces, query, {1: 0.5, 2: 0.9, 3: 0.3})
    assert reordered.index(2) < reordered.index(3)


def test_the_local_model_gives_pieces_from_the_same_call_as_its_vectors(
    model: LocalMiniLM,
) -> None:
    texts = ["the walrus keeps its tusks clean", "what is it", "a short note"]
    vectors, pieces = model.embed_with_pieces(texts)

    np.testing.assert_array_equal(vectors, model.embed(texts))
    # [CLS] the wal ##rus keeps its tu ##sk ##s clean [SEP]: seven pieces carry content.
    assert len(pieces[0]) == 7 * li.DIMS
    assert pieces[1] == b""  # function words only: nothing to match
    assert model.late_interaction
