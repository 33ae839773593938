"""The `tools/list` answer a `memesh mcp` process gave last, kept so that the next one can
give it before it has loaded the operation registry (api/mcp_server/early_stdio.py).

The tool list is generated from the operations' pydantic models (api/tool_schemas.py), which
takes the SDK, Django and every operation module: ~1.5 s of a process's start, while Codex
builds its first tool list within the first few hundred milliseconds. The answer is stored
as the SDK wrote it, byte for byte, in MEMESH_HOME/TOOLS_FILENAME, under a key of everything
the list is made from: memesh's source files (their sizes and modification times), the
installed distributions (pydantic's schema output is theirs), the MEMESH_* environment and
config.json (the peer switch, graph/ops/peer/switch.py). Any change to those makes the key
differ: the answer waits for the registry, which then stores the new list.

Standard library only, like early_stdio: it runs before anything heavy is imported.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path

from core import paths
from core.version import VERSION

TOOLS_FILENAME = "mcp-tools.json"
# memesh's top-level packages (pyproject.toml's [tool.setuptools.packages.find]; a test
# holds the two equal).
PACKAGES = (
    "core",
    "memesh_site",
    "graph",
    "messaging",
    "proposals",
    "dream",
    "review",
    "hosts",
    "api",
    "dashboard",
)
SOURCE_ROOT = Path(__file__).resolve().parents[2]


def cache_key(env: Mapping[str, str]) -> str:
    """What the tool list is made from, hashed (~10 ms: a stat of each source file)."""
    digest = hashlib.sha256()
    digest.update(f"{VERSION}\0{sys.version}\0".encode())
    for package in PACKAGES:
        for directory, subdirectories, files in os.walk(SOURCE_ROOT / package):
            subdirectories.sort()
            for name in sorted(files):
                if name.endswith(".py"):
                    stat = os.stat(os.path.join(directory, name))
                    digest.update(
                        f"{directory}/{name}:{stat.st_mtime_ns}:{stat.st_size}\0".encode()
                    )
    for entry in sys.path:
        if entry.endswith("site-packages") and os.path.isdir(entry):
            for name in sorted(os.listdir(entry)):
                if name.endswith(".dist-info"):
                    digest.update(f"{name}\0".encode())
    for name, value in sorted(env.items()):
        if name.startswith("MEMESH_"):
            digest.update(f"{name}={value}\0".encode())
    try:
        # core/config_store.py's file, read here as bytes.
        config = paths.own_file(paths.home_from_env(env), paths.CONFIG_FILENAME)
        digest.update(config.read_bytes())
    except OSError:
        digest.update(b"no config")
    return digest.hexdigest()


def load(env: Mapping[str, str], key: str) -> str | None:
    """The stored `tools/list` result (JSON text) when stored under `key`."""
    try:
        stored = json.loads((paths.home_from_env(env) / TOOLS_FILENAME).read_text("utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(stored, dict) or stored.get("key") != key:
        return None
    result = stored.get("result")
    return result if isinstance(result, str) else None


def store(env: Mapping[str, str], key: str, result: str) -> None:
    """Keep `result` (the SDK's `tools/list` result, JSON text) under `key`; a home that
    cannot be written just means the next process lists its tools the slow way."""
    home = paths.home_from_env(env)
    if not home.is_dir():
        return  # a home is made by settings and migrations, not by a cache
    with contextlib.suppress(OSError):
        paths.write_private_json(home / TOOLS_FILENAME, {"key": key, "result": result})
