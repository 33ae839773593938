"""memesh's version, in a module of its own so that a process can name it before Django's
settings load (`memesh mcp` answers `initialize` with it first: api/mcp_server/early_stdio.py)."""

from __future__ import annotations

VERSION = "0.1.0"
