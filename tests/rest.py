"""Helpers for REST transport tests: JSON posts and envelope assertions."""

from __future__ import annotations

import json
from typing import Any

from django.db import connection

from graph.storage import backend
from graph.storage.keyword.tables import ARCHIVED_FTS

ONE_MB = 1024 * 1024


def post_json(client: Any, route: str, payload: object, **extra: Any) -> Any:
    return client.post(
        f"/v1/{route}", data=json.dumps(payload), content_type="application/json", **extra
    )


def assert_json(response: Any) -> dict[str, Any]:
    assert response["Content-Type"].startswith("application/json")
    return json.loads(response.content)


def assert_ok(response: Any) -> Any:
    """The `data` of a 200 success envelope."""
    assert response.status_code == 200, response.content
    body = assert_json(response)
    assert body["success"] is True
    return body["data"]


def assert_error(response: Any, status: int, error_code: str) -> dict[str, Any]:
    assert response.status_code == status, response.content
    body = assert_json(response)
    assert body["success"] is False
    assert body["errorCode"] == error_code
    assert isinstance(body["error"], str)
    assert body["error"]
    return body


def fts_count(table: str, token: str) -> int:
    """Rows of the keyword index `table` (SQLite's name: live or archived) holding `token`;
    on PostgreSQL, that index's postings of the term."""
    with connection.cursor() as cur:
        if backend.on_postgres():
            cur.execute(
                "SELECT count(*) FROM graph_keyword_posting WHERE archived = %s AND term = %s",
                [table == ARCHIVED_FTS, token],
            )
        else:
            cur.execute(f"SELECT count(*) FROM {table} WHERE {table} MATCH %s", [f'"{token}"'])
        return int(cur.fetchone()[0])


def asgi_scope(
    path: str,
    headers: list[tuple[bytes, bytes]],
    *,
    method: str = "POST",
    query: bytes = b"",
) -> dict[str, Any]:
    """An HTTP request's ASGI scope as uvicorn builds it for a loopback client."""
    return {
        "type": "http",
        "method": method,
        "path": path,
        "raw_path": path.encode(),
        "query_string": query,
        "headers": headers,
        "http_version": "1.1",
        "server": ("127.0.0.1", 3737),
        "client": ("127.0.0.1", 50000),
        "scheme": "http",
        "root_path": "",
    }
