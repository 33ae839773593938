"""Entity.objects: one manager whose methods live by idea in their own modules — the keyword
index's writes, recall's reads and the checker's (graph/storage/keyword/), scopes
(entity_filters.py), the entity tables (documents.py), the graph view, export and aggregates."""

from __future__ import annotations

from graph.storage.aggregates import AggregateQueries
from graph.storage.bundle_reads import BundleReadQueries
from graph.storage.documents import DocumentQueries
from graph.storage.entity_filters import EntityScopeQueries
from graph.storage.graph_reads import GraphReadQueries
from graph.storage.keyword.consistency import KeywordConsistency
from graph.storage.keyword.retrieval import KeywordRetrieval
from graph.storage.keyword.writes import KeywordIndexWrites


class EntityManager(
    KeywordIndexWrites,
    KeywordRetrieval,
    KeywordConsistency,
    EntityScopeQueries,
    DocumentQueries,
    GraphReadQueries,
    BundleReadQueries,
    AggregateQueries,
):
    pass
