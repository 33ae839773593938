"""Entity.objects: the keyword-index and entity-table queries as one manager."""

from __future__ import annotations

from graph.storage.documents import DocumentQueries
from graph.storage.keyword_index import KeywordIndexQueries


class EntityManager(KeywordIndexQueries, DocumentQueries):
    pass
