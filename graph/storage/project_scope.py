"""A read's project scope in SQL: the memories a read bound to a project may see.

Those are the project's own (tag `project:<id>`), those filed under no project (no `project:`
tag at all) and global ones (namespace `global`, whoever filed them). graph/ops/kit/scope.py
decides when a read is bound, and to which project; this module only says it in SQL, once,
for the raw queries of recall (`project_scope_sql`) and the ORM reads of the listing,
briefing, user_patterns and export (`project_scope_condition`).
"""

from __future__ import annotations

from typing import Any

from django.db.models import BooleanField
from django.db.models.expressions import Expression

from graph.project_tags import PROJECT_TAG_PREFIX, project_tag

GLOBAL_NAMESPACE = "global"
# Every `project:` tag sorts in [PROJECT_TAG_PREFIX, _PREFIX_END): a range the (entity_id,
# name) unique index of graph_tag answers with one seek, where LIKE 'project:%' could not use
# it (SQLite's LIKE is case-insensitive, so it never becomes an index range on this column).
_PREFIX_END = PROJECT_TAG_PREFIX[:-1] + chr(ord(PROJECT_TAG_PREFIX[-1]) + 1)

# Condition on the entity row aliased {e}, appended after a WHERE on it. Params: the start
# and the end of the `project:` tag range; the project's tag; the global namespace. The two
# index probes come before the namespace: reading the column loads the entity's row. On 10k
# bench memories (80 % filed under a project) that order made the filtered MATCH ~40 % faster
# for one-word queries and a few percent for longer ones.
_SQL_PROJECT_SCOPE = (
    " AND (NOT EXISTS (SELECT 1 FROM graph_tag AS pt WHERE pt.entity_id = {e}.id"
    " AND pt.name >= ? AND pt.name < ?)"
    " OR EXISTS (SELECT 1 FROM graph_tag AS pt WHERE pt.entity_id = {e}.id AND pt.name = ?)"
    " OR {e}.namespace = ?)"
)


def _params(project: str) -> list[object]:
    return [PROJECT_TAG_PREFIX, _PREFIX_END, project_tag(project), GLOBAL_NAMESPACE]


def project_scope_sql(project: str, alias: str = "e") -> tuple[str, list[object]]:
    """The SQL to append after a WHERE on the entity row `alias` keeping `project`'s scope,
    and its parameters."""
    return _SQL_PROJECT_SCOPE.format(e=alias), _params(project)


class ProjectScopeCondition(Expression):
    """The same condition as an ORM expression, for `Entity.objects.filter(...)`: it names
    the entity table by the alias the query being compiled gives it (a subquery's `U0`)."""

    output_field = BooleanField()
    conditional = True

    def __init__(self, project: str) -> None:
        super().__init__()
        self.project = project

    def as_sql(self, compiler: Any, connection: Any) -> tuple[str, list[str | int]]:
        # As Django names it: a table quoted, an alias (`U0`) bare (PostgreSQL folds a bare
        # name to lower case, so a quoted "U0" would name no table there).
        alias = compiler.quote_name_unless_alias(compiler.query.get_initial_alias())
        sql = _SQL_PROJECT_SCOPE.format(e=alias).removeprefix(" AND ")
        # Django's SQL uses %s placeholders (its SQLite cursor turns them into ?).
        return sql.replace("?", "%s"), [str(p) for p in _params(self.project)]


def project_scope_condition(project: str) -> ProjectScopeCondition:
    """`project`'s scope as a filter on a query of entities."""
    return ProjectScopeCondition(project)
