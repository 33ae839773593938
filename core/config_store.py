"""The one store of MEMESH_HOME/config.json: reading it, and writing it safely.

In a home shared with the original MeMesh, whose own config.json sits there, memesh's is
memesh-config.json (core/paths.py's `own_file`): the original's settings are never read as
memesh's, nor overwritten.

Each app declares and reads its own sections of the document (core/config_sections.py is
their registry and the service that writes them, through this module); this module knows
nothing of what a section means.

Writes are read-modify-write under an exclusive lock (a sibling `config.json.lock`), so
concurrent writers in different processes never lose each other's changes; the file is
replaced atomically (temp file + rename) with mode 0600, and its modification time always
moves, because readers in other processes cache by it (`stamp()`).

The shared field rules of a section live here too: API keys travel in HTTP headers, so a key
is printable ASCII without spaces; a base URL is http(s) with a host; and the mask `***` a
client received is never accepted back as a key.
"""

from __future__ import annotations

import contextlib
import copy
import fcntl
import json
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from core import paths
from core.redact import MASK

CONFIG_FILENAME = paths.CONFIG_FILENAME
URL_PATTERN = r"^https?://[^\s/?#]+(/[^\s?#]*)?$"
# API keys travel in HTTP headers: printable ASCII, no spaces (anything else is no key and
# could not be sent).
API_KEY_PATTERN = r"^[\x21-\x7e]+$"


class ConfigUnreadable(Exception):
    """config.json exists but is not JSON (or cannot be read)."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"{path} is not readable JSON: {reason}")
        self.path = path
        self.reason = reason
        # Without the path (it names the user's home): what the REST and CLI errors say.
        self.summary = f"{path.name} is not readable JSON: {reason}"


def refuse_mask(value: str | None) -> str | None:
    """A pydantic field validator for secret fields: the mask is not a key."""
    if value is not None and value.strip() == MASK:
        raise ValueError("is the mask '***': send the real key, or omit it to keep the stored one")
    return value


def config_path() -> Path:
    return paths.own_file(paths.memesh_home(), CONFIG_FILENAME)


def load() -> dict[str, Any]:
    """The stored document, unmasked ({} when there is no file, or it is not an object)."""
    path = config_path()
    try:
        raw = json.loads(path.read_text())
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise ConfigUnreadable(path, str(exc)) from None
    return raw if isinstance(raw, dict) else {}


def stamp() -> int | None:
    """The file's modification time in ns (None: no file): a cache key for readers."""
    try:
        return config_path().stat().st_mtime_ns
    except OSError:
        return None


@contextlib.contextmanager
def locked() -> Iterator[None]:
    """An exclusive lock for read-modify-write across processes (a sibling lock file)."""
    paths.ensure_private_dir(paths.memesh_home())
    lock_path = config_path().with_name(config_path().name + ".lock")
    fd = os.open(lock_path, os.O_CREAT | os.O_RDWR, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def save(config: dict[str, Any]) -> None:
    """Write atomically with mode 0600 (call it under `locked()`); the mtime always moves."""
    path = config_path()
    before = stamp()
    fd, tmp = tempfile.mkstemp(prefix=".config-", suffix=".json", dir=path.parent)
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w") as handle:
            json.dump(config, handle, indent=2, ensure_ascii=False)
            handle.write("\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    after = path.stat().st_mtime_ns
    if before is not None and after <= before:
        os.utime(path, ns=(before + 1000, before + 1000))


def update(change: Callable[[dict[str, Any]], None]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Load, apply `change` (it edits the document in place), save — all under the lock.
    Returns the document before and after."""
    with locked():
        config = load()
        before = copy.deepcopy(config)
        change(config)
        save(config)
    return before, config
