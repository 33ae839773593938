"""MetaEntry reads on the driver's cursor: recall reads the live vector marker on every query,
and the ORM's `filter().values_list().first()` compiled its SQL for ~0.8 ms of each one."""

from __future__ import annotations

import json
from typing import Any

from django.db import models

from graph.storage.cursor import cursor

# Params: key. Result: the JSON text of its value (JSONField stores text in SQLite; the cast
# turns PostgreSQL's jsonb into the same text, where the driver would parse it).
_SQL_VALUE = "SELECT CAST(value AS TEXT) FROM graph_metaentry WHERE key = ?"


class MetaManager(models.Manager):
    def value(self, key: str) -> Any | None:
        """The decoded value stored under `key`; None when there is no such entry."""
        with cursor() as cur:
            cur.execute(_SQL_VALUE, [key])
            row = cur.fetchone()
        return None if row is None else json.loads(row[0])
