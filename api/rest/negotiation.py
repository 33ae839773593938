"""Content negotiation for /v1: JSON in, JSON out, whatever the headers say.

The reference's API speaks JSON only. DRF's default negotiation parses the Accept header on
every request and answered `Accept: text/html` with a 406; here the one renderer is chosen
without reading Accept, and the body is read as JSON whatever its Content-Type
(api/rest/parsers.py says why).
"""

from __future__ import annotations

from typing import Any

from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.request import Request


class JSONOnly(BaseContentNegotiation):
    def select_parser(self, request: Request, parsers: list[Any]) -> Any:
        return parsers[0]

    def select_renderer(
        self, request: Request, renderers: list[Any], format_suffix: str | None = None
    ) -> tuple[Any, str]:
        return renderers[0], renderers[0].media_type
