"""Finding the JSON object a dream prompt asked for in a model's reply: fenced or not, with
prose around it, and with backtick runs inside its strings."""

from __future__ import annotations

import json

import pytest

from dream.reply_json import Unparseable, reply_object

ANSWER = {"verdict": "pass", "warnings": [{"claim": "Run ```make test```", "reason": "```"}]}


def test_a_bare_object_is_read_whole():
    assert reply_object(json.dumps(ANSWER), required=("verdict",)) == ANSWER


def test_backtick_runs_inside_strings_do_not_cut_an_unfenced_object():
    reply = 'Here you go: {"observations": ["Run ```make test``` before pushing", "```"]} done'

    assert reply_object(reply, required=("observations",)) == {
        "observations": ["Run ```make test``` before pushing", "```"]
    }


@pytest.mark.parametrize("opening", ["```json", "```", "````json", "~~~"])
def test_a_fenced_object_with_backtick_runs_in_its_strings_is_read(opening: str):
    closing = opening.removesuffix("json")
    reply = f"Sure.\n{opening}\n{json.dumps(ANSWER, indent=2)}\n{closing}\nAnything else?"

    assert reply_object(reply, required=("verdict",)) == ANSWER


def test_the_object_holding_the_required_keys_wins_over_an_earlier_one():
    reply = 'Example shape: {"name": "x"}. My answer:\n```json\n{"patterns": []}\n```'

    assert reply_object(reply, required=("patterns",)) == {"patterns": []}


def test_without_the_required_keys_the_first_object_is_returned_for_its_pass_to_judge():
    assert reply_object('{"a": 1} {"b": 2}', required=("verdict",)) == {"a": 1}


def test_an_object_nested_in_a_wrapper_is_not_taken_for_the_answer():
    assert reply_object('{"result": {"verdict": "pass"}}', required=("verdict",)) == {
        "result": {"verdict": "pass"}
    }


def test_braces_in_prose_before_the_object_are_skipped():
    reply = 'I used {curly} braces {{ before: {"verdict": "UNRELATED", "rationale": "a {b}"}'

    assert reply_object(reply, required=("verdict",))["rationale"] == "a {b}"


def test_a_raw_newline_inside_a_string_is_tolerated():
    assert reply_object('{"verdict": "pass", "note": "two\nlines"}', required=("verdict",)) == {
        "verdict": "pass",
        "note": "two\nlines",
    }


def test_a_reply_without_an_object_is_unparseable():
    with pytest.raises(Unparseable, match="no JSON object"):
        reply_object("Sure! Here is a digest: it went well. ```code```", required=("name",))


def test_a_broken_object_is_unparseable_and_says_why():
    with pytest.raises(Unparseable, match="invalid JSON"):
        reply_object('```json\n{"verdict": "pass",}\n```', required=("verdict",))


def test_a_json_array_is_not_an_object():
    with pytest.raises(Unparseable, match="no JSON object"):
        reply_object('["pass"]', required=("verdict",))


def test_a_reply_nested_past_the_bound_is_unparseable_not_a_recursion_error():
    deep = '{"name": "x", "a": ' + "[" * 20_000 + "]" * 20_000 + "}"
    with pytest.raises(Unparseable, match="deeper than"):
        reply_object(deep, required=("name",))
