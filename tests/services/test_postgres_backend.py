"""memesh on a team server's PostgreSQL (MEMESH_DATABASE_URL): every migration applies there,
`memesh status` and `doctor` say which backend answers, and a database memesh cannot use — no
pgvector, a wrong URL, password or database name, no server — is refused in one sentence with
a non-zero exit, never a traceback, never the password. Real processes on a real PostgreSQL
with pgvector (tests/postgres.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest
from psycopg import sql

from tests.postgres import PostgresServer
from tests.processes import PROCESS_DEADLINE, ROOT, memesh_env, run_python

SECRET = "n0t-in-any-output"


def memesh(args: list[str], home: Path, url: str | None) -> tuple[int, str, str]:
    extra = {"MEMESH_DATABASE_URL": url} if url is not None else {}
    result = run_python(["-m", "memesh_site.cli", *args], memesh_env(home, **extra))
    return result.returncode, result.stdout, result.stderr


def assert_refused_in_one_sentence(code: int, stdout: str, stderr: str) -> str:
    assert code != 0
    assert "Traceback" not in stderr + stdout
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    assert SECRET not in stderr + stdout
    return lines[0]


def test_every_migration_applies_on_postgres_and_status_reports_the_backend(
    postgres_server: PostgresServer, tmp_path: Path
) -> None:
    url = postgres_server.url(postgres_server.fresh_database())

    code, out, err = memesh(["status", "--json"], tmp_path, url)

    assert code == 0, err
    database = json.loads(out)["database"]
    assert database["backend"] == "postgresql"
    assert database["version"].startswith("16.")
    assert database["pgvector"] == "0.6.2"
    assert database["path"] == url.replace("postgres:@", "postgres@")
    check = run_python(
        ["manage.py", "migrate", "--check"], memesh_env(tmp_path, MEMESH_DATABASE_URL=url)
    )
    assert check.returncode == 0, check.stdout + check.stderr
    with psycopg.connect(url) as conn:
        types: dict[str, str] = dict(
            conn.execute(
                "SELECT column_name, data_type FROM information_schema.columns "
                "WHERE table_name = 'graph_entity'"
            ).fetchall()
        )
    assert types["hop_count"] == "integer"
    assert types["expires_at"] == "timestamp with time zone"


def test_processes_started_together_on_a_fresh_database_take_turns_to_migrate(
    postgres_server: PostgresServer, tmp_path: Path
) -> None:
    url = postgres_server.url(postgres_server.fresh_database())
    env = memesh_env(tmp_path, MEMESH_DATABASE_URL=url)
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "memesh_site.cli", "status", "--json"],
            cwd=ROOT,
            env={**env, "MEMESH_HOME": str(tmp_path / f"home{n}")},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(3)
    ]
    outcomes = [(proc.communicate(timeout=PROCESS_DEADLINE), proc.returncode) for proc in procs]

    for (out, err), code in outcomes:
        assert code == 0, err
        assert json.loads(out)["database"]["backend"] == "postgresql"
    with psycopg.connect(url) as conn:
        applied = conn.execute(
            "SELECT app, name, count(*) FROM django_migrations GROUP BY app, name "
            "HAVING count(*) > 1"
        ).fetchall()
    assert applied == []


def test_status_and_doctor_name_postgres_and_pgvector_in_words(
    postgres_server: PostgresServer, tmp_path: Path
) -> None:
    url = postgres_server.url(postgres_server.fresh_database())

    code, status_text, err = memesh(["status"], tmp_path, url)
    assert code == 0, err
    code, doctor_text, err = memesh(["doctor", "--json"], tmp_path, url)
    assert code == 0, err

    assert "PostgreSQL 16." in status_text and "pgvector 0.6.2" in status_text
    checks = {check["name"]: check for check in json.loads(doctor_text)["checks"]}
    assert checks["database"]["data"]["backend"] == "postgresql"
    assert checks["pgvector"] == {
        "name": "pgvector",
        "status": "ok",
        "detail": "0.6.2",
        "data": None,
    }


def test_the_sqlite_default_still_reports_sqlite(tmp_path: Path) -> None:
    code, out, err = memesh(["status", "--json"], tmp_path, None)

    assert code == 0, err
    database = json.loads(out)["database"]
    assert database["backend"] == "sqlite"
    assert database["pgvector"] is None
    assert database["path"].endswith(".db")


def test_a_database_without_pgvector_that_its_role_may_not_create_is_refused(
    postgres_server: PostgresServer, tmp_path: Path
) -> None:
    role = "memesh_plain"
    postgres_server.run(
        sql.SQL(
            "DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = {}) THEN "
            "CREATE ROLE {} LOGIN; END IF; END $$"
        ).format(sql.Literal(role), sql.Identifier(role))
    )
    name = postgres_server.fresh_database(owner=role)
    url = postgres_server.url(name, user=role)

    code, out, err = memesh(["status", "--json"], tmp_path, url)

    line = assert_refused_in_one_sentence(code, out, err)
    failure = json.loads(line)
    assert failure["errorCode"] == "storage.no-pgvector"
    assert failure["error"].startswith(
        f"the database at postgresql://{role}@/{name}?host={postgres_server.data} "
        "has no pgvector extension"
    )
    assert "CREATE EXTENSION vector" in failure["error"]
    with psycopg.connect(url) as conn:  # the refused migration left nothing behind
        tables = conn.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_name = 'graph_entity'"
        ).fetchone()
    assert tables == (0,)


def test_a_wrong_password_is_refused_without_repeating_it(
    postgres_server: PostgresServer, tmp_path: Path
) -> None:
    role = "memesh_password"
    postgres_server.run(
        sql.SQL(
            "DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = {}) THEN "
            "CREATE ROLE {} LOGIN PASSWORD 'the-right-one'; END IF; END $$"
        ).format(sql.Literal(role), sql.Identifier(role))
    )
    # pgserver trusts every local connection; this role must give its password.
    hba = postgres_server.data / "pg_hba.conf"
    rule = f"local all {role} scram-sha-256\n"
    if rule not in hba.read_text():
        hba.write_text(rule + hba.read_text())
        postgres_server.run("SELECT pg_reload_conf()")
    url = postgres_server.url("postgres", user=role, password=SECRET)

    code, out, err = memesh(["status"], tmp_path, url)

    line = assert_refused_in_one_sentence(code, out, err)
    assert f"cannot connect to the database at postgresql://{role}@/postgres" in line
    assert f'password authentication failed for user "{role}"' in line


@pytest.mark.parametrize(
    ("url", "sentence"),
    [
        (f"mysql://u:{SECRET}@h/db", "MEMESH_DATABASE_URL must be a postgresql:// URL"),
        (f"postgresql://u:{SECRET}@h:port/db", "MEMESH_DATABASE_URL's port 'port' is not a number"),
        (f"postgresql://u:{SECRET}@h/db?nosuch=1", "MEMESH_DATABASE_URL is not a valid URL"),
        (
            f"postgresql://u:{SECRET}@127.0.0.1:1/db",
            "cannot connect to the database at postgresql://u@127.0.0.1:1/db: Connection refused",
        ),
    ],
    ids=["not-postgresql", "bad-port", "unknown-parameter", "no-server"],
)
def test_a_bad_url_is_refused_in_one_sentence(tmp_path: Path, url: str, sentence: str) -> None:
    code, out, err = memesh(["status"], tmp_path, url)

    assert sentence in assert_refused_in_one_sentence(code, out, err)


def test_a_missing_database_is_named(postgres_server: PostgresServer, tmp_path: Path) -> None:
    code, out, err = memesh(["doctor"], tmp_path, postgres_server.url("no_such_database"))

    line = assert_refused_in_one_sentence(code, out, err)
    assert 'database "no_such_database" does not exist' in line


def test_health_says_postgresql_answers(postgres_server: PostgresServer, tmp_path: Path) -> None:
    url = postgres_server.url(postgres_server.fresh_database())
    assert memesh(["migrate", "-v", "0"], tmp_path, url)[0] == 0
    script = (
        "import json, django\n"
        "django.setup()\n"
        "from django.test import Client\n"
        "r = Client().get('/v1/health')\n"
        "print(json.dumps({'status': r.status_code, 'body': r.json()}))\n"
    )

    done = run_python(["-c", script], memesh_env(tmp_path, MEMESH_DATABASE_URL=url))

    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    assert answer["status"] == 200
    assert answer["body"]["data"] | {"version": "-"} == {
        "status": "ok",
        "version": "-",
        "entities": 0,
        "vectors": True,
        "backend": "postgresql",
    }


def test_text_with_a_nul_character_is_refused_as_bad_input_and_nothing_is_stored(
    postgres_server: PostgresServer, tmp_path: Path
) -> None:
    # SQLite stores U+0000 as it is; PostgreSQL's text type cannot hold it.
    url = postgres_server.url(postgres_server.fresh_database())
    payload = {"name": "nul-memory", "type": "note", "observations": ["before\u0000after"]}

    code, out, err = memesh(["remember", "--input", json.dumps(payload), "--json"], tmp_path, url)

    assert code == 1 and out == ""
    failure = json.loads(err.strip().splitlines()[-1])
    assert failure["errorCode"] == "validation.bad-body"
    assert "NUL character" in failure["error"]
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT count(*) FROM graph_entity").fetchone() == (0,)


def test_two_workers_split_one_backlog_and_embed_no_memory_twice(
    postgres_server: PostgresServer, tmp_path: Path
) -> None:
    url = postgres_server.url(postgres_server.fresh_database())
    count = 240
    bundle = {
        "version": "3.0.0",
        "entities": [
            {"name": f"note-{i}", "type": "note", "observations": [f"Deploy step {i} of the run"]}
            for i in range(count)
        ],
    }
    (tmp_path / "bundle.json").write_text(json.dumps(bundle))
    local = {"MEMESH_DATABASE_URL": url, "MEMESH_EMBEDDER": "local", "MEMESH_WORKER": "false"}
    imported = run_python(
        ["-m", "memesh_site.cli", "import", str(tmp_path / "bundle.json"), "--json"],
        memesh_env(tmp_path / "a", **local),
    )
    assert imported.returncode == 0, imported.stderr

    # Two workers, as on two hosts (homes of their own), embed the same backlog at once.
    def embed(home: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, "-m", "memesh_site.cli", "embed", "--json"],
            cwd=ROOT, env=memesh_env(tmp_path / home, **local), stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True,
        )  # fmt: skip

    workers = [embed("a"), embed("b")]
    reports = []
    for worker in workers:
        out, err = worker.communicate(timeout=PROCESS_DEADLINE)
        assert worker.returncode == 0, err
        reports.append(json.loads(out))

    # Every memory embedded once: the claims kept the two batches apart.
    assert sum(r["embedded"] for r in reports) == count
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT count(*) FROM graph_entityvector").fetchone() == (count,)
