"""The one bounded JSON decoding path (core/json_limits.py): its depth count without
parsing, the limit at MAX_JSON_DEPTH, and NaN refused."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import ijson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.json_limits import (
    MAX_JSON_DEPTH,
    JSONTooDeep,
    bounded_events,
    check_depth,
    loads,
    nesting_depth,
)

# Text that puts JSON's structural characters where they are not structure: inside strings,
# after escapes, as keys.
tricky_text = st.text(alphabet='[]{}"\\/,: ab\u00e9\u4e2d\n\t', max_size=12)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | tricky_text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(tricky_text, inner, max_size=4),
    max_leaves=40,
)


def depth_of(value: Any) -> int:
    if isinstance(value, list):
        return 1 + max(map(depth_of, value), default=0)
    if isinstance(value, dict):
        return 1 + max(map(depth_of, value.values()), default=0)
    return 0


@settings(max_examples=300)
@given(json_values, st.booleans())
def test_the_depth_counted_without_parsing_is_the_depth_of_the_value(value, ascii_only):
    text = json.dumps(value, ensure_ascii=ascii_only)

    assert nesting_depth(text) == depth_of(value)
    assert nesting_depth(text.encode()) == depth_of(value)


@settings(max_examples=300)
@given(st.text(alphabet='[]{}"\\ 1,:', max_size=40))
def test_for_any_text_the_parser_accepts_the_count_is_its_depth(text):
    try:
        value = json.loads(text)
    except ValueError:
        return
    assert nesting_depth(text) == depth_of(value)


def nest(levels: int, kind: str) -> str:
    text = "0"
    for level in range(levels):
        in_array = kind == "arrays" or (kind == "alternating" and level % 2)
        text = f"[{text}]" if in_array else f'{{"k": {text}}}'
    return text


@pytest.mark.parametrize("kind", ["arrays", "objects", "alternating"])
def test_json_nested_to_the_limit_decodes_and_one_level_more_is_refused(kind):
    assert depth_of(loads(nest(MAX_JSON_DEPTH, kind))) == MAX_JSON_DEPTH
    with pytest.raises(JSONTooDeep, match=f"deeper than {MAX_JSON_DEPTH} levels"):
        loads(nest(MAX_JSON_DEPTH + 1, kind))


def test_nesting_far_past_python_s_recursion_limit_is_refused_not_a_recursion_error():
    for text in ("[" * 100_000, '{"a":' * 100_000 + "1" + "}" * 100_000, "[" * 5_000 + '"cut'):
        with pytest.raises(JSONTooDeep):
            loads(text)


def test_brackets_inside_strings_are_text_not_nesting():
    deep_looking = json.dumps({"note": "[" * 1_000, "escaped": '\\"[[[' * 300})

    assert nesting_depth(deep_looking) == 1
    assert loads(deep_looking)["note"] == "[" * 1_000
    # An unterminated string's brackets are counted: a parser gives up at that string anyway.
    with pytest.raises(ValueError, match="Unterminated") as error:
        loads('["a\\" [[[[')
    assert not isinstance(error.value, JSONTooDeep)


@pytest.mark.parametrize("text", ["NaN", "[Infinity]", '{"limit": -Infinity}'])
def test_nan_and_infinity_are_not_json(text):
    with pytest.raises(ValueError, match="is not JSON"):
        loads(text)


def test_a_lone_surrogate_escape_decodes_for_the_schema_to_refuse():
    assert loads('{"title": "a\\ud800"}') == {"title": "a\ud800"}
    # A str that no UTF-8 encoder accepts (stdio's reader can hand one over) is still measured.
    assert nesting_depth("\ud800[]") == 1
    check_depth("\ud800[]")


def test_a_streaming_parser_s_events_are_cut_off_past_the_limit():
    def events(levels: int) -> list[tuple[str, str, object]]:
        text = ("[" * levels + "]" * levels).encode()
        return list(bounded_events(ijson.parse(io.BytesIO(text))))

    assert len(events(MAX_JSON_DEPTH)) == 2 * MAX_JSON_DEPTH
    with pytest.raises(JSONTooDeep):
        events(MAX_JSON_DEPTH + 1)


def test_the_documented_limit_is_the_one_enforced():
    docs = Path(__file__).resolve().parents[2] / "docs"
    for page in ("api.md", "mcp.md"):
        assert f"nested deeper than {MAX_JSON_DEPTH} levels" in (docs / page).read_text()
