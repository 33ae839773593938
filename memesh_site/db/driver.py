"""Pick the DB-API driver: pysqlite3 (Linux x86_64 wheel) or sqlean elsewhere.

The stdlib `sqlite3` on many Pythons is built without extension loading, so it cannot load
sqlite-vec. Both drivers bundle a modern SQLite with FTS5. MEMESH_SQLITE_DRIVER=sqlean forces
the fallback.
"""

from __future__ import annotations

import os
from types import ModuleType


def load_driver() -> ModuleType:
    if os.environ.get("MEMESH_SQLITE_DRIVER", "").strip() == "sqlean":
        from sqlean import dbapi2 as sqlean_dbapi

        return sqlean_dbapi
    try:
        from pysqlite3 import dbapi2 as pysqlite_dbapi

        return pysqlite_dbapi
    except ImportError:
        from sqlean import dbapi2 as sqlean_dbapi

        return sqlean_dbapi


Database = load_driver()
