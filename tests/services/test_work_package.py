"""work_package (dream/work_package/operation.py) against the real SQLite database and a fake Claude
Code folder: packages are bounded, fenced and masked; a submission is checked for scope and
freshness and validated strictly, then staged as one pending proposal like the dream's; a
deferral (and a prepare) leaves the database byte for byte as it was; no action applies."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.db import connection

from core import fence, paths
from core.errors import MemeshError
from dream import prompts
from dream.dreamer import MAX_CLUSTER
from dream.work_package.operation import WORK_PACKAGE
from dream.work_package.sources import MAX_TRANSCRIPT_CHARS, MAX_TRANSCRIPT_TURNS
from graph.models import Entity
from graph.ops.kit.operation import CallContext
from proposals.decisions import proposal_reject
from proposals.models import Proposal, ProposalKind, ProposalStatus
from tests.dreams import commits
from tests.helpers import remember
from tests.transcripts import (
    CODEX_SESSION_ID,
    GEMINI_SESSION_ID,
    PASTED_KEY,
    SESSION_IDS,
    append_turns,
    install,
    install_codex,
    install_gemini,
)

pytestmark = [pytest.mark.django_db, pytest.mark.clean_indexes]

REST = CallContext(source_host="http", binds_reads=False)
DIGEST = {
    "name": "parser-test-fixes",
    "title": "A week of parser test fixes",
    "observations": ["The flaky parser test was fixed several times this week."],
}
LESSON = {
    "type": "lesson_learned",
    "name": "embedder-key-separate",
    "title": "The embedder has its own key",
    "observations": ["The embedder reads MEMESH_EMBEDDER_API_KEY before OPENAI_API_KEY."],
    "evidence": "set the embedder key separately",
}


def call(payload: dict[str, Any], ctx: CallContext = REST) -> dict[str, Any]:
    return WORK_PACKAGE.run(payload, ctx)


def refused(payload: dict[str, Any], ctx: CallContext = REST) -> MemeshError:
    with pytest.raises(MemeshError) as caught:
        call(payload, ctx)
    return caught.value


def submission(package: dict[str, Any], result: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "action": "submit",
        "package_id": package["package_id"],
        "source_hash": package["source_hash"],
        "workspace_hash": package["workspace_hash"],
        "result": result,
        **extra,
    }


def database_dump() -> list[object]:
    """The schema and every row of every stored table (a virtual table's rows are in its
    shadow tables, which are listed), in rowid order. On PostgreSQL: the columns of every
    table, and every row with the id of the transaction that last wrote it, in storage order
    (a row written again, even unchanged, moves and takes a new id)."""
    if connection.vendor == "postgresql":
        return postgres_dump()
    with connection.cursor() as cursor:
        cursor.execute("SELECT type, name, sql FROM sqlite_master ORDER BY type, name")
        schema = cursor.fetchall()
        rows: list[object] = [schema]
        for type_, name, sql in schema:
            if type_ != "table" or (sql or "").upper().startswith("CREATE VIRTUAL TABLE"):
                continue
            without_rowid = "WITHOUT ROWID" in (sql or "").upper()
            order = "" if without_rowid else " ORDER BY rowid"
            cursor.execute(f'SELECT * FROM "{name}"{order}')  # names from sqlite_master
            rows.append((name, cursor.fetchall()))
    return rows


def postgres_dump() -> list[object]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT table_name, column_name, data_type FROM information_schema.columns"
            " WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position"
        )
        rows: list[object] = [cursor.fetchall()]
        for name in connection.introspection.table_names(cursor):
            table = connection.ops.quote_name(name)
            cursor.execute(f"SELECT CAST(xmin AS TEXT), * FROM {table} ORDER BY ctid")
            rows.append((name, cursor.fetchall()))
    return rows


def home_files() -> dict[str, tuple[int, int]]:
    home = paths.memesh_home()
    return {
        str(p.relative_to(home)): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in home.rglob("*")
        if p.is_file()
    }


# --- digest packages -------------------------------------------------------------------------


def test_a_digest_package_is_the_week_of_episodic_memories_fenced_and_masked() -> None:
    names = commits(6, project="alpha")
    remember(
        "commit-alpha-key", f"commit 9: rotated {PASTED_KEY}", type="commit", tags=["project:alpha"]
    )
    remember("alpha-decision", "not episodic", type="note", tags=["project:alpha"])

    out = call({"action": "prepare", "kind": "digest", "project": "alpha"})

    package = out["package"]
    assert out["available"] is True
    assert package["kind"] == "digest" and package["project"] == "alpha"
    assert package["package_id"].startswith("digest:") and package["package_id"].endswith(":alpha")
    assert package["items"] == 7
    assert all(name in package["material"] for name in names)
    assert "alpha-decision" not in package["material"]
    assert (
        fence.PROMPT_MEMORIES_PREAMBLE in package["material"] and "```text" in package["material"]
    )
    assert PASTED_KEY not in json.dumps(out)
    assert "[secret: " in package["material"]
    assert package["result_schema"]["required"] == ["name", "observations"]


def test_a_digest_package_holds_at_most_the_dreamers_cluster_of_memories() -> None:
    commits(MAX_CLUSTER + 5, project="alpha")

    package = call({"action": "prepare", "kind": "digest"})["package"]

    assert package["items"] == MAX_CLUSTER
    assert "commit-alpha-44" not in package["material"]


def test_no_digest_package_when_no_week_has_enough_memories_or_one_is_pending() -> None:
    commits(4, project="alpha")
    assert call({"action": "prepare", "kind": "digest"})["available"] is False
    commits(2, project="alpha", start=4)
    package = call({"action": "prepare", "kind": "digest"})["package"]
    call(submission(package, DIGEST))

    again = call({"action": "prepare", "kind": "digest"})

    assert again["available"] is False and again["package"] is None
    assert "episodic memories" in again["reason"]


def test_a_submitted_digest_is_one_pending_proposal_as_the_dreamer_stages_it() -> None:
    names = commits(5, project="alpha")
    package = call({"action": "prepare", "kind": "digest"})["package"]
    before = Entity.objects.count()

    out = call(submission(package, DIGEST), CallContext(source_host="claude-code"))

    proposal = Proposal.objects.get()
    assert out["proposal"] == {
        "id": proposal.pk,
        "kind": "digest",
        "status": "pending",
        "created": True,
        "review_path": f"/review/{proposal.pk}/",
    }
    assert proposal.kind == ProposalKind.DIGEST and proposal.status == ProposalStatus.PENDING
    assert sorted(proposal.source_ids) == sorted(
        Entity.objects.filter(name__in=names).values_list("pk", flat=True)
    )
    assert proposal.proposed["name"] == "digest-parser-test-fixes"
    assert proposal.proposed["observations"] == DIGEST["observations"]
    assert proposal.proposed["tags"] == ["project:alpha"]
    assert proposal.proposed["origin"] == {
        "by": "agent",
        "host": "claude-code",
        "packageId": package["package_id"],
    }
    assert Entity.objects.count() == before  # nothing reaches the graph before a person accepts
    # The same submission again finds the same proposal.
    assert (
        call(submission(package, DIGEST), CallContext(source_host="claude-code"))["proposal"][
            "created"
        ]
        is False
    )
    assert Proposal.objects.count() == 1


def test_a_digest_of_memories_that_changed_since_prepare_is_refused_as_stale() -> None:
    commits(5, project="alpha")
    package = call({"action": "prepare", "kind": "digest"})["package"]
    remember("commit-alpha-0", "commit 0: and a second fix", type="commit")

    error = refused(submission(package, DIGEST))

    assert error.error_code == "work_package.stale"
    assert not Proposal.objects.exists()


def test_a_submission_with_another_workspace_hash_is_refused() -> None:
    commits(5, project="alpha")
    package = call({"action": "prepare", "kind": "digest"})["package"]

    error = refused(submission({**package, "workspace_hash": "0" * 64}, DIGEST))

    assert error.error_code == "work_package.workspace-mismatch"
    assert not Proposal.objects.exists()


@pytest.mark.parametrize(
    "result",
    [
        {**DIGEST, "confidence": 1.0},  # an unknown key
        {**DIGEST, "observations": []},
        {**DIGEST, "observations": ["  "]},
        {**DIGEST, "observations": ["fact"] * (prompts.MAX_DIGEST_OBSERVATIONS + 1)},
        {**DIGEST, "observations": ["x" * 1001]},
        {**DIGEST, "observations": "one string"},
        {**DIGEST, "name": 7},
        {"observations": ["no name"]},
    ],
)
def test_a_result_outside_the_schema_is_refused_whole(result: dict[str, Any]) -> None:
    commits(5, project="alpha")
    package = call({"action": "prepare", "kind": "digest"})["package"]

    error = refused(submission(package, result))

    assert error.error_code == "validation.bad-body"
    assert error.field is not None and error.field.startswith("result")
    assert not Proposal.objects.exists()


def test_a_result_holding_a_secret_is_refused() -> None:
    commits(5, project="alpha")
    package = call({"action": "prepare", "kind": "digest"})["package"]

    error = refused(submission(package, {**DIGEST, "observations": [f"key {PASTED_KEY}"]}))

    assert error.error_code == "work_package.secret-in-result"
    assert not Proposal.objects.exists()


@pytest.mark.parametrize("action", ["apply", "accept", "reject", "APPLY"])
def test_no_action_applies_accepts_or_rejects(action: str) -> None:
    error = refused({"action": action})

    assert (error.error_code, error.http_status) == ("review.human-only", 403)


def test_an_unknown_action_or_a_field_another_action_takes_is_bad_input() -> None:
    assert refused({"action": "condense"}).error_code == "validation.bad-body"
    assert refused({"action": "prepare"}).field == "kind"
    assert refused({"action": "prepare", "kind": "digest", "result": {}}).field == "result"
    assert refused({"action": "submit", "package_id": "digest:2026-W01:"}).field == "result"
    assert refused({"action": "defer", "package_id": "nothing:here"}).field == "package_id"


def test_a_rejected_digest_is_not_prepared_again_while_its_memories_are_unchanged() -> None:
    commits(5, project="alpha")
    package = call({"action": "prepare", "kind": "digest"})["package"]
    proposal_id = call(submission(package, DIGEST))["proposal"]["id"]
    proposal_reject(proposal_id, reason="too vague", channel="cli")

    assert call({"action": "prepare", "kind": "digest"})["available"] is False


# --- transcript packages ---------------------------------------------------------------------


def claude() -> Path:
    return Path(settings.CLAUDE_CONFIG_DIR)


def test_a_transcript_package_is_the_newest_session_under_the_one_root(
    transcript_project: Path,
) -> None:
    install(claude(), transcript_project, "decisions", "secret")

    out = call(
        {"action": "prepare", "kind": "transcript", "workspace_root": str(transcript_project)}
    )

    package = out["package"]
    # secret.jsonl's last turn is later than decisions.jsonl's: it is the newest session.
    assert package["package_id"] == f"transcript:{SESSION_IDS['secret']}:0-3"
    assert package["items"] == 3
    assert fence.PROMPT_TRANSCRIPT_PREAMBLE in package["material"]
    assert "set the embedder key separately" in package["material"]
    assert PASTED_KEY not in json.dumps(out)
    assert package["result_schema"]["required"] == ["type", "name", "observations"]


def test_a_transcript_package_is_the_newest_session_whichever_host_wrote_it(
    transcript_project: Path,
) -> None:
    install(claude(), transcript_project, "decisions")
    install_codex(Path(settings.CODEX_HOME), transcript_project / "src")
    here = CallContext(source_host="agent", workspace_roots=(str(transcript_project),))

    codex = call({"action": "prepare", "kind": "transcript"}, here)["package"]

    # Codex's session ended after Claude Code's; its conversation, without what Codex injected.
    assert codex["package_id"] == f"transcript:{CODEX_SESSION_ID}:0-2"
    assert "Why does the login test fail?" in codex["material"]
    assert "INJECTED-AGENTS-MD" not in codex["material"]

    install_gemini(Path(settings.GEMINI_DIR), transcript_project)
    gemini = call({"action": "prepare", "kind": "transcript"}, here)["package"]

    assert gemini["package_id"] == f"transcript:{GEMINI_SESSION_ID}:0-3"
    assert "The login test failed because the token audience" in gemini["material"]
    assert "hook_context" not in gemini["material"]
    out = call(submission(gemini, LESSON), here)
    proposed = Proposal.objects.get(pk=out["proposal"]["id"]).proposed
    assert proposed["source"]["transcript"] == "gemini"
    assert f"session:{GEMINI_SESSION_ID}" in proposed["tags"]


def test_a_transcript_package_keeps_to_its_bounds(transcript_project: Path) -> None:
    folder = install(claude(), transcript_project, "decisions")
    session = folder / f"{SESSION_IDS['decisions']}.jsonl"
    append_turns(
        session,
        SESSION_IDS["decisions"],
        transcript_project,
        *(f"turn {n} " + "w" * 900 for n in range(60)),
    )

    package = call(
        {
            "action": "prepare",
            "kind": "transcript",
            "workspace_root": f"file://{transcript_project}",
        }
    )["package"]

    assert package["items"] <= MAX_TRANSCRIPT_TURNS
    fenced = package["material"].split("```text\n", 1)[1]
    assert len(fenced) <= MAX_TRANSCRIPT_CHARS + 10
    assert "turn 59 " in fenced and "turn 0 " not in fenced


def test_a_transcript_package_holds_at_most_its_turn_count(transcript_project: Path) -> None:
    folder = install(claude(), transcript_project, "decisions")
    session = folder / f"{SESSION_IDS['decisions']}.jsonl"
    short = (f"short turn {n}" for n in range(MAX_TRANSCRIPT_TURNS + 20))
    append_turns(session, SESSION_IDS["decisions"], transcript_project, *short)

    package = call(
        {"action": "prepare", "kind": "transcript", "workspace_root": str(transcript_project)}
    )["package"]

    assert package["items"] == MAX_TRANSCRIPT_TURNS
    assert f"short turn {MAX_TRANSCRIPT_TURNS + 19}" in package["material"]


def test_zero_or_several_matching_roots_are_refused(
    transcript_project: Path, tmp_path: Path
) -> None:
    assert refused({"action": "prepare", "kind": "transcript"}).error_code == (
        "work_package.no-workspace-root"
    )
    empty = tmp_path / "elsewhere"
    empty.mkdir()
    no_sessions = {"action": "prepare", "kind": "transcript", "workspace_root": str(empty)}
    assert refused(no_sessions).error_code == "work_package.no-workspace-root"
    other = (tmp_path / "other").resolve()
    other.mkdir()
    install(claude(), transcript_project, "decisions")
    install(claude(), other, "secret")
    roots = CallContext(source_host="agent", workspace_roots=(str(transcript_project), str(other)))

    error = refused({"action": "prepare", "kind": "transcript"}, roots)

    assert error.error_code == "work_package.ambiguous-workspace-root"
    one = CallContext(source_host="agent", workspace_roots=(str(other), str(empty)))
    assert call({"action": "prepare", "kind": "transcript"}, one)["package"][
        "package_id"
    ].startswith(f"transcript:{SESSION_IDS['secret']}:")


def test_over_mcp_the_clients_roots_are_the_scope_not_an_argument(transcript_project: Path) -> None:
    install(claude(), transcript_project, "decisions")
    mcp = CallContext(
        source_host="agent", guide_rules=True, workspace_roots=(str(transcript_project),)
    )

    error = refused({"action": "prepare", "kind": "transcript", "workspace_root": "/"}, mcp)

    assert (error.error_code, error.field) == ("validation.bad-body", "workspace_root")


def test_a_submitted_transcript_memory_is_pending_with_its_masked_turns(
    transcript_project: Path,
) -> None:
    folder = install(claude(), transcript_project, "secret")
    ctx = CallContext(
        source_host="agent", guide_rules=True, workspace_roots=(str(transcript_project),)
    )
    package = call({"action": "prepare", "kind": "transcript"}, ctx)["package"]
    # The session goes on while the agent works: the package is its turns as prepared.
    append_turns(
        folder / f"{SESSION_IDS['secret']}.jsonl",
        SESSION_IDS["secret"],
        transcript_project,
        "and more",
    )

    out = call(submission(package, LESSON), ctx)

    proposal = Proposal.objects.get(pk=out["proposal"]["id"])
    assert (proposal.kind, proposal.status) == (ProposalKind.MEMORY, ProposalStatus.PENDING)
    assert proposal.source_ids == []
    proposed = proposal.proposed
    assert (proposed["type"], proposed["name"]) == ("lesson_learned", "embedder-key-separate")
    assert (
        "source:transcript" in proposed["tags"]
        and f"session:{SESSION_IDS['secret']}" in proposed["tags"]
    )
    assert proposed["source"]["turns"] == [0, 3]
    assert [t["role"] for t in proposed["source"]["excerpt"]] == ["user", "assistant", "user"]
    assert PASTED_KEY not in json.dumps(proposed)
    assert proposed["origin"]["by"] == "agent"
    assert not Entity.objects.exists()


def test_a_transcript_package_from_another_root_or_rewritten_is_refused(
    transcript_project: Path, tmp_path: Path
) -> None:
    folder = install(claude(), transcript_project, "secret")
    here = CallContext(source_host="agent", workspace_roots=(str(transcript_project),))
    package = call({"action": "prepare", "kind": "transcript"}, here)["package"]
    other = (tmp_path / "other").resolve()
    other.mkdir()
    install(claude(), other, "decisions")
    there = CallContext(source_host="agent", workspace_roots=(str(other),))

    assert (
        refused(submission(package, LESSON), there).error_code == "work_package.workspace-mismatch"
    )
    session = folder / f"{SESSION_IDS['secret']}.jsonl"
    session.write_text(session.read_text().replace("Right, that fixed it", "Right, it works"))
    assert refused(submission(package, LESSON), here).error_code == "work_package.stale"
    assert not Proposal.objects.exists()


# --- nothing durable -------------------------------------------------------------------------


def test_prepare_and_defer_leave_the_database_byte_for_byte_unchanged(
    transcript_project: Path,
) -> None:
    commits(6, project="alpha")
    install(claude(), transcript_project, "decisions", "secret")
    root = {"workspace_root": str(transcript_project)}
    dump, files = database_dump(), home_files()

    digest = call({"action": "prepare", "kind": "digest"})["package"]
    transcript = call({"action": "prepare", "kind": "transcript", **root})["package"]
    for package in (digest, transcript):
        assert call({"action": "defer", "package_id": package["package_id"]}) == {
            "action": "defer",
            "available": None,
            "reason": None,
            "package": None,
            "proposal": None,
            "deferred": True,
        }
    call({"action": "defer"})

    assert database_dump() == dump
    assert home_files() == files
