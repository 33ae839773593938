"""What a filtered read keeps of the entity rows — a namespace, a tag, a project's scope, the
trust filters — as SQL on the entity row `e` and as the same filters on an ORM query, so the
keyword candidates, the vector side's ranking inputs and the listings that run no search all
scope alike; and the ids such a scope holds, kept per thread between writes."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import models

from graph.storage.cursor import ChangeToken, change_token, cursor, db_time
from graph.storage.project_scope import project_scope_condition, project_scope_sql

# Params: the namespace; the tag (the project scope's are graph.storage.project_scope's).
_SQL_NAMESPACE_FILTER = " AND e.namespace = ?"
_SQL_TAG_FILTER = (
    " AND EXISTS (SELECT 1 FROM graph_tag AS t WHERE t.entity_id = e.id AND t.name = ?)"
)
# The trust filters (graph/ops/kit/trust/): facts or hypotheses only; memories not expired by a
# time. Params: the trust status; the time (naive UTC, as stored).
_SQL_TRUST_FILTER = " AND e.trust = ?"
_SQL_UNEXPIRED_FILTER = " AND (e.expires_at IS NULL OR e.expires_at > ?)"

# Result: ids of the active entities the filters keep (the scope of a filtered recall).
_SQL_SCOPED_IDS = "SELECT e.id FROM graph_entity AS e WHERE +e.status = 'active' {filters}"
# Params: now. Result: a row when an active memory has expired by then. The index on
# expires_at answers it; `+e.status` keeps the planner on that index.
_SQL_EXPIRED_EXIST = (
    "SELECT 1 FROM graph_entity AS e WHERE e.expires_at <= ? AND +e.status = 'active' LIMIT 1"
)


@dataclass(frozen=True, slots=True)
class EntityFilters:
    """What a filtered read keeps of the entity rows: a namespace, a tag, `project`'s scope
    (graph.storage.project_scope) and the trust filters; None keeps any."""

    namespace: str | None = None
    tag: str | None = None
    project: str | None = None
    # The trust filters (graph/ops/kit/trust/): facts or hypotheses only; the memories not
    # expired by this time (naive or aware UTC).
    trust: str | None = None
    unexpired_at: datetime | None = None

    def __bool__(self) -> bool:
        return any(
            v is not None
            for v in (self.namespace, self.tag, self.project, self.trust, self.unexpired_at)
        )

    def restrict(self, queryset: models.QuerySet[Any]) -> models.QuerySet[Any]:
        """The same filters on an ORM query of entities: the listings that run no search
        (recall without a query, memory_list) keep exactly what `sql` keeps."""
        qs = queryset
        if self.namespace is not None:
            qs = qs.filter(namespace=self.namespace)
        if self.tag is not None:
            qs = qs.filter(tags__name=self.tag)
        if self.project is not None:
            qs = qs.filter(project_scope_condition(self.project))
        if self.trust is not None:
            qs = qs.filter(trust=self.trust)
        if self.unexpired_at is not None:
            qs = qs.filter(
                models.Q(expires_at__isnull=True) | models.Q(expires_at__gt=self.unexpired_at)
            )
        return qs

    def sql(self) -> tuple[str, list[object]]:
        """The SQL to append after a WHERE on `e`, and its parameters."""
        sql = ""
        params: list[object] = []
        if self.namespace is not None:
            sql += _SQL_NAMESPACE_FILTER
            params.append(self.namespace)
        if self.tag is not None:
            sql += _SQL_TAG_FILTER
            params.append(self.tag)
        if self.project is not None:
            scope_sql, scope_params = project_scope_sql(self.project)
            sql += scope_sql
            params += scope_params
        if self.trust is not None:
            sql += _SQL_TRUST_FILTER
            params.append(self.trust)
        if self.unexpired_at is not None:
            sql += _SQL_UNEXPIRED_FILTER
            params.append(db_time(self.unexpired_at))
        return sql, params


@dataclass
class _KeptScopes:
    """One thread's last scoped_ids answers and the change token they were read under."""

    token: ChangeToken | None = None
    ids: dict[EntityFilters, tuple[int, ...]] = field(default_factory=dict)


_SCOPED_IDS_KEPT = 16  # scopes kept per thread (one per project recalled, mostly)
_scoped_ids_local = threading.local()


def _scoped_ids_kept() -> _KeptScopes:
    kept = getattr(_scoped_ids_local, "kept", None)
    if kept is None:
        kept = _scoped_ids_local.kept = _KeptScopes()
    return kept


class EntityScopeQueries(models.Manager):
    """Which active entities a scope holds, a part of Entity.objects."""

    # SQLite's statements, with its planner hints (graph/storage/postgres/scopes.py has
    # PostgreSQL's, whose planner takes no hints).
    _sql_scoped_ids = _SQL_SCOPED_IDS
    _sql_expired_exist = _SQL_EXPIRED_EXIST

    def scoped_ids(
        self,
        *,
        namespace: str | None = None,
        tag: str | None = None,
        project: str | None = None,
        trust: str | None = None,
        unexpired_at: datetime | None = None,
    ) -> list[int]:
        """Ids of the active entities these filters keep: the vector side searches among them
        so that a filtered recall's neighbours are not spent on memories the filter drops.

        Listing a wide scope scans the entity table with index probes per row (a project's
        scope: ~10 ms at 10k memories on the shared 2-core machine, docs/recall.md), so each
        thread keeps its last answers until anything is committed to the database
        (graph.storage.cursor.change_token): a server answering recalls between writes lists
        a scope once. The list returned is the caller's to keep.
        """
        filters = EntityFilters(namespace, tag, project, trust, unexpired_at)
        token = change_token()
        kept = _scoped_ids_kept()
        if token is not None and kept.token == token and filters in kept.ids:
            return list(kept.ids[filters])
        sql, params = filters.sql()
        with cursor() as cur:
            cur.execute(self._sql_scoped_ids.format(filters=sql), params)
            ids = [row[0] for row in cur.fetchall()]
        if token is not None:
            if kept.token != token or len(kept.ids) >= _SCOPED_IDS_KEPT:
                kept.token, kept.ids = token, {}
            kept.ids[filters] = tuple(ids)
        return ids

    def expired_exist(self, now: datetime) -> bool:
        """Whether any active memory has expired by `now`: only then does a recall pay for the
        expiry filter (one probe of the expires_at index)."""
        with cursor() as cur:
            cur.execute(self._sql_expired_exist, [db_time(now)])
            return cur.fetchone() is not None
