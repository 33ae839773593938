"""Anthropic's client-side memory tool (`memory_20250818`) with the memory graph as storage.

A library API for applications that call the Messages API directly (not an MCP tool, not
over HTTP or the CLI — the API reference's "Anthropic memory tool" section): pass
`TOOL_DEFINITION` in `tools`, and feed each `memory` `tool_use` block's `input` to
`handle_memory_command`; its `MemoryToolResult.tool_result(block_id)` is the block to send
back. docs/memory-tool.md shows the loop.

- `paths`: the path space `/memories/<namespace>/<name>.md` and its refusals (pure).
- `lines`: a memory as a file — observations in id order, one line map, edit plans (pure).
- `selectors` / `services`: the reads and the writes (through `entity_remember` and
  `entity_forget` where they can express the command).
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
