"""System checks: FTS5 is required; sqlite-vec is wanted (without it recall is keyword-only)."""

from __future__ import annotations

from typing import Any

from django.core.checks import CheckMessage, Error, Warning, register
from django.db import connection


def fts5_error(cursor: Any, module: str = "fts5") -> str | None:
    """Try to create a throwaway FTS5 table; return SQLite's error text if it cannot."""
    try:
        cursor.execute(f"CREATE VIRTUAL TABLE temp.memesh_fts5_probe USING {module}(x)")
        cursor.execute("DROP TABLE temp.memesh_fts5_probe")
    except Exception as exc:
        return str(exc)
    return None


@register()
def check_sqlite_extensions(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    messages: list[CheckMessage] = []
    if connection.vendor != "sqlite":
        return messages  # a team server's PostgreSQL: pgvector is checked when it migrates
    with connection.cursor() as cursor:
        error = fts5_error(cursor)
    if error:
        messages.append(
            Error(
                f"SQLite has no FTS5 ({error}); memesh cannot search memories.",
                hint="Install the pinned pysqlite3-binary (Linux x86_64) or sqlean.py wheel.",
                id="memesh.E001",
            )
        )
    vec_error = getattr(connection, "vec_error", None)
    if vec_error:
        messages.append(
            Warning(
                f"sqlite-vec could not be loaded ({vec_error}); recall runs keyword-only "
                "and reports retrieval.degraded when embeddings are configured.",
                hint="Reinstall sqlite-vec, or point MEMESH_SQLITE_VEC_PATH at a build of it.",
                id="memesh.W001",
            )
        )
    return messages
