"""Django's sqlite3 backend on pysqlite3/sqlean, with sqlite-vec and memesh's PRAGMAs.

Why a subclass rather than swapping `sys.modules["sqlite3"]`: it is explicit, touches nothing
outside the database layer, and does not depend on import order.
"""

from __future__ import annotations

import contextlib
import datetime
import decimal
import importlib.util
import logging
import os
import time
from collections.abc import Iterable, Mapping
from itertools import tee
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db.backends.sqlite3 import base as sqlite_base
from django.db.backends.sqlite3._functions import register as register_functions

from core import original_memesh, paths
from core.db.driver import Database
from core.db.write_gate import WriteGate
from core.errors import ForeignDatabase

logger = logging.getLogger(__name__)

# Django registers these on the stdlib sqlite3 module at import; the driver has its own registry.
# (The type: ignore comments below mark Django internals that django-stubs does not describe.)
Database.register_converter("bool", b"1".__eq__)
Database.register_converter("date", sqlite_base.decoder(sqlite_base.parse_date))  # type: ignore[attr-defined]
Database.register_converter("time", sqlite_base.decoder(sqlite_base.parse_time))  # type: ignore[attr-defined]
Database.register_converter("datetime", sqlite_base.decoder(sqlite_base.parse_datetime))  # type: ignore[attr-defined]
Database.register_converter("timestamp", sqlite_base.decoder(sqlite_base.parse_datetime))  # type: ignore[attr-defined]
Database.register_adapter(decimal.Decimal, str)
Database.register_adapter(datetime.date, sqlite_base.adapt_date)  # type: ignore[attr-defined]
Database.register_adapter(datetime.datetime, sqlite_base.adapt_datetime)  # type: ignore[attr-defined]

# busy_timeout is also set through connect(timeout=...) from OPTIONS; the PRAGMA makes it hold
# for connections opened without OPTIONS too. 30 s: a long reindex batch must not fail writers.
PRAGMAS = (
    "PRAGMA journal_mode = WAL",
    "PRAGMA synchronous = NORMAL",
    "PRAGMA foreign_keys = ON",
    "PRAGMA legacy_alter_table = OFF",
)
MIN_BUSY_TIMEOUT_MS = 30_000
# A gate wait shorter than this leaves SQLite's busy timeout alone (the common case costs no
# PRAGMA); after a longer one, SQLite's lock gets what is left of the budget, but never less
# than a second: the gate's holder has just let go, so the lock is free or about to be.
GATE_WAIT_WORTH_SHORTENING = 1.0
MIN_LOCK_WAIT_AFTER_GATE_MS = 1_000


class SQLiteCursorWrapper(Database.Cursor):  # type: ignore[name-defined,misc]
    """Django's %s → ? conversion on the driver's own Cursor class.

    cursor(factory=...) rejects a subclass of the stdlib Cursor, and Django's wrapper uses
    zero-argument super(), so its methods cannot simply be borrowed.
    """

    convert_query = sqlite_base.SQLiteCursorWrapper.convert_query  # type: ignore[attr-defined]

    def execute(self, query: str, params: Any = None) -> Any:
        if params is None:
            return super().execute(query)
        param_names = list(params) if isinstance(params, Mapping) else None
        return super().execute(self.convert_query(query, param_names=param_names), params)

    def executemany(self, query: str, param_list: Iterable[Any]) -> Any:
        peekable, param_list = tee(iter(param_list))
        params = next(peekable, None)
        param_names = list(params) if params and isinstance(params, Mapping) else None
        return super().executemany(self.convert_query(query, param_names=param_names), param_list)


def sqlite_vec_path() -> str:
    """Where the sqlite-vec wheel keeps its extension: `sqlite_vec.loadable_path()`, found
    without importing the package, whose __init__ imports numpy (for a helper memesh never
    calls) — ~0.2 s of every process that opens the database, each hook's among them."""
    spec = importlib.util.find_spec("sqlite_vec")
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError("No module named 'sqlite_vec'", name="sqlite_vec")
    return os.path.normpath(os.path.join(os.path.dirname(spec.origin), "vec0"))


def load_sqlite_vec(conn: Any) -> str | None:
    """Load sqlite-vec into `conn`; return the error text when it cannot load.

    MEMESH_SQLITE_VEC_PATH points at another build of the extension (platforms the wheel
    does not cover).
    """
    try:
        conn.enable_load_extension(True)
        try:
            override = settings.MEMESH_SQLITE_VEC_PATH
            if override:
                conn.load_extension(override)
            else:
                conn.load_extension(sqlite_vec_path())
        finally:
            conn.enable_load_extension(False)
    except Exception as exc:  # any failure means keyword-only, never a dead server
        return f"{type(exc).__name__}: {exc}"
    return None


def refuse_foreign(path: Path) -> original_memesh.Owner:
    """Raise ForeignDatabase when `path` holds a database memesh did not create: connecting
    would already write to it (the WAL PRAGMA), and migrating would put memesh's tables in it."""
    owner = original_memesh.classify(path)
    if owner is original_memesh.Owner.ORIGINAL:
        raise ForeignDatabase(
            f"{path} is the original MeMesh's database, which memesh never writes into: leave "
            "MEMESH_DB_PATH unset (memesh keeps its own file beside it) or point it at a new "
            f"file, and bring its memories in with: {original_memesh.IMPORT_COMMAND} "
            f"{original_memesh.quote_path(path)} --apply"
        )
    if owner is original_memesh.Owner.FOREIGN:
        raise ForeignDatabase(
            f"{path} is another program's database (its tables are not memesh's), which "
            "memesh never writes into: point MEMESH_DB_PATH at a new file"
        )
    return owner


# Only a file known to be memesh's, or new, is stamped: a file that could not be looked at (a
# lock held) might be another program's.
STAMPABLE = (original_memesh.Owner.ABSENT, original_memesh.Owner.MEMESH)


def stamp_as_memesh(conn: Any) -> None:
    """Write memesh's application id into the database's header once (core/original_memesh.py
    reads it to know memesh's file without opening it). Run before WAL is switched on, so on a
    new file the stamp is in the file itself at once; on an older WAL database it reaches the
    file at the next checkpoint. A read-only database keeps no stamp: it is still told by its
    tables."""
    if conn.execute("PRAGMA application_id").fetchone()[0] == original_memesh.APPLICATION_ID:
        return
    # Read-only or busy: the next connection tries again.
    with contextlib.suppress(Database.OperationalError):
        conn.execute(f"PRAGMA application_id = {original_memesh.APPLICATION_ID}")


class DatabaseWrapper(sqlite_base.DatabaseWrapper):
    Database = Database  # also drives Django's exception mapping (IntegrityError, ...)

    vec_error: str | None = None

    @property
    def vec_available(self) -> bool:
        self.ensure_connection()
        return self.vec_error is None

    def get_new_connection(self, conn_params: dict[str, Any]) -> Any:
        # Not super(): Django's version calls the stdlib sqlite3.connect.
        owner = None
        if not self.is_in_memory_db():
            owner = refuse_foreign(Path(conn_params["database"]))
            paths.ensure_private_file(Path(conn_params["database"]))
        conn = Database.connect(**conn_params)
        register_functions(conn)
        self.vec_error = load_sqlite_vec(conn)
        if self.vec_error:
            logger.warning(
                "sqlite-vec could not load; recall runs keyword-only: %s", self.vec_error
            )
        timeout_ms = max(int(conn_params.get("timeout", 0) * 1000), MIN_BUSY_TIMEOUT_MS)
        conn.execute(f"PRAGMA busy_timeout = {timeout_ms}")
        if owner in STAMPABLE:
            stamp_as_memesh(conn)
        for pragma in PRAGMAS:
            if "journal_mode" in pragma and self.is_in_memory_db():
                continue
            conn.execute(pragma)
        for init_command in self.init_commands:  # type: ignore[attr-defined]  # keeps OPTIONS["init_command"] working
            if init_command := init_command.strip():
                conn.execute(init_command)
        return conn

    def create_cursor(self, name: str | None = None) -> Any:
        return self.connection.cursor(factory=SQLiteCursorWrapper)

    # --- the write gate (core/db/write_gate.py) around each transaction ----------

    write_gate: WriteGate | None = None

    @property
    def busy_timeout_seconds(self) -> float:
        return max(
            float(self.settings_dict["OPTIONS"].get("timeout", 0)), MIN_BUSY_TIMEOUT_MS / 1000
        )

    def _start_transaction_under_autocommit(self) -> None:
        if self.write_gate is None and not self.is_in_memory_db():
            self.write_gate = WriteGate(str(self.settings_dict["NAME"]))
        budget = self.busy_timeout_seconds
        waited = 0.0
        if self.write_gate is not None:
            started = time.monotonic()
            self.write_gate.acquire(timeout=budget)
            waited = time.monotonic() - started
        try:
            if waited < GATE_WAIT_WORTH_SHORTENING:
                super()._start_transaction_under_autocommit()  # type: ignore[misc]
            else:
                self._begin_within(budget - waited)
        except BaseException:
            self._release_write_gate()
            raise

    def _begin_within(self, seconds: float) -> None:
        """BEGIN with SQLite's busy wait cut to what is left of the budget: a writer that
        queued for the gate waits the busy timeout in all, not the timeout again on SQLite's
        lock (three writers behind a stuck lock would otherwise answer after 30, 60, 90 s)."""
        remaining_ms = max(int(seconds * 1000), MIN_LOCK_WAIT_AFTER_GATE_MS)
        self.connection.execute(f"PRAGMA busy_timeout = {remaining_ms}")
        try:
            super()._start_transaction_under_autocommit()  # type: ignore[misc]
        finally:
            full_ms = int(self.busy_timeout_seconds * 1000)
            self.connection.execute(f"PRAGMA busy_timeout = {full_ms}")

    def _release_write_gate(self) -> None:
        if self.write_gate is not None:
            self.write_gate.release()

    def _commit(self) -> None:
        try:
            super()._commit()  # type: ignore[misc]
        finally:
            self._release_write_gate()

    def _rollback(self) -> None:
        try:
            super()._rollback()  # type: ignore[misc]
        finally:
            self._release_write_gate()

    def _close(self) -> None:
        try:
            super()._close()  # type: ignore[misc]
        finally:
            self._release_write_gate()
