"""The project scope of reads (graph/ops/kit/scope.py): a read bound to a project sees that
project's memories, memories with no project and global ones, never another project's;
`cross_project` lifts it; every scoped read says which in `scope`."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from django.db import connection

from graph.indexing import embedding_pass
from graph.models import Entity
from graph.ops.kit.operation import CallContext
from graph.ops.kit.scope import ReadScope, read_scope
from graph.ops.registry import OPERATIONS
from graph.storage import entity_filters
from tests.helpers import names, remember
from tests.vector_support import use_embedder

pytestmark = pytest.mark.django_db

ALPHA = "acme/alpha"
BETA = "acme/beta"
IN_ALPHA = CallContext(source_host="test", project=ALPHA)
IN_BETA = CallContext(source_host="test", project=BETA)
REST = CallContext(source_host="http", project=ALPHA, binds_reads=False)  # plain HTTP
EVERY = ["alpha-note", "beta-note", "global-beta-note", "loose-note"]


def recall(ctx: CallContext, query: str | None = "deploy", **fields: Any) -> dict[str, Any]:
    payload: dict[str, Any] = dict(fields)
    if query is not None:
        payload["query"] = query
    return OPERATIONS["recall"].run(payload, ctx)


def scope(result: dict[str, Any]) -> dict[str, Any]:
    return result["scope"]


@pytest.fixture
def two_projects() -> None:
    remember("alpha-note", "deploy alpha with the blue button", tags=[f"project:{ALPHA}"])
    remember("beta-note", "deploy beta with the red button", tags=[f"project:{BETA}"])
    remember(
        "global-beta-note",
        "deploy anything on a friday only with a rollback plan",
        tags=[f"project:{BETA}"],
        namespace="global",
    )
    remember("loose-note", "deploy notes I keep for every repository")


# --- which memories a bound read sees ---------------------------------------------------------


@pytest.mark.usefixtures("two_projects")
@pytest.mark.parametrize("query", ["deploy", None], ids=["search", "listing"])
def test_a_bound_recall_sees_its_project_no_project_and_global_memories_only(
    query: str | None,
) -> None:
    assert sorted(names(recall(IN_ALPHA, query))) == [
        "alpha-note",
        "global-beta-note",
        "loose-note",
    ]
    assert sorted(names(recall(IN_BETA, query))) == ["beta-note", "global-beta-note", "loose-note"]


@pytest.mark.usefixtures("two_projects")
def test_the_scope_says_which_memories_were_searched() -> None:
    assert scope(recall(IN_ALPHA)) == {
        "project": ALPHA,
        "all_projects": False,
        "no_project": True,
        "global": True,
    }
    # Nothing searchable still says where it would have looked.
    assert scope(recall(IN_ALPHA, "???"))["project"] == ALPHA


@pytest.mark.usefixtures("two_projects")
def test_cross_project_sees_every_project() -> None:
    result = recall(IN_ALPHA, cross_project=True)
    assert sorted(names(result)) == EVERY
    assert scope(result) == {
        "project": ALPHA,
        "all_projects": True,
        "no_project": True,
        "global": True,
    }


@pytest.mark.usefixtures("two_projects")
def test_a_rest_call_naming_no_project_searches_every_project() -> None:
    result = recall(REST)
    assert sorted(names(result)) == EVERY
    assert scope(result)["project"] is None
    assert scope(result)["all_projects"] is True


@pytest.mark.usefixtures("two_projects")
def test_the_project_field_binds_any_transport() -> None:
    for ctx in (REST, IN_ALPHA):
        result = recall(ctx, project=BETA)
        assert sorted(names(result)) == ["beta-note", "global-beta-note", "loose-note"]
        assert scope(result)["project"] == BETA
    # `project:<id>` names the same project.
    assert scope(recall(REST, project=f"project:{BETA}"))["project"] == BETA


@pytest.mark.usefixtures("two_projects")
def test_a_project_tag_filter_binds_the_read_to_that_project_only() -> None:
    result = recall(REST, tag=f"project:{BETA}")
    assert sorted(names(result)) == ["beta-note", "global-beta-note"]
    assert scope(result) == {
        "project": BETA,
        "all_projects": False,
        "no_project": False,
        "global": False,
    }
    # From another project's session too: the call asked for that project by name.
    assert sorted(names(recall(IN_ALPHA, tag=f"project:{BETA}"))) == [
        "beta-note",
        "global-beta-note",
    ]


@pytest.mark.usefixtures("two_projects")
def test_cross_project_lifts_a_project_tag_and_the_namespace_but_not_another_tag() -> None:
    remember("tagged", "deploy with care", tags=["topic:ops", f"project:{BETA}"])
    assert sorted(names(recall(IN_ALPHA, tag=f"project:{BETA}", cross_project=True))) == sorted(
        [*EVERY, "tagged"]
    )
    assert names(recall(IN_ALPHA, tag="topic:ops", cross_project=True)) == ["tagged"]
    assert names(recall(IN_ALPHA, tag="topic:ops")) == []  # beta's, out of alpha's scope
    assert sorted(names(recall(IN_ALPHA, namespace="global", cross_project=True))) == sorted(
        [*EVERY, "tagged"]
    )


@pytest.mark.usefixtures("two_projects")
def test_namespace_and_tag_filter_within_the_scope() -> None:
    assert names(recall(IN_ALPHA, namespace="global")) == ["global-beta-note"]
    assert sorted(names(recall(IN_BETA, namespace="personal"))) == ["beta-note", "loose-note"]


def test_a_memory_filed_under_two_projects_is_in_both_scopes() -> None:
    remember("shared", "deploy shared library", tags=[f"project:{ALPHA}", f"project:{BETA}"])
    assert names(recall(IN_ALPHA)) == ["shared"]
    assert names(recall(IN_BETA)) == ["shared"]
    assert names(recall(CallContext("test", project="acme/gamma"))) == []


def test_a_tag_that_only_looks_like_a_project_tag_is_no_project() -> None:
    remember("cased", "deploy cased", tags=["Project:acme/beta"])
    remember("prefix", "deploy prefix", tags=["projects:beta"])
    assert sorted(names(recall(IN_ALPHA))) == ["cased", "prefix"]


def test_archived_memories_of_another_project_stay_out_of_scope() -> None:
    remember("old-beta", "deploy legacy beta", tags=[f"project:{BETA}"])
    OPERATIONS["forget"].run({"name": "old-beta"}, IN_BETA)
    assert names(recall(IN_ALPHA, include_archived=True)) == []
    assert names(recall(IN_BETA, include_archived=True)) == ["old-beta"]


# --- the vector side searches the scope's vectors ---------------------------------------------


@pytest.mark.clean_indexes
def test_hybrid_recall_finds_only_in_scope_neighbours(monkeypatch: pytest.MonkeyPatch) -> None:
    use_embedder(monkeypatch, "deterministic")
    for n in range(30):
        remember(f"beta-{n}", f"kubernetes rollout {n}", tags=[f"project:{BETA}"])
    remember("alpha-k8s", "kubernetes rollout alpha", tags=[f"project:{ALPHA}"])
    assert embedding_pass.embed_pending().error is None

    result = recall(IN_ALPHA, "kubernetes rollout")

    assert result["retrieval"]["mode"] == "hybrid"
    assert names(result) == ["alpha-k8s"]
    assert len(names(recall(IN_ALPHA, "kubernetes rollout", cross_project=True))) == 20


# --- the scope rules and the scoped-id cache ---------------------------------------------------


def test_read_scope_rules() -> None:
    bound = CallContext("test", project=ALPHA)
    assert read_scope(project=None, tag=None, cross_project=False, ctx=bound) == ReadScope(
        ALPHA, all_projects=False
    )
    assert read_scope(project=BETA, tag=None, cross_project=False, ctx=bound).project == BETA
    tagged = read_scope(project=None, tag=f"project:{BETA}", cross_project=False, ctx=bound)
    assert (tagged.project, tagged.only_project, tagged.storage_project) == (BETA, True, None)
    # The field decides when both are given; the tag then filters within its scope.
    both = read_scope(project=ALPHA, tag=f"project:{BETA}", cross_project=False, ctx=bound)
    assert (both.project, both.only_project) == (ALPHA, False)
    assert read_scope(project=None, tag=None, cross_project=False, ctx=REST).all_projects
    assert read_scope(project=None, tag="topic:x", cross_project=True, ctx=bound).all_projects


@pytest.mark.django_db(transaction=True)
def test_scoped_ids_are_listed_again_after_any_write() -> None:
    """Outside a transaction a thread keeps a scope's ids until something is committed."""
    assert not connection.in_atomic_block
    remember("a", "one", tags=[f"project:{ALPHA}"])
    first = Entity.objects.scoped_ids(project=ALPHA)
    assert entity_filters._scoped_ids_kept().ids == {
        entity_filters.EntityFilters(project=ALPHA): tuple(first)
    }
    assert first == Entity.objects.scoped_ids(project=ALPHA)
    remember("loose", "no project")
    assert sorted(Entity.objects.scoped_ids(project=ALPHA)) == sorted(
        [*first, Entity.objects.get(name="loose").pk]
    )

    # A write by another connection (another thread here) is seen too.
    def other_writer() -> None:
        remember("b", "two", tags=[f"project:{ALPHA}"])
        connection.close()

    thread = threading.Thread(target=other_writer)
    thread.start()
    thread.join()
    assert Entity.objects.get(name="b").pk in Entity.objects.scoped_ids(project=ALPHA)


# --- briefing, export, user_patterns and the memory tool follow the same scope -----------------

MCP_ALPHA = CallContext(source_host="mcp", project=ALPHA, guide_rules=True)
MCP_BETA = CallContext(source_host="mcp", project=BETA, guide_rules=True)


@pytest.mark.usefixtures("two_projects")
def test_the_briefing_reports_its_levels_scope() -> None:
    minimal = OPERATIONS["briefing"].run({}, IN_ALPHA)
    assert minimal["scope"] == {
        "project": ALPHA,
        "all_projects": False,
        "no_project": True,
        "global": False,
    }
    assert "alpha" in minimal["text"] and "beta" not in minimal["text"].lower()
    full = OPERATIONS["briefing"].run({"level": "full"}, IN_ALPHA)
    assert full["scope"]["all_projects"] is True and full["scope"]["global"] is True


@pytest.mark.usefixtures("two_projects")
def test_export_follows_the_scope() -> None:
    def exported(ctx: CallContext, **payload: Any) -> tuple[list[str], dict[str, Any]]:
        bundle = OPERATIONS["export"].run(payload, ctx)
        assert bundle["entity_count"] == len(bundle["entities"])
        return sorted(e["name"] for e in bundle["entities"]), bundle["scope"]

    names_, scope_ = exported(IN_ALPHA)
    assert names_ == ["alpha-note", "global-beta-note", "loose-note"]
    assert (scope_["project"], scope_["all_projects"]) == (ALPHA, False)
    assert exported(IN_ALPHA, cross_project=True)[0] == EVERY
    assert exported(REST)[0] == EVERY
    assert exported(REST, project=BETA)[0] == ["beta-note", "global-beta-note", "loose-note"]
    assert exported(IN_ALPHA, tag=f"project:{BETA}")[0] == ["beta-note", "global-beta-note"]
    # cross_project lifts the project scope only: the namespace still filters an export.
    assert exported(IN_ALPHA, namespace="global", cross_project=True)[0] == ["global-beta-note"]


def test_user_patterns_follow_the_scope() -> None:
    remember("a1", "x", type="decision", tags=[f"project:{ALPHA}"])
    remember("b1", "x", type="lesson_learned", tags=[f"project:{BETA}", "topic:sqlite"])
    remember("b2", "x", type="lesson_learned", tags=[f"project:{BETA}", "topic:sqlite"])
    patterns = OPERATIONS["user_patterns"]

    alpha = patterns.run({}, IN_ALPHA)
    assert alpha["focusAreas"] == [{"type": "decision", "count": 1}]
    assert alpha["learningAreas"] == []
    assert alpha["scope"]["project"] == ALPHA
    beta = patterns.run({"categories": ["learningAreas"]}, IN_BETA)
    assert beta["learningAreas"] == [{"tag": "sqlite", "count": 2}]
    every = patterns.run({"cross_project": True, "categories": ["focusAreas"]}, IN_ALPHA)
    assert {f["type"] for f in every["focusAreas"]} == {"decision", "lesson_learned"}


@pytest.mark.usefixtures("two_projects")
def test_the_memory_tool_bound_to_a_project_sees_its_scope_only() -> None:
    from api.memory_tool import handle_memory_command

    def run(project: str | None, **command: Any) -> Any:
        return handle_memory_command(command, project=project)

    root = run(ALPHA, command="view", path="/memories").content
    assert "- personal/ (2 memories)" in root and "- global/ (1 memory)" in root
    assert f"project {ALPHA}" in root
    unbound = run(None, command="view", path="/memories").content
    assert "- personal/ (3 memories)" in unbound and "project" not in unbound
    assert "beta-note" not in run(ALPHA, command="view", path="/memories/personal").content
    refused = run(ALPHA, command="view", path="/memories/personal/beta-note.md")
    assert refused.is_error and "does not exist" in refused.content
    edit = run(ALPHA, command="str_replace", path="/memories/personal/beta-note.md", old_str="red")
    assert edit.is_error
    create = run(ALPHA, command="create", path="/memories/personal/beta-note.md", file_text="x")
    assert create.is_error and "another project" in create.content
    assert not run(
        ALPHA, command="create", path="/memories/personal/new.md", file_text="y"
    ).is_error
    assert Entity.objects.get(name="new").tags.get().name == f"project:{ALPHA}"


# --- names do not cross projects (MCP) --------------------------------------------------------


def mcp_remember(ctx: CallContext, **payload: Any) -> dict[str, Any]:
    return OPERATIONS["remember"].run({"type": "note", **payload}, ctx)


def refused_remember(ctx: CallContext, **payload: Any) -> Any:
    from graph.errors import NameInOtherProject

    with pytest.raises(NameInOtherProject) as caught:
        mcp_remember(ctx, **payload)
    return caught.value


def test_a_name_held_by_another_project_is_refused_over_mcp() -> None:
    mcp_remember(MCP_BETA, name="deploy-steps", observations=["beta deploys with helm"])
    before = list(Entity.objects.get(name="deploy-steps").observations.values_list("text"))

    error = refused_remember(MCP_ALPHA, name="deploy-steps", observations=["alpha uses ansible"])

    assert error.error_code == "resource.name-in-other-project"
    assert error.http_status == 409
    assert error.field == "name"
    assert BETA in error.message
    after = list(Entity.objects.get(name="deploy-steps").observations.values_list("text"))
    assert after == before  # nothing appended
    # A replace, or filing the call under no project, is refused alike.
    refused_remember(MCP_ALPHA, name="deploy-steps", observations=["x"], replace=True)
    refused_remember(MCP_ALPHA, name="deploy-steps", observations=["x"], project=False)
    # The project's own sessions still append.
    assert mcp_remember(MCP_BETA, name="deploy-steps", observations=["more"])["observations"] == 1


def test_names_of_no_project_memories_and_explicitly_named_projects_are_shared() -> None:
    mcp_remember(MCP_BETA, name="prefs", observations=["tabs"], project=False)
    assert mcp_remember(MCP_ALPHA, name="prefs", observations=["spaces"])["observations"] == 1
    mcp_remember(MCP_BETA, name="beta-runbook", observations=["one"])
    # Naming the other project by hand is filing into it on purpose: the guide's hand tagging.
    assert (
        mcp_remember(MCP_ALPHA, name="beta-runbook", observations=["two"], project=BETA)[
            "observations"
        ]
        == 1
    )


def test_plain_rest_and_the_cli_keep_the_reference_upsert() -> None:
    mcp_remember(MCP_BETA, name="shared-name", observations=["beta"])
    for ctx in (REST, IN_ALPHA):
        assert mcp_remember(ctx, name="shared-name", observations=[ctx.source_host])["stored"]


def test_the_sessions_project_by_its_plain_name_is_stored_as_its_id() -> None:
    result = mcp_remember(
        MCP_ALPHA, name="tagged", observations=["x"], tags=["project:alpha", "topic:ci"]
    )
    assert result["retagged"] == [{"from": "project:alpha", "to": f"project:{ALPHA}"}]
    tags = set(Entity.objects.get(name="tagged").tags.values_list("name", flat=True))
    assert tags == {f"project:{ALPHA}", "topic:ci"}
    by_field = mcp_remember(MCP_ALPHA, name="filed", observations=["y"], project="alpha")
    assert by_field["project"] == ALPHA
    assert by_field["retagged"] == [{"from": "project:alpha", "to": f"project:{ALPHA}"}]
    # Another project's plain name stays a scope of its own; nothing is reported.
    other = mcp_remember(MCP_ALPHA, name="other", observations=["z"], tags=["project:beta"])
    assert "retagged" not in other
    assert Entity.objects.get(name="other").tags.get().name == "project:beta"
    # Plain REST stores what it is given.
    assert "retagged" not in mcp_remember(REST, name="rest", observations=["r"], project="alpha")


def test_a_lesson_whose_name_another_project_holds_gets_its_own_name() -> None:
    learn = OPERATIONS["learn"]
    # Two ids that slug alike: acme/shop and acme-shop give the same lesson name.
    first = learn.run({"error": "disk full", "fix": "pruned logs", "project": "acme/shop"}, REST)
    in_other = CallContext(source_host="mcp", project="acme-shop", guide_rules=True)
    second = learn.run({"error": "disk full", "fix": "rotated logs"}, in_other)
    assert second["name"] != first["name"] and second["name"].startswith(first["name"])
    assert Entity.objects.get(name=first["name"]).observations.count() == 2  # untouched
    again = learn.run({"error": "disk full", "fix": "rotated logs again"}, in_other)
    assert again["name"] == second["name"]  # the same lesson next time
    named = learn.run({"error": "oom", "fix": "smaller batch", "project": "alpha"}, MCP_ALPHA)
    assert named["retagged"] == [{"from": "project:alpha", "to": f"project:{ALPHA}"}]


@pytest.mark.usefixtures("two_projects")
def test_memory_list_follows_the_scope() -> None:
    def listed(ctx: CallContext, **payload: Any) -> tuple[list[str], dict[str, Any]]:
        page = OPERATIONS["memory_list"].run(payload, ctx)
        assert page["total"] == len(page["memories"])
        return sorted(m["name"] for m in page["memories"]), page["scope"]

    names_, scope_ = listed(IN_ALPHA)
    assert names_ == ["alpha-note", "global-beta-note", "loose-note"]
    assert scope_ == {"project": ALPHA, "all_projects": False, "no_project": True, "global": True}
    assert listed(IN_BETA)[0] == ["beta-note", "global-beta-note", "loose-note"]
    assert listed(IN_ALPHA, cross_project=True)[0] == EVERY
    assert listed(IN_ALPHA, cross_project=True)[1]["all_projects"] is True
    assert listed(REST)[0] == EVERY
    assert listed(REST, project=BETA)[0] == ["beta-note", "global-beta-note", "loose-note"]
    # A project tag filter binds the listing to that project only, as it does recall.
    tagged = listed(IN_ALPHA, tag=f"project:{BETA}")
    assert tagged[0] == ["beta-note", "global-beta-note"]
    assert (tagged[1]["no_project"], tagged[1]["global"]) == (False, False)
    assert listed(IN_ALPHA, namespace="global", cross_project=True)[0] == ["global-beta-note"]


@pytest.mark.usefixtures("two_projects")
def test_memory_list_and_recall_without_a_query_keep_the_same_memories() -> None:
    for ctx, fields in [
        (IN_ALPHA, {}),
        (IN_BETA, {"namespace": "global"}),
        (IN_ALPHA, {"tag": f"project:{BETA}"}),
        (REST, {"project": ALPHA}),
        (IN_ALPHA, {"cross_project": True}),
    ]:
        page = OPERATIONS["memory_list"].run({**fields, "limit": 50}, ctx)
        recent = recall(ctx, None, limit=50, **fields)
        assert sorted(m["name"] for m in page["memories"]) == sorted(names(recent)), fields
        assert page["scope"] == recent["scope"], fields


@pytest.mark.usefixtures("two_projects")
@pytest.mark.parametrize(
    ("operation", "payload"),
    [
        ("observe", {"source": "the runbook"}),
        ("supersede", {"observations": ["deploy beta with the green button"]}),
    ],
)
def test_a_session_changes_the_trust_of_its_scopes_memories_only(
    operation: str, payload: dict[str, Any]
) -> None:
    from graph.errors import NameInOtherProject

    beta = Entity.objects.get(name="beta-note")
    before = (beta.status, beta.trust, beta.confidence, beta.last_observed_at)
    for ref in ({"name": "beta-note"}, {"id": beta.pk}):
        with pytest.raises(NameInOtherProject) as caught:
            OPERATIONS[operation].run({**ref, **payload}, MCP_ALPHA)
        assert caught.value.field == next(iter(ref))
        assert BETA in caught.value.message and operation in caught.value.message
    beta.refresh_from_db()
    assert (beta.status, beta.trust, beta.confidence, beta.last_observed_at) == before
    assert Entity.objects.count() == len(EVERY)  # supersede created nothing
    # Memories of no project and global ones are every session's; the project's own
    # sessions, REST and the CLI's reference paths reach the project's memory.
    for name, ctx in [
        ("loose-note", MCP_ALPHA),
        ("global-beta-note", MCP_ALPHA),
        ("beta-note", MCP_BETA),
    ]:
        OPERATIONS[operation].run({"name": name, **payload}, ctx)
    if operation == "observe":
        assert OPERATIONS[operation].run({"name": "beta-note", **payload}, REST)["name"]
