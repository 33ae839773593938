"""Whose file is whose in a home memesh may share with the original MeMesh
(core/original_memesh.py, core/paths.py's `own_file`) and the original's entries in an agent
host's files (hosts/original.py). The original's real files are used end to end in
tests/e2e/test_original_memesh_home.py; here each rule is held on its own."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
import tomlkit

from core import original_memesh, paths
from core.original_memesh import Owner
from hosts import edits, original

ORIGINALS_SERVER = {"type": "stdio", "command": "memesh-mcp", "args": [], "env": {}}
MEMESHS_SERVER = {"type": "stdio", "command": "/opt/memesh/bin/memesh", "args": ["mcp"]}


def database(path: Path, *statements: str) -> Path:
    conn = sqlite3.connect(path)
    for statement in statements:
        conn.execute(statement)
    conn.commit()
    conn.close()
    return path


def memeshs(path: Path) -> Path:
    return database(
        path,
        "CREATE TABLE django_migrations (id INTEGER PRIMARY KEY, app TEXT, name TEXT)",
        "INSERT INTO django_migrations (app, name) VALUES ('graph', '0001_initial')",
    )


def originals(path: Path) -> Path:
    # The original's four memory tables, as its storage/schema.js names them.
    return database(
        path,
        "CREATE TABLE entities (id INTEGER PRIMARY KEY, name TEXT, status TEXT)",
        "CREATE TABLE observations (id INTEGER PRIMARY KEY, entity_id INTEGER, content TEXT)",
        "CREATE TABLE relations (id INTEGER PRIMARY KEY)",
        "CREATE TABLE tags (id INTEGER PRIMARY KEY)",
        "INSERT INTO entities (name, status) VALUES ('a', 'active'), ('b', 'archived')",
    )


def test_each_kind_of_file_is_told_apart(tmp_path: Path) -> None:
    empty = tmp_path / "empty.db"
    empty.touch()
    not_sqlite = tmp_path / "notes.db"
    not_sqlite.write_text("not a database")
    no_tables = database(tmp_path / "bare.db", "PRAGMA user_version = 1")
    other_django = database(
        tmp_path / "django.db",
        "CREATE TABLE django_migrations (id INTEGER PRIMARY KEY, app TEXT, name TEXT)",
        "INSERT INTO django_migrations (app, name) VALUES ('shop', '0001_initial')",
    )

    assert original_memesh.classify(tmp_path / "missing.db") is Owner.ABSENT
    assert original_memesh.classify(empty) is Owner.ABSENT
    assert original_memesh.classify(no_tables) is Owner.ABSENT
    assert original_memesh.classify(not_sqlite) is Owner.UNREADABLE
    assert original_memesh.classify(memeshs(tmp_path / "m.db")) is Owner.MEMESH
    assert original_memesh.classify(originals(tmp_path / "o.db")) is Owner.ORIGINAL
    assert original_memesh.classify(other_django) is Owner.FOREIGN
    invoices = database(tmp_path / "i.db", "CREATE TABLE invoices (id INTEGER PRIMARY KEY)")
    assert original_memesh.classify(invoices) is Owner.FOREIGN


def test_a_database_being_created_by_memesh_right_now_is_memeshs(tmp_path: Path) -> None:
    # Another process's first `migrate` records Django's own apps before graph's: a process
    # starting beside it must not take memesh's new file for another program's.
    halfway = database(
        tmp_path / "new.db",
        "CREATE TABLE django_migrations (id INTEGER PRIMARY KEY, app TEXT, name TEXT)",
        "INSERT INTO django_migrations (app, name) VALUES ('contenttypes', '0001_initial')",
        "INSERT INTO django_migrations (app, name) VALUES ('auth', '0001_initial')",
    )
    assert original_memesh.classify(halfway) is Owner.MEMESH


def test_memeshs_stamp_in_the_header_tells_its_file_without_opening_it(tmp_path: Path) -> None:
    stamped = database(
        tmp_path / "stamped.db", f"PRAGMA application_id = {original_memesh.APPLICATION_ID}"
    )
    assert original_memesh.classify(stamped) is Owner.MEMESH
    # The stamp is read from the file's bytes: no SQLite connection, so no -shm left behind.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["stamped.db"]
    other = database(tmp_path / "other.db", "PRAGMA application_id = 1", "CREATE TABLE t (x)")
    assert original_memesh.classify(other) is Owner.FOREIGN


def test_the_database_memesh_creates_carries_its_stamp(tmp_path: Path) -> None:
    from core.db.base import stamp_as_memesh

    conn = sqlite3.connect(tmp_path / "graph.db")
    stamp_as_memesh(conn)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.close()
    header = (tmp_path / "graph.db").read_bytes()[:100]
    assert original_memesh.has_memesh_stamp(header)


def test_the_original_is_counted_without_its_archived_memories(tmp_path: Path) -> None:
    found = original_memesh.find(originals(tmp_path / "knowledge-graph.db"))

    assert found is not None and (found.memories, found.archived) == (1, 1)
    assert original_memesh.memory_names(found.path) == ["a"]
    assert found.command == f"memesh import --from memesh4 {found.path} --apply"
    assert original_memesh.find(memeshs(tmp_path / "m.db")) is None


def test_a_home_memesh_made_keeps_its_names(tmp_path: Path) -> None:
    memeshs(tmp_path / paths.DB_FILENAME)

    assert paths.own_file(tmp_path, paths.DB_FILENAME) == tmp_path / "knowledge-graph.db"
    assert paths.own_file(tmp_path, paths.CONFIG_FILENAME) == tmp_path / "config.json"
    assert paths.own_file(Path(tmp_path / "new"), "config.json") == tmp_path / "new/config.json"


def test_beside_the_originals_database_memesh_takes_names_of_its_own(tmp_path: Path) -> None:
    originals(tmp_path / paths.DB_FILENAME)

    assert paths.own_file(tmp_path, paths.DB_FILENAME) == tmp_path / "memesh-graph.db"
    assert paths.own_file(tmp_path, paths.CONFIG_FILENAME) == tmp_path / "memesh-config.json"
    assert paths.own_file(tmp_path, "transcript-mining.json") == (
        tmp_path / "memesh-transcript-mining.json"
    )
    assert paths.own_file(tmp_path, "secret-key") == tmp_path / "secret-key"


@pytest.mark.parametrize("mark", ["install-hooks.json", "install.json", "update-check.4.6.json"])
def test_the_originals_own_files_claim_the_path_before_its_database_exists(
    tmp_path: Path, mark: str
) -> None:
    (tmp_path / mark).write_text("{}")

    assert paths.own_file(tmp_path, paths.DB_FILENAME) == tmp_path / "memesh-graph.db"


def test_memesh_keeps_its_own_database_once_it_has_one(tmp_path: Path) -> None:
    memeshs(tmp_path / "memesh-graph.db")  # the original's file was imported, then deleted

    assert paths.own_file(tmp_path, paths.DB_FILENAME) == tmp_path / "memesh-graph.db"
    assert paths.own_file(tmp_path, paths.CONFIG_FILENAME) == tmp_path / "memesh-config.json"


# --- the original's entries in a host's files ----------------------------------------------------


def test_the_originals_mcp_server_is_not_memeshs_and_is_never_replaced(tmp_path: Path) -> None:
    document = {"mcpServers": {"memesh": ORIGINALS_SERVER}}

    assert edits.json_server(document) is None
    assert edits.without_json_server(document) is document  # an uninstall leaves it
    with pytest.raises(original.OriginalServerInTheWay) as refused:
        original.refuse_replacing(tmp_path / ".claude.json", ORIGINALS_SERVER, "memesh")
    assert refused.value.error_code == "setup.original-memesh-server"
    original.refuse_replacing(tmp_path / ".claude.json", MEMESHS_SERVER, "memesh")  # no error
    assert original.found_in(document) == ["its MCP server"]


@pytest.mark.parametrize(
    "entry",
    [
        {"command": "memesh-mcp"},
        {"command": "/usr/local/bin/memesh-mcp"},
        {"command": "npx", "args": ["-y", "@pcircle/memesh"]},
        {"command": "node", "args": ["/x/node_modules/@pcircle/memesh/dist/mcp/server.js"]},
    ],
)
def test_the_originals_server_is_recognised_however_it_is_started(entry: dict) -> None:
    assert original.is_original_server(entry)


def test_the_originals_codex_server_is_neither_read_as_memeshs_nor_overwritten(
    tmp_path: Path,
) -> None:
    config = tmp_path / "config.toml"
    document = tomlkit.parse('[mcp_servers.memesh]\ncommand = "memesh-mcp"\nargs = []\n')

    assert edits.toml_server(config, document) is None
    edits.remove_toml_server(config, document)
    assert "memesh" in document["mcp_servers"]  # type: ignore[operator]
    with pytest.raises(original.OriginalServerInTheWay):
        edits.set_toml_server(config, document, {"command": "memesh", "args": ["mcp"]})
    assert document["mcp_servers"]["memesh"]["command"] == "memesh-mcp"  # type: ignore[index]


def test_the_originals_plugin_and_hooks_are_its_own() -> None:
    settings = {
        "enabledPlugins": {"memesh@pcircle-memesh": True, "memesh@memesh": True},
        "hooks": {
            "Stop": [
                {
                    "matcher": "*",
                    "hooks": [
                        {
                            "type": "command",
                            "command": "/n/@pcircle/memesh/scripts/hooks/session-summary.js",
                            "_memesh": True,
                        }
                    ],
                }
            ]
        },
    }

    assert edits.enabled_plugins(settings) == ["memesh@memesh"]
    assert edits.without_memesh_hooks(settings) == settings
    assert original.found_in(settings) == ["plugin memesh@pcircle-memesh", "1 hook"]
