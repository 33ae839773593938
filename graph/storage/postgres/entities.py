"""Entity.objects on PostgreSQL: SQLite's manager with the methods whose SQL is SQLite's own
answered in PostgreSQL's dialect, each family in its own module."""

from __future__ import annotations

from graph.storage.entities import EntityManager
from graph.storage.postgres.aggregates import PostgresAggregateQueries
from graph.storage.postgres.bundle_reads import PostgresBundleReadQueries
from graph.storage.postgres.documents import PostgresDocumentQueries
from graph.storage.postgres.graph_reads import PostgresGraphReadQueries
from graph.storage.postgres.keyword import PostgresKeywordIndexWrites
from graph.storage.postgres.keyword_consistency import PostgresKeywordConsistency
from graph.storage.postgres.keyword_retrieval import PostgresKeywordRetrieval
from graph.storage.postgres.scopes import PostgresScopeQueries
from graph.storage.postgres.vectors import PostgresEntityVectorDrops


class PostgresEntityManager(
    PostgresKeywordIndexWrites,
    PostgresKeywordRetrieval,
    PostgresKeywordConsistency,
    PostgresScopeQueries,
    PostgresDocumentQueries,
    PostgresGraphReadQueries,
    PostgresBundleReadQueries,
    PostgresAggregateQueries,
    PostgresEntityVectorDrops,
    EntityManager,
):
    pass
