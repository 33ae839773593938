"""Whose database a file is — memesh's, the original MeMesh's, or another program's — told
without writing a byte to it.

The original MeMesh (4.x, TypeScript) keeps its SQLite database at the path memesh takes by
default, `~/.memesh/knowledge-graph.db`, and its `config.json` beside it. memesh never
writes into a database it did not create: core/paths.py uses `classify` to keep memesh's own
files beside the original's, and the database backend (core/db/base.py) refuses a file that
is not memesh's before it runs a PRAGMA on it (even `journal_mode = WAL` rewrites the header).

A file is looked at through SQLite's read-only URI (`mode=ro`): shared locks only, so a
running original is neither blocked nor changed. On a WAL database SQLite may create the
`-shm`/`-wal` companions the original creates itself; the database file stays byte for byte
as it was. Standard library only: the CLI's forwarding client (commands and hooks) asks
before Django loads.
"""

from __future__ import annotations

import enum
import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import sqlite3

SQLITE_HEADER = b"SQLite format 3\x00"
# memesh stamps its database's header with this application id (the database backend, on
# the first connection, before WAL is on so the stamp lands in the file itself): a start-up
# then knows its own file from 100 bytes, without opening it through SQLite.
# https://www.sqlite.org/fileformat.html#application_id
APPLICATION_ID = 0x4D4D5348  # "MMSH"
APPLICATION_ID_OFFSET = 68
HEADER_BYTES = 100
# The original's own tables (its storage/schema.js); memesh's are prefixed by app label.
ORIGINAL_TABLES = frozenset({"entities", "observations", "relations", "tags"})
# Django's ledger of applied migrations: memesh creates it before any table of its own.
MIGRATIONS_TABLE = "django_migrations"
MEMESH_APP = "graph"
# Django's own apps, whose migrations memesh's first `migrate` applies before graph's: a
# ledger naming only these is memesh's database being created by another process right now.
DJANGO_APPS = frozenset({"contenttypes", "auth", "admin", "sessions"})
IMPORT_COMMAND = "memesh import --from memesh4"
# Files only the original keeps in its folder (its install records, its update check's cache):
# a home holding one is the original's even before it has stored a memory.
ORIGINAL_MARKS = ("install.json", "install-hooks.json")
ORIGINAL_MARK_PATTERN = "update-check.*.json"
# How long a look waits for a lock (a writer's checkpoint): short, a start-up must not hang.
LOOK_TIMEOUT_S = 2.0

# Parameters: none. Result: one row per table name.
TABLES_SQL = "SELECT name FROM sqlite_master WHERE type = 'table'"
# Parameters: none. Result: one row per app that applied a migration.
APPS_SQL = f"SELECT DISTINCT app FROM {MIGRATIONS_TABLE}"
# Parameters: none. Result: (memories not archived, archived ones) — the original's forget and
# supersedes set entities.status to 'archived' rather than delete.
COUNT_SQL = (
    "SELECT COALESCE(SUM(status != 'archived'), 0), COALESCE(SUM(status = 'archived'), 0) "
    "FROM entities"
)
# Parameters: none. Result: one row per memory not archived, its name.
NAMES_SQL = "SELECT name FROM entities WHERE status != 'archived'"
# The same two for a 4.x schema from before `status` existed (nothing was archived then).
COUNT_ALL_SQL = "SELECT COUNT(*), 0 FROM entities"
NAMES_ALL_SQL = "SELECT name FROM entities"


class Owner(enum.Enum):
    ABSENT = "absent"  # no file, an empty one, or a database without tables: memesh may create
    MEMESH = "memesh"  # memesh's schema (its migrations ledger with memesh's apps)
    ORIGINAL = "original"  # the original MeMesh's tables, without memesh's
    FOREIGN = "foreign"  # a database of another program
    UNREADABLE = "unreadable"  # cannot be read now (not SQLite, damaged, locked): SQLite will say


def _connect(path: Path) -> sqlite3.Connection:
    # Imported here: most processes never look (their home has one database, memesh's, under
    # its shared name, or none), and the forwarding client counts its milliseconds.
    import sqlite3
    from urllib.parse import quote

    uri = f"file:{quote(str(path))}?mode=ro"
    return sqlite3.connect(uri, uri=True, timeout=LOOK_TIMEOUT_S)


# What this process found, by the file's identity and last change: settings and the database
# backend both ask at start, and a look costs a SQLite open (~1 ms). An owner does not change
# while the file does not; ABSENT and UNREADABLE may change at any moment, so are asked again.
_found: dict[tuple[int, ...], Owner] = {}


def classify(path: Path) -> Owner:
    """Whose database `path` is, read-only."""
    try:
        stat = os.stat(path)
    except FileNotFoundError:
        return Owner.ABSENT
    except OSError:
        return Owner.UNREADABLE
    if stat.st_size == 0:
        return Owner.ABSENT  # memesh creates its file empty (mode 0600) before SQLite opens it
    key = (stat.st_dev, stat.st_ino, stat.st_size, stat.st_ctime_ns)
    if key not in _found:
        owner = _look(path)
        if owner in (Owner.ABSENT, Owner.UNREADABLE):
            return owner
        _found[key] = owner
    return _found[key]


def has_memesh_stamp(header: bytes) -> bool:
    """Whether a database file's first bytes carry memesh's application id."""
    stamp = header[APPLICATION_ID_OFFSET : APPLICATION_ID_OFFSET + 4]
    return int.from_bytes(stamp, "big") == APPLICATION_ID if len(stamp) == 4 else False


def _look(path: Path) -> Owner:
    try:
        with open(path, "rb") as handle:
            header = handle.read(HEADER_BYTES)
    except OSError:
        return Owner.UNREADABLE
    if not header.startswith(SQLITE_HEADER):
        return Owner.UNREADABLE
    if has_memesh_stamp(header):
        return Owner.MEMESH
    import sqlite3  # see _connect

    try:
        conn = _connect(path)
        try:
            tables = {row[0] for row in conn.execute(TABLES_SQL)}
            if MIGRATIONS_TABLE in tables:
                apps = {row[0] for row in conn.execute(APPS_SQL)}
                ours = MEMESH_APP in apps or apps <= DJANGO_APPS
                return Owner.MEMESH if ours and not tables >= ORIGINAL_TABLES else Owner.FOREIGN
        finally:
            conn.close()
    except sqlite3.Error:
        return Owner.UNREADABLE
    if not tables:
        return Owner.ABSENT
    return Owner.ORIGINAL if tables >= ORIGINAL_TABLES else Owner.FOREIGN


class OriginalMemory:
    """An original MeMesh database found in memesh's home, as the notices describe it.

    A plain class, not a dataclass: `dataclasses` imports `inspect` (and `ast`, `dis`), a
    third of what a forwarded hook process imports otherwise."""

    __slots__ = ("archived", "in_memesh_database", "memories", "path")

    def __init__(
        self, path: Path, memories: int, archived: int, in_memesh_database: bool = False
    ) -> None:
        self.path = path
        self.memories = memories  # not archived
        self.archived = archived
        # Its tables are inside memesh's own database (`inside`), not in a file of its own.
        self.in_memesh_database = in_memesh_database

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, OriginalMemory):
            return NotImplemented
        return self.as_json() == other.as_json()

    def __hash__(self) -> int:
        return hash((self.path, self.memories, self.archived, self.in_memesh_database))

    def __repr__(self) -> str:
        return f"OriginalMemory({self.as_json()!r})"

    @property
    def command(self) -> str:
        """The one command that brings it into memesh (without `--apply` the import is a dry
        run: the counts of what it would do)."""
        return f"{IMPORT_COMMAND} {quote_path(self.path)} --apply"

    def as_json(self) -> dict[str, object]:
        return {
            "path": str(self.path),
            "memories": self.memories,
            "archived": self.archived,
            "command": self.command,
            "inMemeshDatabase": self.in_memesh_database,
        }


def quote_path(path: Path) -> str:
    """`path` as a shell word (a home folder may hold a space)."""
    import shlex

    return shlex.quote(str(path))


def find(path: Path) -> OriginalMemory | None:
    """The original MeMesh's database at `path`, with its counts, or None when `path` is not
    one (or cannot be read now)."""
    if classify(path) is not Owner.ORIGINAL:
        return None
    return _counted(path, inside=False)


def inside(path: Path) -> OriginalMemory | None:
    """The original MeMesh's tables inside memesh's own database at `path`, with its counts;
    None when it holds none (or cannot be read now).

    A home memesh made before the original was installed: the original, started later, opens
    the file at its default path, which is memesh's, and creates its tables there beside
    memesh's (it checks for nothing). memesh never reads them but to count and import."""
    import sqlite3  # see _connect

    try:
        conn = _connect(path)
        try:
            tables = {row[0] for row in conn.execute(TABLES_SQL)}
        finally:
            conn.close()
    except sqlite3.Error:
        return None
    if MIGRATIONS_TABLE not in tables or not tables >= ORIGINAL_TABLES:
        return None
    return _counted(path, inside=True)


def _counted(path: Path, *, inside: bool) -> OriginalMemory | None:
    import sqlite3  # see _connect

    try:
        conn = _connect(path)
        try:
            try:
                memories, archived = conn.execute(COUNT_SQL).fetchone()
            except sqlite3.OperationalError:  # no `status` column yet
                memories, archived = conn.execute(COUNT_ALL_SQL).fetchone()
        finally:
            conn.close()
    except sqlite3.Error:
        return None  # locked past the timeout, or damaged: no notice rather than a wrong one
    return OriginalMemory(
        path=path, memories=int(memories), archived=int(archived), in_memesh_database=inside
    )


def memory_names(path: Path) -> list[str]:
    """The names of the original's memories that are not archived ([] when unreadable)."""
    import sqlite3  # see _connect

    try:
        conn = _connect(path)
        try:
            try:
                rows = conn.execute(NAMES_SQL).fetchall()
            except sqlite3.OperationalError:
                rows = conn.execute(NAMES_ALL_SQL).fetchall()
        finally:
            conn.close()
    except sqlite3.Error:
        return []
    return [row[0] for row in rows]


def has_marks(home: Path) -> bool:
    """Whether `home` holds a file only the original MeMesh writes there."""
    if any((home / name).exists() for name in ORIGINAL_MARKS):
        return True
    try:
        return any(home.glob(ORIGINAL_MARK_PATTERN))
    except OSError:
        return False
