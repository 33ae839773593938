"""`[mem:<id>]` handles (graph/search/citations.py): the one parser every citing path uses."""

from __future__ import annotations

from graph.search.citations import MAX_ID_DIGITS, cited_ids, handle


def test_a_handle_is_the_id_after_mem_in_brackets() -> None:
    assert handle(42) == "[mem:42]"
    assert cited_ids(handle(42)) == [42]


def test_ids_are_distinct_in_order_of_first_citation() -> None:
    assert cited_ids("[mem:7] then [mem:3], again [mem:7] and [MEM:5]") == [7, 3, 5]


def test_prose_and_malformed_handles_cite_nothing() -> None:
    text = "[mem: the auth note] [mem:] mem:4 [mem:4a] [mem:-4] [mem 4] (mem:4) [memo:4]"
    assert cited_ids(text) == []


def test_an_id_too_long_to_be_stored_is_ignored() -> None:
    assert cited_ids(f"[mem:{'9' * (MAX_ID_DIGITS + 1)}] [mem:{'9' * MAX_ID_DIGITS}]") == [
        int("9" * MAX_ID_DIGITS)
    ]


def test_at_most_limit_distinct_ids_are_read() -> None:
    text = " ".join(handle(i) for i in range(1, 50))
    assert cited_ids(text, limit=3) == [1, 2, 3]
