"""`memesh db copy --to postgresql://…` (api/cli/installation/db_copy.py): a SQLite home copied
into an empty PostgreSQL database, run as a user runs it — `memesh` processes on a real home
and a real PostgreSQL + pgvector (tests/postgres.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import psycopg
import pytest

from tests.postgres import PostgresServer
from tests.processes import PROCESS_DEADLINE, ROOT, memesh_env

MEMORIES = 1_200  # more than one chunk of the copy (db_copy.CHUNK)


def memesh(home: Path, *args: str, url: str | None = None, stdin: str | None = None) -> Any:
    extra = {"MEMESH_EMBEDDER": "none", "MEMESH_WORKER": "false", "MEMESH_CLI_LOCAL": "1"}
    if url is not None:
        extra["MEMESH_DATABASE_URL"] = url
    return subprocess.run(
        [sys.executable, "-m", "memesh_site.cli", *args],
        cwd=ROOT, env=memesh_env(home, **extra), input=stdin, capture_output=True, text=True,
        timeout=PROCESS_DEADLINE,
    )  # fmt: skip


def ok(done: Any) -> Any:
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def with_local_model(home: Path, *args: str, url: str | None = None) -> Any:
    """`memesh ARGS` with the bundled embedding model, as a user's default install runs it."""
    local = {"MEMESH_EMBEDDER": "local", "MEMESH_WORKER": "false", "MEMESH_CLI_LOCAL": "1"}
    env = memesh_env(home, **local, **({"MEMESH_DATABASE_URL": url} if url else {}))
    done = subprocess.run(
        [sys.executable, "-m", "memesh_site.cli", *args],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=PROCESS_DEADLINE,
    )  # fmt: skip
    return ok(done)


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A home holding 1,200 memories (an imported bundle), relations and tags among them, and a
    few written one by one."""
    home = tmp_path_factory.mktemp("copy-home")
    bundle = {
        "version": "3.0.0",
        "entities": [
            {
                "name": f"note-{i}",
                "type": "note",
                "observations": [f"Observation {i} about the deploy pipeline", f"detail {i}"],
                "tags": [f"batch:{i % 7}"],
            }
            for i in range(MEMORIES)
        ],
    }
    (home / "bundle.json").write_text(json.dumps(bundle))
    ok(memesh(home, "import", str(home / "bundle.json"), "--json"))
    ok(memesh(home, "remember", "--name", "auth-decision", "--type", "decision",
              "--obs", "Chose OAuth 2.0 with RS256 token signing",
              "--tag", "project:myapp"))  # fmt: skip
    ok(memesh(home, "remember", "--name", "auth-followup", "--type", "note",
              "--obs", "Rotate the signing keys every 90 days",
              "--contradicts", "auth-decision"))  # fmt: skip
    return home


def fresh(server: PostgresServer) -> str:
    return server.url(server.fresh_database())


def rows(url: str, table: str) -> int:
    with psycopg.connect(url) as conn:
        return int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])  # type: ignore[index]


def test_a_home_is_copied_whole_and_answers_from_postgres(
    home: Path, postgres_server: PostgresServer, tmp_path: Path
) -> None:
    url = fresh(postgres_server)

    report = json.loads(ok(memesh(home, "db", "copy", "--to", url, "--json")).stdout)

    assert report["verified"] is True
    tables = {t["table"]: (t["source"], t["target"]) for t in report["tables"]}
    assert tables["graph_entity"] == (MEMORIES + 2, MEMORIES + 2)
    assert tables["graph_observation"] == (2 * MEMORIES + 2, 2 * MEMORIES + 2)
    assert tables["graph_relation"] == (1, 1)
    assert report["keywordIndexed"] == MEMORIES + 2
    assert "password" not in json.dumps(report)
    # The team server answers from the copy: keyword recall with the relation between the
    # two, and a new write gets an id after the copied ones.
    elsewhere = tmp_path / "server-home"
    found = json.loads(ok(memesh(elsewhere, "recall", "signing keys", "--json", url=url)).stdout)
    there = json.loads(ok(memesh(home, "recall", "signing keys", "--json")).stdout)
    assert [e["name"] for e in found["entities"]] == [e["name"] for e in there["entities"]]
    by_name = {e["name"]: e for e in found["entities"]}
    assert [r["to"] for r in by_name["auth-followup"]["relations"]] == ["auth-decision"]
    ok(memesh(elsewhere, "remember", "--name", "after-copy", "--type", "note",
              "--obs", "Written on the team server", url=url))  # fmt: skip
    assert rows(url, "graph_entity") == MEMORIES + 3


def test_a_dry_run_says_what_it_would_copy_and_writes_nothing(
    home: Path, postgres_server: PostgresServer
) -> None:
    url = fresh(postgres_server)

    planned = json.loads(ok(memesh(home, "db", "copy", "--to", url, "--dry-run", "--json")).stdout)
    said = ok(memesh(home, "db", "copy", "--to", url, "--dry-run")).stdout

    assert planned["dryRun"] is True
    counts = {t["table"]: t["source"] for t in planned["tables"]}
    assert counts["graph_entity"] == MEMORIES + 2
    assert f"would copy {sum(counts.values())} rows" in said
    assert "nothing written" in said
    with psycopg.connect(url) as conn:
        tables = conn.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'"
        ).fetchone()
    assert tables == (0,)


def test_a_target_that_holds_memories_is_refused_untouched(
    home: Path, postgres_server: PostgresServer, tmp_path: Path
) -> None:
    url = fresh(postgres_server)
    ok(memesh(tmp_path, "remember", "--name", "theirs", "--type", "note", "--obs", "x", url=url))

    done = memesh(home, "db", "copy", "--to", url, "--json")

    assert done.returncode == 1
    assert json.loads(done.stderr.strip().splitlines()[-1])["errorCode"] == (
        "db.copy-target-not-empty"
    )
    assert rows(url, "graph_entity") == 1


def test_an_interrupted_copy_resumes_where_it_stopped(
    home: Path, postgres_server: PostgresServer, tmp_path: Path
) -> None:
    url = fresh(postgres_server)
    ok(memesh(tmp_path, "migrate", "-v", "0", url=url))
    # A real fault in the target, half-way through the observations.
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            "CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
            "IF NEW.id > 1500 THEN RAISE EXCEPTION 'disk quota exceeded'; END IF; "
            "RETURN NEW; END $$"
        )
        conn.execute(
            "CREATE TRIGGER refuse BEFORE INSERT ON graph_observation "
            "FOR EACH ROW EXECUTE FUNCTION refuse()"
        )

    stopped = memesh(home, "db", "copy", "--to", url, "--json")

    assert stopped.returncode == 1
    failure = json.loads(stopped.stderr.strip().splitlines()[-1])
    assert failure["errorCode"] == "db.copy-interrupted"
    assert "graph_observation" in failure["error"] and "again to resume" in failure["error"]
    assert rows(url, "graph_entity") == MEMORIES + 2
    assert rows(url, "graph_observation") == 1000  # the chunks committed before the fault
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DROP TRIGGER refuse ON graph_observation")

    resumed = json.loads(ok(memesh(home, "db", "copy", "--to", url, "--json")).stdout)

    assert resumed["verified"] is True and resumed["resumed"] is True
    total = sum(t["source"] for t in resumed["tables"])
    assert resumed["copied"] == total - (MEMORIES + 2) - 1000  # the rest, nothing twice
    assert rows(url, "graph_observation") == 2 * MEMORIES + 2


def test_a_url_that_is_not_postgresql_is_refused_in_one_sentence(home: Path) -> None:
    done = memesh(home, "db", "copy", "--to", "mysql://db/team")

    assert done.returncode == 1
    assert "must be a postgresql:// URL" in done.stderr
    assert "Traceback" not in done.stderr


def test_vectors_are_copied_and_searched_on_postgres(
    postgres_server: PostgresServer, tmp_path: Path
) -> None:
    home = tmp_path / "home"

    def run(*args: str, url: str | None = None) -> Any:
        return with_local_model(home, *args, url=url)

    for name, text in [
        ("deploy-day", "Deploys go out on Tuesdays only"),
        ("session-cache", "We chose Redis as the session cache"),
        ("token-signing", "Tokens are signed with RS256"),
    ]:
        run("remember", "--name", name, "--type", "decision", "--obs", text)
    assert json.loads(run("embed", "--json").stdout)["embedded"] == 3
    url = fresh(postgres_server)

    report = json.loads(run("db", "copy", "--to", url, "--json").stdout)

    assert report["verified"] is True
    assert {t["table"]: t["target"] for t in report["tables"]}["graph_entityvector"] == 3
    # No word in common with the memory: only its vector finds it, from pgvector's index.
    found = json.loads(run("recall", "which weekday do we release", "--json", url=url).stdout)
    assert found["retrieval"]["mode"] == "hybrid"
    assert found["entities"][0]["name"] == "deploy-day"
    assert found["entities"][0]["match"]["source"] == "semantic"


def test_with_reembed_the_vectors_are_left_for_the_target_to_compute(
    postgres_server: PostgresServer, tmp_path: Path
) -> None:
    home = tmp_path / "home"

    def run(*args: str, url: str | None = None) -> Any:
        return with_local_model(home, *args, url=url)

    run(
        "remember",
        "--name",
        "deploy-day",
        "--type",
        "decision",
        "--obs",
        "Deploys go out on Tuesdays only",
    )
    run(
        "remember",
        "--name",
        "token-signing",
        "--type",
        "decision",
        "--obs",
        "Tokens are signed with RS256",
    )
    assert json.loads(run("embed", "--json").stdout)["embedded"] == 2
    url = fresh(postgres_server)

    report = json.loads(run("db", "copy", "--to", url, "--reembed", "--json").stdout)

    assert report["verified"] is True
    tables = {t["table"]: t for t in report["tables"]}
    assert tables["graph_entityvector"]["target"] == 0
    assert tables["graph_entity"]["target"] == 2
    assert rows(url, "graph_entityvector") == 0
    # The target's own embedding pass computes them, into a generation of its own.
    assert json.loads(run("embed", "--json", url=url).stdout)["embedded"] == 2
    found = json.loads(run("recall", "which weekday do we release", "--json", url=url).stdout)
    assert found["entities"][0]["name"] == "deploy-day"
    assert found["retrieval"]["mode"] == "hybrid"
