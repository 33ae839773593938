"""The names and the value form of PostgreSQL's generation tables (graph/storage/postgres/
vectors.py): what the manager, its consistency checks and the tests all spell the same way."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

TABLE_PREFIX = "graph_vectors_g"

# Params: the table's name. Result: its regclass, or NULL when it does not exist (in the
# connection's search path).
_SQL_TABLE_EXISTS = "SELECT to_regclass(?)"


def table_name(generation: int) -> str:
    return f"{TABLE_PREFIX}{int(generation)}"


def table_exists(cur: Any, generation: int) -> bool:
    cur.execute(_SQL_TABLE_EXISTS, [table_name(generation)])
    return cur.fetchone()[0] is not None


def vector_literal(vector: np.ndarray | Sequence[float]) -> str:
    """pgvector's text form of a vector, '[0.1,-0.2,...]'. Python's repr of each float32
    value reads back (strtof) as the same float32, so the stored vector is exact."""
    import numpy as np

    return "[" + ",".join(map(repr, np.asarray(vector, dtype=np.float32).tolist())) + "]"
