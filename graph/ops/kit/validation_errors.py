"""pydantic's ValidationError as the one-line sentence every `validation.*` answer and every
import `errors` entry carries: each problem names its field and quotes the rejected value.

The value is quoted because "Input should be 'personal', 'team' or 'global'" does not say which
of a hundred imported entries' namespaces was wrong, or that the client sent `"Team "`. A quote
must stay safe to show and to log: it is cut to QUOTE_MAX characters, a secret-named field's
value is never quoted, key-shaped text is masked by the one redactor, and a lone surrogate is
written as its `\\udXXX` escape (it cannot be encoded into the answer otherwise). Containers are
named by their type, not dumped: an answer must not grow with a hostile body.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from core.redact import SECRET_FIELD, redact_text

QUOTE_MAX = 60  # characters of a rejected string shown before "…"

# Errors whose `input` is not the value at fault: a missing field's input is the whole body, an
# unknown field's value is beside the point (its name is the problem).
_NOT_QUOTED = frozenset({"missing", "extra_forbidden"})


def location(loc: tuple[int | str, ...]) -> str:
    """A pydantic location as a path: `entries[3].namespace`."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def first_field(exc: ValidationError) -> str | None:
    """The path of the first field at fault, for the envelope's `field`."""
    errors = exc.errors()
    return location(errors[0]["loc"]) or None if errors else None


def describe_validation_error(exc: ValidationError) -> str:
    """One clause per problem, each naming its field and quoting what it got:
    `title: String should have at most 200 characters (got "aaaa…")`."""
    parts = []
    for err in exc.errors():
        where = location(err["loc"]) or "body"
        msg = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            msg = "unknown field"
        # A message of ours may say what it got already ("at most 200 characters (got 300)").
        got = None if "(got " in msg else _got(err)
        parts.append(f"{where}: {msg}{f' (got {got})' if got else ''}")
    return "; ".join(parts)


def _got(err: ErrorDetails) -> str | None:
    """The rejected value as shown in the message, or None when it is not shown."""
    loc = err["loc"]
    if not loc or err["type"] in _NOT_QUOTED:
        return None
    if SECRET_FIELD.match(str(loc[-1])):
        return None
    value = err.get("input")
    # field_error() (a rule across fields, graph/ops/kit/fields.py) carries no value.
    if value is None and err["type"] == "value_error":
        return None
    return quote(value)


def quote(value: Any) -> str:
    """`value` as a short, safe literal: a string quoted, cut and masked; a scalar as JSON; a
    container by its kind."""
    if isinstance(value, str):
        # Masked before it is cut: a key cut short no longer looks like a key.
        masked = redact_text(value)
        cut = masked if len(masked) <= QUOTE_MAX else masked[:QUOTE_MAX] + "…"
        # backslashreplace turns a lone surrogate into its escape; nothing else changes.
        return '"' + cut.encode("utf-8", "backslashreplace").decode("utf-8") + '"'
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, int):
        try:
            text = str(value)
        except ValueError:  # past Python's digit limit for int -> str
            return "a number too large to show"
        return text if len(text) <= QUOTE_MAX else text[:QUOTE_MAX] + "…"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list | tuple):
        return "an array"
    return f"a {type(value).__name__}"
