"""Which storage implementation this process runs, chosen once from the configured database
(settings are read once): SQLite's — FTS5 for keywords, sqlite-vec and a process copy of the
sign bits for vectors — or PostgreSQL's (graph/storage/postgres/).

The two implementations answer the same manager methods (Entity.objects, EntityVector.objects):
PostgreSQL's managers subclass SQLite's and override each method whose SQL is SQLite's own, so
the layers above — fusion, scoring, the operations, every transport — call one interface and
never learn which database answers. Statements both databases accept stay shared: the raw
cursor (graph/storage/cursor.py) takes SQLite's `?` placeholders on either.
"""

from __future__ import annotations

from functools import cache

from django.conf import settings

from graph.storage.entities import EntityManager
from graph.storage.vector_index import VectorManager


@cache
def on_postgres() -> bool:
    """Whether the default database is PostgreSQL (MEMESH_DATABASE_URL)."""
    return "postgres" in str(settings.DATABASES["default"]["ENGINE"])


def entity_manager() -> EntityManager:
    """Entity.objects for this process's database."""
    if on_postgres():
        from graph.storage.postgres.entities import PostgresEntityManager

        return PostgresEntityManager()
    return EntityManager()


def vector_manager() -> VectorManager:
    """EntityVector.objects for this process's database."""
    if on_postgres():
        from graph.storage.postgres.vectors import PostgresVectorManager

        return PostgresVectorManager()
    return VectorManager()
