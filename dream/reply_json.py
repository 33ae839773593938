"""Finding the JSON object a dream prompt asked for in the model's reply. Pure Python.

Models wrap the object in a ```json fence, put prose around it, or both; and the memories of
coding sessions are full of code, so the object's own strings often hold backtick runs
("Run ```make test``` before pushing"). Cutting the reply at a fence marker would cut inside
such a string, so the reply is never cut: a JSON decoder is started at each `{` and parses
strings the way JSON does, backticks and all. Fences and prose around the object are simply
skipped. Of the objects found, the first holding every key the pass needs wins; else the first
object (its pass then names what is missing). No repair, no guessing: a reply without a
decodable object is Unparseable.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import Any

from core.json_limits import MAX_JSON_DEPTH, nesting_depth


class Unparseable(ValueError):
    """The model's reply is not the JSON the prompt asked for."""


# strict=False lets a raw newline or tab stand inside a string, as models sometimes write it;
# anything else invalid is still an error.
_DECODER = json.JSONDecoder(strict=False)


def reply_object(reply: str, required: Collection[str]) -> dict[str, Any]:
    """The JSON object in `reply` that holds every key in `required`, else the first JSON
    object in it. Raises Unparseable when it holds none."""
    # A decoder recurses per level: a reply nested past the transports' bound is refused
    # before one is started (the prompts ask for a few levels at most).
    if nesting_depth(reply) > MAX_JSON_DEPTH:
        raise Unparseable(f"the reply nests deeper than {MAX_JSON_DEPTH} levels")
    first: dict[str, Any] | None = None
    error: str | None = None
    at = reply.find("{")
    while at >= 0:
        try:
            value, end = _DECODER.raw_decode(reply, at)
        except json.JSONDecodeError as exc:
            error = error or exc.msg
            at = reply.find("{", at + 1)
            continue
        # Decoding at a `{` yields an object. Its nested objects are not candidates (an answer
        # wrapped in another object is not the answer asked for): go on past its end.
        if isinstance(value, dict):
            if all(key in value for key in required):
                return value
            first = first if first is not None else value
        at = reply.find("{", end)
    if first is not None:
        return first
    if error is not None:
        raise Unparseable(f"invalid JSON: {error}")
    raise Unparseable("no JSON object in the reply")
