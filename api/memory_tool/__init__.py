"""Anthropic's client-side memory tool (`memory_20250818`) with the memory graph as storage.

A library API for applications that run their own Messages API loop (not an MCP tool, not
over HTTP or the CLI — the API reference's "Anthropic memory tool" section). The application
runs inside memesh's Django project, sets Django up once, and imports from `api.memory_tool`:

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memesh_site.settings")
    django.setup()
    from api.memory_tool import TOOL_DEFINITION, handle_memory_command

    # tools=[TOOL_DEFINITION] in each request; then, for each `tool_use` block named "memory":
    result = handle_memory_command(block["input"], project=None)  # or a project id
    tool_results.append(result.tool_result(block["id"]))  # sent back in the user turn

A refusal is a result with `is_error=True`, never an exception. docs/memory-tool.md shows the
whole loop.

- `paths`: the path space `/memories/<namespace>/<name>.md` and its refusals (pure).
- `lines`: a memory as a file — observations in id order, one line map, edit plans (pure).
- `selectors` / `services`: the reads, and the writes, each one call of graph's write
  services (`entity_remember`, `entity_forget`, graph/ops/revise.py).
- `commands`: input checking and dispatch; every refusal is an error result.
"""

from __future__ import annotations

from api.memory_tool.commands import (
    TOOL_DEFINITION,
    MemoryToolResult,
    handle_memory_command,
)
from api.memory_tool.paths import MemoryPath, decode_name, encode_name, parse_path

__all__ = [
    "TOOL_DEFINITION",
    "MemoryPath",
    "MemoryToolResult",
    "decode_name",
    "encode_name",
    "handle_memory_command",
    "parse_path",
]
