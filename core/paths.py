"""Where memesh keeps its data: MEMESH_HOME (default ~/.memesh, mode 0700).

The database file is MEMESH_HOME/knowledge-graph.db unless MEMESH_DB_PATH names another
(both read in settings). Files holding memory or secrets are created 0600 before anything
writes to them, so there is no window in which another local user could read them.

A home shared with the original MeMesh (docs/coming-from-memesh.md): the original keeps its
database at the same default path and its config.json beside it. When knowledge-graph.db
there is not memesh's (core/original_memesh.py tells, read-only), or the original's own files
are there before its database is, memesh keeps its own files under names of its own
(SHARED_NAMES) and never writes the original's; once memesh has its own database there it
keeps using it, whatever becomes of the original's file.

settings.py calls the helpers that take a `home` while it loads; everything else asks
`memesh_home()`.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from core import original_memesh

DB_FILENAME = "knowledge-graph.db"
CONFIG_FILENAME = "config.json"
# memesh's names for the files the original MeMesh keeps under the same names, in a home the
# two share (the original's transcript-mining state too: each product mines on its own).
SHARED_NAMES = {
    DB_FILENAME: "memesh-graph.db",
    CONFIG_FILENAME: "memesh-config.json",
    "transcript-mining.json": "memesh-transcript-mining.json",
}
SECRET_KEY_FILENAME = "secret-key"
# `memesh serve`'s record of itself (core/serve_record.py), read by the CLI's forwarding client.
RUNTIME_FILENAME = "serve.json"


def default_home() -> Path:
    return Path.home() / ".memesh"


def home_from_env(env: Mapping[str, str]) -> Path:
    """MEMESH_HOME as settings reads it, for the processes that run before Django is set up
    (the forwarding client, the hook entry point)."""
    return Path(env.get("MEMESH_HOME") or default_home()).expanduser()


def database_from_env(env: Mapping[str, str]) -> Path:
    """The database file as settings reads it (MEMESH_DB_PATH, else in MEMESH_HOME)."""
    given = env.get("MEMESH_DB_PATH")
    return Path(given).expanduser() if given else own_file(home_from_env(env), DB_FILENAME)


def home_is_shared(home: Path) -> bool:
    """Whether memesh shares `home` with the original MeMesh (or another program): memesh's
    own database is there under its shared name already; or knowledge-graph.db there is not
    memesh's; or there is none yet and the original's own files are there (it will create
    its database at that path). A knowledge-graph.db memesh created stays memesh's."""
    if (home / SHARED_NAMES[DB_FILENAME]).exists():
        return True
    owner = original_memesh.classify(home / DB_FILENAME)
    if owner is original_memesh.Owner.ABSENT:
        return original_memesh.has_marks(home)
    return owner in (original_memesh.Owner.ORIGINAL, original_memesh.Owner.FOREIGN)


def own_file(home: Path, name: str) -> Path:
    """memesh's file called `name` in `home`: under memesh's own name for it when the home is
    shared with the original MeMesh and the original uses `name` too."""
    if name in SHARED_NAMES and home_is_shared(home):
        return home / SHARED_NAMES[name]
    return home / name


def memesh_home() -> Path:
    from django.conf import settings

    return Path(settings.MEMESH_HOME)


def celery_broker_dir(home: Path) -> Path:
    """Folder of the embedded filesystem broker; created (0700) with its subfolders."""
    root = home / "celery"
    for sub in ("queue", "processed", "control"):
        ensure_private_dir(root / sub)
    return root


def ensure_private_dir(path: Path) -> None:
    """Create `path` (and parents) with mode 0700 if missing."""
    if not path.exists():
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(path, 0o700)  # mkdir's mode is filtered through the umask


def ensure_private_file(path: Path) -> None:
    """Create `path` empty with mode 0600 if missing (SQLite then keeps that mode)."""
    ensure_private_dir(path.parent)
    if not path.exists():
        fd = os.open(path, os.O_CREAT | os.O_WRONLY, 0o600)
        os.close(fd)
        os.chmod(path, 0o600)


def stored_secret_key(home: Path) -> str:
    """Django's signing key when MEMESH_SECRET_KEY is not set: generated once into `home`."""
    path = home / SECRET_KEY_FILENAME
    if path.exists():
        return path.read_text().strip()
    ensure_private_file(path)
    key = secrets.token_urlsafe(50)
    path.write_text(key)
    return key


def write_private_json(path: Path, data: Any) -> None:
    """Write `data` as JSON to `path` atomically, mode 0600, in a 0700 directory: a reader
    sees the old file or the whole new one, never a part (the runtime records of `memesh
    serve` and `memesh mcp`, which hold a token). Raises OSError."""
    ensure_private_dir(path.parent)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}-", suffix=".json", dir=path.parent)
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w") as handle:
            json.dump(data, handle)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
