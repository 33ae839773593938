"""Request bodies are JSON whatever the Content-Type says, decoded with their nesting bounded.

`curl -d '{...}'` sends application/x-www-form-urlencoded; refusing it would fail the most
common first try for no benefit. The body is decoded by core/json_limits.py, the one
decoding path of every transport: a body nested past MAX_JSON_DEPTH raises JSONTooDeep
(api/envelope.py: 400 validation.bad-body) instead of a RecursionError (a 500).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import IO, Any

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser, get_encoding

from core import json_limits


class AnyContentJSONParser(JSONParser):
    media_type = "*/*"

    def parse(
        self,
        stream: IO[bytes],
        media_type: str | None = None,
        parser_context: Mapping[str, Any] | None = None,
    ) -> Any:
        encoding = get_encoding(parser_context or {})
        try:
            text = stream.read().decode(encoding)
        except UnicodeDecodeError as exc:
            raise ParseError(f"JSON parse error - {exc}") from None
        try:
            return json_limits.loads(text)
        except json_limits.JSONTooDeep:
            raise
        except ValueError as exc:  # JSONDecodeError, NaN, an integer past 4300 digits
            raise ParseError(f"JSON parse error - {exc}") from None
