"""JSON from outside memesh, with its nesting bounded: the one decoding path of every transport.

Python's json module parses arrays and objects by recursion, so 20 kB of `[[[[…` raise
RecursionError (not the ValueError a caller catches for bad JSON) and take down whatever reads
them. Every JSON input is therefore checked against MAX_JSON_DEPTH before a parser sees it:
REST bodies (api/rest/parsers.py), /mcp bodies (api/mcp_server/http.py), `memesh mcp` stdio lines
(api/mcp_server/stdio.py), `--input` on the CLI (api/cli/base.py), `memesh config set` values
(core/config_sections.py) and import files (graph/ops/bundle/files.py, whose streaming parser
reports its events to `bounded_events`). Too deep is JSONTooDeep, a
ValueError; api/envelope.py makes it `400 validation.bad-body`, the MCP transports a JSON-RPC
parse error (-32700).

Why 128: the deepest input memesh means to take is an import bundle inside an MCP call —
message, params, arguments, data, entities, entry, replaced_history, version, observations:
about ten levels. What is accepted must also pass everything downstream: the MCP SDK's JSON
parser (pydantic's, which stops at 200 levels), pydantic's serializer for the metadata a
recall returns (255), json.dumps of that metadata into SQLite (the interpreter's recursion
limit, 1000, minus the frames already on the stack) and SQLite's JSON functions (1000). 128
keeps a wide margin below all of them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from itertools import accumulate, repeat
from operator import sub
from typing import Any, TypeVar

MAX_JSON_DEPTH = 128

# A JSON string (escapes included), whose brackets are text, not structure. Unrolled so that
# it runs in the regex engine without backtracking.
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKET = re.compile(rb"[^\[\]{}]+")
# An opening bracket steps one level in, a closing one out: 2 and 0, less one each below.
_STEPS = bytes.maketrans(b"[{]}", b"\x02\x02\x00\x00")

_Event = TypeVar("_Event", bound=tuple[Any, ...])


class JSONTooDeep(ValueError):
    """JSON nested deeper than MAX_JSON_DEPTH. The message reads after its subject ("Request
    body …", "The bundle …")."""

    def __init__(self) -> None:
        super().__init__(
            f"nests arrays and objects deeper than {MAX_JSON_DEPTH} levels, the most memesh accepts"
        )


def nesting_depth(text: str | bytes) -> int:
    """How deep `text`'s arrays and objects nest (0 for a scalar), without parsing it.

    Linear and in C throughout (two regex passes, a translate, and itertools over the
    brackets). For text that is not JSON the count is still at least the depth a parser
    reaches before it gives up: up to the first error both read strings the same way.
    """
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    brackets = _NOT_BRACKET.sub(b"", _STRING.sub(b"", data))
    return max(accumulate(map(sub, brackets.translate(_STEPS), repeat(1))), default=0)


def check_depth(text: str | bytes) -> None:
    """Raise JSONTooDeep when `text` nests deeper than MAX_JSON_DEPTH."""
    if nesting_depth(text) > MAX_JSON_DEPTH:
        raise JSONTooDeep


def _refuse_constant(name: str) -> float:
    raise ValueError(f"{name} is not JSON")


def loads(text: str | bytes) -> Any:
    """json.loads for input from outside: JSONTooDeep past MAX_JSON_DEPTH (checked before
    parsing), and ValueError for NaN and Infinity, which are not JSON (RFC 8259 §6) though
    Python's parser takes them."""
    check_depth(text)
    return json.loads(text, parse_constant=_refuse_constant)


def bounded_events(events: Iterable[_Event]) -> Iterator[_Event]:
    """A streaming parser's `(prefix, event, value)` events (ijson's), passed on until the
    nesting passes MAX_JSON_DEPTH, where JSONTooDeep is raised: for files too big to check
    as one string."""
    depth = 0
    for item in events:
        event = item[1]
        if event in ("start_map", "start_array"):
            depth += 1
            if depth > MAX_JSON_DEPTH:
                raise JSONTooDeep
        elif event in ("end_map", "end_array"):
            depth -= 1
        yield item
