"""Entity.objects: the keyword-index, entity-table, graph-view, export and aggregate queries
as one manager."""

from __future__ import annotations

from graph.storage.aggregates import AggregateQueries
from graph.storage.bundle_reads import BundleReadQueries
from graph.storage.documents import DocumentQueries
from graph.storage.graph_reads import GraphReadQueries
from graph.storage.keyword_index import KeywordIndexQueries


class EntityManager(
    KeywordIndexQueries, DocumentQueries, GraphReadQueries, BundleReadQueries, AggregateQueries
):
    pass
