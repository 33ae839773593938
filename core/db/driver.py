"""Pick the DB-API driver: pysqlite3 (Linux x86_64 wheel) or sqlean elsewhere.

The stdlib `sqlite3` on many Pythons is built without extension loading, so it cannot load
sqlite-vec. Both drivers bundle a modern SQLite with FTS5. MEMESH_SQLITE_DRIVER=sqlean forces
the fallback. Django imports this backend only after settings are configured (settings.py does
not import it), so the choice is read from settings like every other variable.
"""

from __future__ import annotations

from types import ModuleType

from django.conf import settings


def load_driver() -> ModuleType:
    if settings.MEMESH_SQLITE_DRIVER == "sqlean":
        from sqlean import dbapi2 as sqlean_dbapi

        return sqlean_dbapi
    try:
        from pysqlite3 import dbapi2 as pysqlite_dbapi

        return pysqlite_dbapi
    except ImportError:
        from sqlean import dbapi2 as sqlean_dbapi

        return sqlean_dbapi


Database = load_driver()
