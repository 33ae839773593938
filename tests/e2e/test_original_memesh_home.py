"""memesh on a home the original MeMesh (4.6, run for real: tests/original_memesh.py) already
uses, as a user coming from it meets it: the original's database sits at the default path
`~/.memesh/knowledge-graph.db` with its config.json beside it. memesh keeps its own files
beside them and never writes into them, says at start what the original holds and the one
command that brings it in, and the original goes on working on its own file."""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest

from core import original_memesh
from tests.original_memesh import CONFIG_RELATIVE, DB_RELATIVE, original_cli
from tests.processes import PROCESS_DEADLINE, memesh, memesh_env, serving

pytestmark = pytest.mark.slow  # each command is a Node or a Python + Django process

MEMESH_DB = "memesh-graph.db"
MEMESH_CONFIG = "memesh-config.json"
IMPORT = "memesh import --from memesh4"


@pytest.fixture(scope="module")
def original_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A HOME in which the original stored two memories and one setting, with its own CLI."""
    user = tmp_path_factory.mktemp("original-user")
    original_cli(
        user, "remember", "--name", "token-signing", "--type", "decision",
        "--obs", "API tokens are signed with Ed25519", "--json",
    )  # fmt: skip
    original_cli(
        user, "remember", "--name", "storage-choice", "--type", "decision",
        "--obs", "SQLite in WAL mode", "--tags", "db", "--json",
    )  # fmt: skip
    original_cli(user, "config", "set", "sessionLimit", "7")
    return user


@pytest.fixture
def user(original_home: Path, tmp_path: Path) -> Path:
    """This test's copy of the original's HOME (the tests change it)."""
    return Path(shutil.copytree(original_home, tmp_path / "user"))


def run(user: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """`memesh ARGS` with HOME at `user` and memesh's home at its default, ~/.memesh."""
    return subprocess.run(
        memesh(*args),
        cwd=user,
        env=memesh_env(user / ".memesh", MEMESH_EMBEDDER="none", HOME=str(user), **env),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=PROCESS_DEADLINE,
        check=False,
    )


def snapshot(db: Path) -> tuple[str, list[str]]:
    """The file's bytes (hashed) and its tables, read without writing."""
    digest = hashlib.sha256(db.read_bytes()).hexdigest()
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        tables = sorted(r[0] for r in conn.execute("SELECT name FROM sqlite_master"))
    finally:
        conn.close()
    return digest, tables


def original_names(user: Path) -> set[str]:
    exported = json.loads(original_cli(user, "export").stdout)
    return {entity["name"] for entity in exported["entities"]}


def test_status_and_doctor_leave_the_originals_file_alone_and_name_the_import(
    user: Path,
) -> None:
    original_db, original_config = user / DB_RELATIVE, user / CONFIG_RELATIVE
    before, config_before = snapshot(original_db), original_config.read_bytes()
    assert "entities" in before[1]

    shown = run(user, "status")
    as_json = run(user, "status", "--json")
    doctor = run(user, "doctor", "--json", "--no-probe")

    assert shown.returncode == 0, shown.stderr
    assert "original    The original MeMesh keeps 2 memories in" in shown.stdout
    assert f"{IMPORT} {original_db}" in shown.stdout
    report = json.loads(as_json.stdout)
    assert report["database"]["path"] == str(user / ".memesh" / MEMESH_DB)
    assert report["originalMemesh"] == {
        "path": str(original_db),
        "memories": 2,
        "archived": 0,
        "command": f"{IMPORT} {original_db} --apply",
        "inMemeshDatabase": False,
        "notImported": 2,
    }
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    [check] = [c for c in json.loads(doctor.stdout)["checks"] if c["name"] == "original MeMesh"]
    assert check["status"] == "warn"
    assert check["data"]["memories"] == 2
    assert IMPORT in check["detail"]
    # Not a byte of the original's database or settings changed; memesh's are its own files.
    assert snapshot(original_db) == before
    assert original_config.read_bytes() == config_before
    _, memesh_tables = snapshot(user / ".memesh" / MEMESH_DB)
    assert "django_migrations" in memesh_tables
    assert "entities" not in memesh_tables
    # memesh's file carries memesh's stamp in its header; the original's does not.
    assert original_memesh.has_memesh_stamp((user / ".memesh" / MEMESH_DB).read_bytes()[:100])
    assert not original_memesh.has_memesh_stamp(original_db.read_bytes()[:100])
    # And the original still has its memories, and still stores new ones in its own file.
    assert original_names(user) == {"token-signing", "storage-choice"}
    original_cli(user, "remember", "--name", "third", "--type", "note", "--obs", "still works")
    assert original_names(user) == {"token-signing", "storage-choice", "third"}
    assert not any(t.startswith(("graph_", "django_")) for t in snapshot(original_db)[1])


def test_the_first_cli_command_says_it_once_and_again_when_the_original_grows(
    user: Path,
) -> None:
    first = run(user, "recall", "tokens")
    second = run(user, "recall", "tokens")
    original_cli(user, "remember", "--name", "later", "--type", "note", "--obs", "added later")
    third = run(user, "recall", "tokens")
    as_json = run(user, "recall", "tokens", "--json")

    assert first.returncode == 0, first.stderr
    assert "The original MeMesh keeps 2 memories in" in first.stderr
    assert f"{IMPORT} {user / DB_RELATIVE}" in first.stderr
    assert "original MeMesh" not in second.stderr
    assert "The original MeMesh keeps 3 memories in" in third.stderr
    assert "original MeMesh" not in as_json.stderr


def test_once_memesh_holds_the_originals_memories_the_command_line_falls_silent(
    user: Path,
) -> None:
    # What an import leaves, by the rule the notices use (the names): the two memories in
    # memesh's own database.
    for name in ("token-signing", "storage-choice"):
        kept = run(user, "remember", "--name", name, "--type", "decision", "--obs", "imported")
        assert kept.returncode == 0, kept.stderr

    later = run(user, "recall", "tokens")
    report = json.loads(run(user, "status", "--json").stdout)

    assert "original MeMesh" not in later.stderr
    assert report["originalMemesh"]["notImported"] == 0
    assert report["originalMemeshNotice"] == (
        f"The original MeMesh keeps 2 memories in {user / DB_RELATIVE}, all of them in memesh "
        "too (imported)"
    )


def test_serve_says_it_when_it_starts(user: Path, tmp_path: Path) -> None:
    log = tmp_path / "serve.log"
    before = snapshot(user / DB_RELATIVE)
    with serving(user / ".memesh", log, "--no-worker", MEMESH_EMBEDDER="none", HOME=str(user)):
        pass
    text = log.read_text()
    assert f"(db: {user / '.memesh' / MEMESH_DB})" in text
    assert "The original MeMesh keeps 2 memories in" in text
    assert f"{IMPORT} {user / DB_RELATIVE}" in text
    assert snapshot(user / DB_RELATIVE) == before


def test_memesh_settings_go_to_a_file_of_its_own(user: Path) -> None:
    config_before = (user / CONFIG_RELATIVE).read_bytes()

    set_limit = run(user, "config", "set", "sessionLimit", "12")
    shown = run(user, "config", "list", "--json")

    assert set_limit.returncode == 0, set_limit.stderr
    assert json.loads((user / ".memesh" / MEMESH_CONFIG).read_text()) == {"sessionLimit": 12}
    assert (user / CONFIG_RELATIVE).read_bytes() == config_before  # the original's: 7
    assert json.loads(shown.stdout)["config"]["sessionLimit"] == 12


def test_an_explicit_database_path_at_the_originals_file_is_refused(
    user: Path, tmp_path: Path
) -> None:
    original_db = user / DB_RELATIVE
    before = snapshot(original_db)

    refused = run(user, "recall", "tokens", "--json", MEMESH_DB_PATH=str(original_db))
    in_words = run(user, "remember", "--name", "x", "--obs", "y", MEMESH_DB_PATH=str(original_db))

    assert refused.returncode == 1
    failure = json.loads(refused.stderr.strip().splitlines()[-1])
    assert failure["errorCode"] == "storage.foreign-database"
    assert "original MeMesh's database" in failure["error"]
    assert f"{IMPORT} {original_db}" in failure["error"]
    assert in_words.returncode == 1
    assert "never writes into" in in_words.stderr
    assert snapshot(original_db) == before


def test_another_programs_database_is_refused_too(user: Path, tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
    conn.commit()
    conn.close()
    before = snapshot(other)

    refused = run(user, "status", "--json", MEMESH_DB_PATH=str(other))

    assert refused.returncode == 1
    failure = json.loads(refused.stderr.strip().splitlines()[-1])
    assert failure["errorCode"] == "storage.foreign-database"
    assert "another program's database" in failure["error"]
    assert snapshot(other) == before


# --- both products in Claude Code ----------------------------------------------------------------

# What `claude mcp add -s user memesh memesh-mcp` (the original's `memesh setup`) writes.
ORIGINALS_SERVER = {"type": "stdio", "command": "memesh-mcp", "args": [], "env": {}}


def handlers(settings_file: Path) -> list[dict[str, object]]:
    settings = json.loads(settings_file.read_text())
    return [h for groups in settings["hooks"].values() for g in groups for h in g["hooks"]]


def test_setup_keeps_the_originals_hooks_and_server_and_doctor_says_both_are_there(
    user: Path,
) -> None:
    original_cli(user, "install-hooks")  # the original's hooks in ~/.claude/settings.json
    settings_file, state_file = user / ".claude" / "settings.json", user / ".claude.json"
    originals = handlers(settings_file)
    assert originals and all(h.get("_memesh") is True for h in originals)
    state_file.write_text(json.dumps({"mcpServers": {"memesh": ORIGINALS_SERVER}}))
    files_before = [settings_file.read_bytes(), state_file.read_bytes()]

    refused = run(user, "setup", "claude-code", "--json")

    assert refused.returncode == 1
    failure = json.loads(refused.stderr.strip().splitlines()[-1])
    assert failure["errorCode"] == "setup.original-memesh-server"
    assert "the original MeMesh's, which memesh does not replace" in failure["error"]
    assert [settings_file.read_bytes(), state_file.read_bytes()] == files_before

    # The user removes the original's server (`claude mcp remove memesh`): memesh sets up
    # beside the original's hooks, and doctor says that both products are there.
    state_file.write_text("{}")
    installed = run(user, "setup", "claude-code", "--json")
    doctor = run(user, "doctor", "--json", "--no-probe")
    removed = run(user, "setup", "claude-code", "--uninstall", "--json")

    assert installed.returncode == 0, installed.stderr
    assert removed.returncode == 0, removed.stderr
    [claude] = [c for c in json.loads(doctor.stdout)["integrations"] if c["name"] == "claude-code"]
    assert claude["status"] == "warn"
    assert (
        f"the original MeMesh is set up too ({len(originals)} hooks in the user files)"
        in (claude["detail"])
    )
    assert claude["data"]["installed"] is True
    assert handlers(settings_file) == originals  # after install and uninstall alike


def test_the_originals_plugin_is_not_taken_for_memeshs(user: Path) -> None:
    settings_file = user / ".claude" / "settings.json"
    settings_file.parent.mkdir(parents=True)
    settings_file.write_text(json.dumps({"enabledPlugins": {"memesh@pcircle-memesh": True}}))

    doctor = run(user, "doctor", "--json", "--no-probe")

    [claude] = [c for c in json.loads(doctor.stdout)["integrations"] if c["name"] == "claude-code"]
    assert claude["status"] == "ok"
    assert claude["data"]["installed"] is False
    assert "the original MeMesh is set up too (plugin memesh@pcircle-memesh" in claude["detail"]


def test_doctor_says_when_the_original_installed_later_keeps_its_tables_in_memeshs_database(
    tmp_path: Path,
) -> None:
    user = tmp_path / "user"
    user.mkdir()
    made = run(user, "remember", "--name", "memesh-first", "--type", "note", "--obs", "mine")
    assert made.returncode == 0, made.stderr
    db = user / DB_RELATIVE  # memesh's own, under the common name: the home was memesh's
    # The original, installed later, opens the file at its path, and stores there.
    original_cli(
        user, "remember", "--name", "queue-choice", "--type", "decision",
        "--obs", "Jobs go through Redis streams", "--json",
    )  # fmt: skip
    tables = snapshot(db)[1]
    assert "django_migrations" in tables and "entities" in tables

    doctor = run(user, "doctor", "--json", "--no-probe")

    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    [check] = [c for c in json.loads(doctor.stdout)["checks"] if c["name"] == "original MeMesh"]
    assert check["status"] == "warn"
    assert check["data"]["inMemeshDatabase"] is True
    assert (check["data"]["memories"], check["data"]["notImported"]) == (1, 1)
    # (doctor shows paths under HOME as ~: a report is pasted into bug reports)
    shown = "~/.memesh/knowledge-graph.db"
    assert f"1 memory in tables of its own inside memesh's database {shown}" in check["detail"]
    assert f"bring them in with: {IMPORT} {shown}" in check["detail"]

    # The command it names (a dry run first, then --apply) reads memesh's own file.
    tried = run(user, "import", "--from", "memesh4", str(db))
    assert "Would create 1" in tried.stdout, tried.stdout + tried.stderr
    imported = run(user, "import", "--from", "memesh4", str(db), "--apply")
    assert imported.returncode == 0, imported.stdout + imported.stderr
    recalled = json.loads(run(user, "recall", "Redis streams", "--json").stdout)
    assert "queue-choice" in {e["name"] for e in recalled["entities"]}
    [check] = [
        c
        for c in json.loads(run(user, "doctor", "--json", "--no-probe").stdout)["checks"]
        if c["name"] == "original MeMesh"
    ]
    assert check["status"] == "ok"
    assert "all of them in memesh too (imported)" in check["detail"]
