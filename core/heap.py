"""The server process's heap after start-up: frozen out of the cyclic garbage collector.

What start-up builds (Django, DRF, the pydantic schemas, the MCP SDK: ~130k tracked objects)
lives as long as the process, yet every full collection walks all of it: ~100 ms each on the
shared 2-core machine, and a request that builds thousands of objects (the dashboard's graph
page draws 3,000 nodes) triggers one every few requests. Frozen, those objects are left out of
every collection; what requests build is still collected as before.
https://docs.python.org/3/library/gc.html#gc.freeze
"""

from __future__ import annotations

import gc


def freeze_startup_heap() -> None:
    """Collect once (start-up's garbage must not be kept for good), then freeze the rest."""
    gc.collect()
    gc.freeze()
