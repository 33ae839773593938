"""The client name carried in a stateless /mcp session id (api/mcp_server/http.py)."""

from __future__ import annotations

import json

from api.mcp_server.http import (
    NAME_MAX,
    initialize_client_name,
    name_from_session_id,
    session_id_for,
)


def test_a_name_round_trips_through_the_session_id_in_visible_ascii():
    for name in ("claude-code", "Cursor ✓ 编辑器", "", "a" * 5000):
        session = session_id_for(name)
        assert all(0x21 <= ord(ch) <= 0x7E for ch in session)
        assert name_from_session_id(session) == name[:NAME_MAX]


def test_a_session_id_of_another_kind_names_no_one():
    for session in ("4f1c2d9e-uuid", "memesh-name.%%%", "memesh-name.//8"):
        assert name_from_session_id(session) is None


def test_only_an_initialize_request_declares_a_name():
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"clientInfo": {"name": "codex", "version": "1"}},
    }
    assert initialize_client_name(json.dumps(initialize).encode()) == "codex"
    assert initialize_client_name(b'{"jsonrpc":"2.0","id":2,"method":"tools/list"}') is None
    assert initialize_client_name(b"not json") is None
    assert initialize_client_name(b'{"method":"initialize","params":{"clientInfo":[]}}') == ""
