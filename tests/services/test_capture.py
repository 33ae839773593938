"""The capture services the hooks write through (graph/capture/capture.py and its callers), against
the real database: what each stores, what it refuses to store (secrets), and what stays
bounded. The dream auto-trigger's rules are tests/services/test_dream_due.py's."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from django.test import override_settings

from core import config_store
from graph.capture.capture import auto_capture_enabled, entity_capture
from graph.capture.commit_capture import CommitDropped, CommitFacts, commit_capture
from graph.capture.file_context import file_context
from graph.capture.handoff import HISTORY, handoff_name, handoff_replace
from graph.capture.lesson_guards import command_guards
from graph.capture.note_files import MISSING_TAG, NOTE_FILE_TAG, note_files_ingest
from graph.models import Entity, Tag
from graph.ops.why import WhyInput, why
from tests.helpers import observations_of, remember, stored

pytestmark = pytest.mark.django_db

REPLY = (
    "The audience check now reads AUTH_AUDIENCE from settings and the login test passes; "
    "the refresh-token path still reads the old constant and is the next thing to change, "
    "after which the release notes need a line."
)


def tags_of(name: str) -> set[str]:
    return set(Tag.objects.filter(entity__name=name).values_list("name", flat=True))


@pytest.fixture
def config() -> Iterator[None]:
    """config.json as it was before the test, afterwards."""
    path = config_store.config_path()
    saved = path.read_text() if path.exists() else None
    yield
    if saved is None:
        path.unlink(missing_ok=True)
    else:
        path.write_text(saved)


def test_auto_capture_follows_the_environment_then_the_setting(config: None) -> None:
    assert auto_capture_enabled()
    config_store.update(lambda c: c.update(autoCapture=False))
    assert not auto_capture_enabled()
    with override_settings(MEMESH_AUTO_CAPTURE=True):
        assert auto_capture_enabled()
    config_store.update(lambda c: c.update(autoCapture=True))
    with override_settings(MEMESH_AUTO_CAPTURE=False):
        assert not auto_capture_enabled()


def test_a_capture_rewritten_each_turn_keeps_a_bounded_history() -> None:
    for i in range(HISTORY + 3):
        entity_capture(
            name="h", type="handoff", observations=[f"state {i}"], replace=True, keep_history=2
        )
    entity = stored("h")
    assert observations_of("h") == [f"state {HISTORY + 2}"]
    assert [v["observations"] for v in entity.metadata["replaced_history"]] == [
        [f"state {HISTORY}"],
        [f"state {HISTORY + 1}"],
    ]


def test_a_commit_is_stored_as_why_reads_it_and_a_secret_drops_it() -> None:
    facts = CommitFacts(
        hash="1a2b3c4d" * 5,
        subject="Read the audience from settings",
        body="It was a constant.",
        branch="main",
        files=["src/auth.py", "tests/test_auth.py"],
        insertions=3,
        deletions=1,
    )
    commit_capture(facts=facts, project="acme/widget", session_id="sess-1")
    commit_capture(facts=facts, project="acme/widget", session_id="sess-2")  # the same commit
    entity = stored("commit-1a2b3c4")
    assert entity.metadata["hash"] == facts.hash and entity.metadata["session_id"] == "sess-1"
    assert {"project:acme/widget", "file:auth.py", "file:test_auth.py"} <= tags_of(entity.name)
    assert "Diff stats: 2 files changed, 3 insertions(+), 1 deletion(-)" in observations_of(
        entity.name
    )
    found = why(data=WhyInput(file="src/auth.py", commits=[facts.hash[:7]]))
    assert found.commits[0].session is not None
    assert found.commits[0].session.session_id == "sess-1"

    leaked = CommitFacts(hash="9" * 40, subject="Set token ghp_" + "a1B2" * 9)
    assert commit_capture(facts=leaked, project="p", session_id=None) == CommitDropped(
        "github-token"
    )
    assert not Entity.objects.filter(name="commit-9999999").exists()


def test_a_commit_is_a_fact_sourced_by_its_hash_and_other_captures_are_hypotheses() -> None:
    facts = CommitFacts(hash="2b" * 20, subject="Pin the SDK")
    commit_capture(facts=facts, project="p", session_id=None)
    commit = stored("commit-2b2b2b2")
    assert (commit.trust, commit.source, commit.confidence) == ("fact", f"git:{facts.hash}", 1.0)

    entity_capture(name="handoff-x", type="handoff", observations=["state"])
    handoff = stored("handoff-x")
    assert (handoff.trust, handoff.source, handoff.confidence) == ("hypothesis", None, 0.5)


def test_a_commit_stored_unsourced_is_captured_again_without_raising_its_trust() -> None:
    facts = CommitFacts(hash="3c" * 20, subject="Drop the cache")
    # As a commit captured before the trust model was (migration 0005: unsourced, a hypothesis).
    entity_capture(
        name="commit-3c3c3c3",
        type="commit",
        observations=["Drop the cache"],
        metadata={"hash": facts.hash},
    )
    commit_capture(facts=facts, project="p", session_id=None)  # not trust.observe-required
    commit = stored("commit-3c3c3c3")
    assert (commit.trust, commit.source) == ("hypothesis", None)  # observe is the path up
    assert "Diff stats: 0 files changed, 0 insertions(+), 0 deletions(-)" in observations_of(
        commit.name
    )


def test_another_commit_with_the_same_short_hash_gets_a_longer_name() -> None:
    first = CommitFacts(hash="abcdef1" + "0" * 33, subject="one")
    second = CommitFacts(hash="abcdef1" + "1" * 33, subject="two")
    commit_capture(facts=first, project="p", session_id=None)
    commit_capture(facts=second, project="p", session_id=None)
    assert stored("commit-abcdef1").metadata["hash"] == first.hash
    assert stored(f"commit-{second.hash[:12]}").metadata["hash"] == second.hash


def test_the_handoff_is_replaced_by_a_long_enough_reply_and_kept_otherwise() -> None:
    handoff_replace(project="acme/widget", replies=[REPLY], session_id="s1")
    name = handoff_name("acme/widget")
    assert observations_of(name) == [REPLY]
    assert stored(name).type == "handoff" and "project:acme/widget" in tags_of(name)
    short = handoff_replace(project="acme/widget", replies=["Done."], session_id="s2")
    assert short.captured is None and observations_of(name) == [REPLY]
    secret = REPLY + " The key is sk-ant-api03-AbCdEfGhIjKlMnOpQrStUv."
    refused = handoff_replace(project="acme/widget", replies=[secret], session_id="s3")
    assert refused.detector == "anthropic-key" and observations_of(name) == [REPLY]
    other = handoff_replace(project="acme/other", replies=[REPLY + " Other."], session_id="s4")
    assert other.captured is not None and other.captured.name != name


def test_note_files_become_memories_and_a_vanished_one_is_tagged_never_deleted(
    tmp_path: Path,
) -> None:
    notes = tmp_path / "memory"
    notes.mkdir()
    deploy = notes / "deploy.md"
    deploy.write_text(
        "---\nname: Deploy target\ndescription: fly.io from main\nmetadata:\n  type: project\n"
        "---\n\nThe app is acme-web.\n"
    )
    (notes / "MEMORY.md").write_text("- [Deploy target](deploy.md)\n")
    (notes / "leak.md").write_text("---\nname: Keys\n---\n\naws AKIAIOSFODNN7EXAMPLE\n")
    first = note_files_ingest(directory=notes, project="acme/widget")
    assert (first.created, first.dropped) == (["deploy.md"], [("leak.md", "aws-access-key")])
    (entity,) = Entity.objects.filter(tags__name=NOTE_FILE_TAG)
    assert entity.title == "Deploy target"
    assert observations_of(entity.name) == ["fly.io from main", "The app is acme-web."]
    assert {"note-type:project", "project:acme/widget"} <= tags_of(entity.name)
    assert note_files_ingest(directory=notes, project="acme/widget").changed is False

    moved = deploy.read_text()
    deploy.unlink()
    gone = note_files_ingest(directory=notes, project="acme/widget")
    assert gone.missing == ["deploy.md"]
    assert MISSING_TAG in tags_of(entity.name) and stored(entity.name).status == "active"
    deploy.write_text(moved)
    back = note_files_ingest(directory=notes, project="acme/widget")
    assert back.restored == ["deploy.md"] and MISSING_TAG not in tags_of(entity.name)


def test_file_context_shows_tagged_and_naming_memories_of_this_project_only() -> None:
    remember("auth-audience", "Read the audience from settings", type="decision",
             tags=["file:auth.py", "project:acme/widget"])  # fmt: skip
    remember("auth-naming", "auth.py holds the token checks", tags=["project:acme/widget"])
    remember("auth-word", "auth flows are hard", tags=["project:acme/widget"])
    remember("auth-elsewhere", "auth.py of another repo", tags=["project:other/repo"])
    remember("auth-imported", "auth.py imported", tags=["file:auth.py"])
    Entity.objects.filter(name="auth-imported").update(metadata={"import": {"from": "bundle"}})
    found = file_context(project="acme/widget", path="/w/src/auth.py", relative="src/auth.py")
    shown = {stored(n).pk for n in ("auth-audience", "auth-naming")}
    assert set(found.entity_ids) == shown
    assert "```memesh-memory" in found.text and "Memories about src/auth.py" in found.text


def test_an_accepted_lesson_guards_its_recorded_command() -> None:
    remember("lesson-push", "Error: `git push --force` on main lost a commit",
             "Fix: `git push --force-with-lease`", type="lesson_learned",
             tags=["project:acme/widget"])  # fmt: skip
    remember("lesson-imported", "Error: `git push --force` from a bundle", type="lesson_learned")
    Entity.objects.filter(name="lesson-imported").update(metadata={"untrusted": True})
    text, cited = command_guards(project="acme/widget", command="git push --force origin main")
    assert cited == [stored("lesson-push").pk]
    assert f"[mem:{cited[0]}]" in text and "git push --force-with-lease" in text
    assert command_guards(project="acme/widget", command="git push origin main") == ("", [])
    assert command_guards(project="other/repo", command="git push --force") == ("", [])
