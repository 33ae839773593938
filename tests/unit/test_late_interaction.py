"""Late interaction (graph/search/late_interaction.py): what a memory's pieces keep, how MaxSim
scores them, and when the hybrid ranking's head is re-ordered."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from graph.embedding.local import LocalMiniLM
from graph.search import late_interaction as li
from graph.search.fusion import Fused


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


def _packed(*rows: list[float]) -> bytes:
    """Pieces given directly in the stored space (DIMS wide, zero-padded), packed as stored."""
    raw = np.zeros((len(rows), li.DIMS), dtype=np.float32)
    for i, row in enumerate(rows):
        raw[i, : len(row)] = row
    peak = np.abs(raw).max(axis=1, keepdims=True)
    return np.rint(raw / peak * 127.0).astype(np.int8).tobytes()


def test_an_empty_text_packs_to_nothing_and_is_not_scored() -> None:
    assert li.pack(np.zeros((0, 384), dtype=np.float32)) == b""
    assert li.unpack(b"").shape == (0, li.DIMS)
    query = _packed([1.0, 0.0])
    assert li.scores(query, {1: b"", 2: _packed([1.0, 0.0])}) == {2: pytest.approx(1.0)}
    assert li.scores(b"", {2: _packed([1.0, 0.0])}) == {}


def test_maxsim_is_the_mean_of_each_query_piece_s_best_match() -> None:
    query = _packed([1.0, 0.0], [0.0, 1.0])
    memories = {
        7: _packed([1.0, 0.0], [0.6, 0.8]),  # best cosines 1.0 and 0.8
        8: _packed([0.0, 1.0]),  # 0.0 and 1.0
        9: _packed([0.6, 0.8], [0.8, 0.6], [-1.0, 0.0]),  # 0.8 and 0.8
    }
    found = li.scores(query, memories)
    assert found == {
        7: pytest.approx(0.9, abs=0.01),
        8: pytest.approx(0.5, abs=0.01),
        9: pytest.approx(0.8, abs=0.01),
    }


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


def test_known_maxsims_are_used_not_computed_again(model: LocalMiniLM) -> None:
    texts = {1: "Caroline bought a guitar", 2: "Melanie went to pottery class with her kids"}
    pieces = _pieces(model, texts)
    _, (query,) = model.embed_with_pieces(["Melanie pottery"])
    assert li.reorder([1, 2], pieces, query, {})[0] == 2  # the control

    # Told that 1 answers far better, the re-order follows what it is told.
    assert li.reorder([1, 2], pieces, query, {}, known={1: 0.9, 2: 0.1}) == [1, 2]
    # A partial answer: the rest is computed (2's own MaxSim beats the 0.0 given for 1).
    assert li.reorder([1, 2], pieces, query, {}, known={1: 0.0})[0] == 2


def _fused(*relevances: float) -> list[Fused]:
    return [Fused(i, r, "keyword", r) for i, r in enumerate(relevances, start=1)]


def test_the_lift_raises_the_head_by_its_maxsim_among_it(model: LocalMiniLM) -> None:
    texts = {1: SINK, 2: GUITAR, 3: POTTERY}
    pieces = _pieces(model, texts)
    _, (query,) = model.embed_with_pieces([QUESTION])

    lifted, found = li.lift_order(_fused(0.9, 0.8, 0.7), pieces, query, best_coverage=1.0)

    gained = {f.entity_id: f.relevance - r for f, r in zip(lifted, (0.9, 0.8, 0.7), strict=True)}
    assert found == li.scores(query, pieces)
    best, worst = max(found, key=found.__getitem__), min(found, key=found.__getitem__)
    assert best == 3  # the pottery memory answers the pottery question
    assert gained[best] == pytest.approx(li.LIFT_WEIGHT)
    assert gained[worst] == pytest.approx(0.0)
    assert all(0.0 <= g <= li.LIFT_WEIGHT + 1e-9 for g in gained.values())
    assert lifted[2].relevance > lifted[0].relevance  # 0.7 + the lift passes 0.9 + less
    assert [(f.entity_id, f.source, f.reported) for f in lifted] == [
        (f.entity_id, f.source, f.reported) for f in _fused(0.9, 0.8, 0.7)
    ]


def test_only_the_lift_depth_most_relevant_are_lifted(model: LocalMiniLM) -> None:
    n = li.LIFT_DEPTH + 3
    texts = {i: f"note number {i} about ordinary things" for i in range(1, n + 1)}
    texts[n] = POTTERY  # the least relevant: below the head
    pieces = _pieces(model, texts)
    _, (query,) = model.embed_with_pieces([QUESTION])
    fused = _fused(*(1.0 - i / 100 for i in range(n)))

    lifted, found = li.lift_order(fused, pieces, query, best_coverage=1.0)

    assert set(found) == set(range(1, li.LIFT_DEPTH + 1))
    assert lifted[li.LIFT_DEPTH :] == fused[li.LIFT_DEPTH :]
    assert li.head_of(fused) == list(range(1, li.LIFT_DEPTH + 1))


def test_the_lift_leaves_a_paraphrase_and_a_pending_vector_alone(model: LocalMiniLM) -> None:
    texts = {1: SINK, 2: GUITAR, 3: POTTERY}
    pieces = _pieces(model, texts)
    _, (query,) = model.embed_with_pieces([QUESTION])
    fused = _fused(0.9, 0.8, 0.7)
    assert li.lift_order(fused, pieces, query, best_coverage=1.0)[0] != fused  # the control

    # The keyword side found less than LIFT_MIN_COVERAGE of the query: vectors decide.
    below = li.LIFT_MIN_COVERAGE - 0.01
    assert li.lift_order(fused, pieces, query, best_coverage=below) == (fused, {})
    # 3's vector (and pieces) are still being computed.
    assert li.lift_order(fused, {1: pieces[1], 2: pieces[2]}, query, 1.0) == (fused, {})
    assert li.lift_order(fused, pieces, b"", 1.0) == (fused, {})  # function words only
