"""The graph's errors, derived from core/errors.py's base: names kept apart between projects,
trust's refusals, and the storage conditions (each with the reference's stable errorCode and
status). Every transport maps them through one module, api/envelope.py."""

from __future__ import annotations

from core.errors import MemeshError


class NameInOtherProject(MemeshError):
    """An agent's write names a memory filed under another project. The agent guide: over
    MCP such a name is refused rather than shared, so one project's session never appends to
    (or rewrites) another project's memory; the agent picks another name."""

    error_code = "resource.name-in-other-project"
    http_status = 409


class SourceRequired(MemeshError):
    """Promoting a hypothesis to a fact needs the source it was observed in (observe)."""

    error_code = "trust.source-required"
    http_status = 400


class ObserveRequired(MemeshError):
    """The call would raise a stored memory's trust (its status or its confidence) by another
    path than `observe` with a source: refused, because that is confidence laundering."""

    error_code = "trust.observe-required"
    http_status = 409


class StorageError(MemeshError):
    """The database cannot take the request now: a condition of the file or the disk under it,
    not of the request. graph.storage.conditions recognises SQLite's errors as these; every
    transport answers with the stable code, a sentence and a `hint` saying what to do. A
    failed write changes nothing (its transaction rolls back)."""

    sentence = "The database cannot be used"
    hint = ""

    def __init__(self) -> None:
        super().__init__(self.sentence)


class StorageBusy(StorageError):
    error_code = "storage.busy"
    http_status = 503
    sentence = (
        "The database is busy: another process held its write lock for longer than the busy "
        "timeout, so nothing was written"
    )
    hint = "Retry shortly; MEMESH_BUSY_TIMEOUT_SECONDS sets how long a write waits for the lock."


class StorageReadOnly(StorageError):
    error_code = "storage.read-only"
    http_status = 503
    sentence = "The database is read-only, so nothing was written; reads still work"
    hint = (
        "Check that the database file (knowledge-graph.db in MEMESH_HOME, or MEMESH_DB_PATH) "
        "and its directory are writable by the user running memesh, on a file system mounted "
        "read-write."
    )


class StorageFull(StorageError):
    error_code = "storage.full"
    http_status = 507  # Insufficient Storage
    sentence = "The disk holding the database is full, so nothing was written; reads still work"
    hint = (
        "Free space on the disk that holds MEMESH_HOME (or MEMESH_DB_PATH), then retry; "
        "what is stored is intact."
    )


class StorageIOError(StorageError):
    error_code = "storage.io-error"
    http_status = 503
    sentence = "The disk holding the database failed a read or a write (disk I/O error)"
    hint = (
        "Check that the disk holding MEMESH_HOME (or MEMESH_DB_PATH) has free space and is "
        "healthy: SQLite needs room for its -shm and -wal files even to read. Then retry."
    )


class StorageCannotOpen(StorageError):
    error_code = "storage.cannot-open"
    http_status = 503
    sentence = "The database file cannot be opened"
    hint = (
        "Check that MEMESH_HOME (or the directory of MEMESH_DB_PATH) exists and that the user "
        "running memesh may read and write it, on a file system mounted read-write: SQLite "
        "creates its -shm and -wal files beside the database, even to read."
    )


# The same conditions on a team server's PostgreSQL (graph.storage.conditions reads its
# SQLSTATE codes): the codes and statuses above, with what to do about a server, not a file.


class StorageUnavailable(StorageError):
    error_code = "storage.unavailable"
    http_status = 503
    sentence = "The database server cannot be reached now, so nothing was read or written"
    hint = (
        "Check that the PostgreSQL server in MEMESH_DATABASE_URL is up and accepts "
        "connections; memesh connects again on the next request."
    )


class ServerBusy(StorageBusy):
    sentence = (
        "The database server gave up the write to let a concurrent one finish (a "
        "serialization failure, a deadlock or a lock timeout), so nothing was written"
    )
    hint = "Retry shortly."


class ServerReadOnly(StorageReadOnly):
    sentence = "The database server takes no writes now (a read-only transaction or a standby)"
    hint = "Point MEMESH_DATABASE_URL at the primary server, or retry when it accepts writes."


class ServerFull(StorageFull):
    sentence = "The database server is out of disk space or memory, so nothing was written"
    hint = "Free space (or memory) on the PostgreSQL server, then retry; what is stored is intact."
