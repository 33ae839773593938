"""The project scope of reads (graph/ops/scope.py): a read bound to a project sees that
project's memories, memories with no project and global ones, never another project's;
`cross_project` lifts it; every scoped read says which in `scope`."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from django.db import connection

from graph.indexing import vectors
from graph.models import Entity
from graph.ops.operation import CallContext
from graph.ops.registry import OPERATIONS
from graph.ops.scope import ReadScope, read_scope
from graph.storage import keyword_index
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
    assert vectors.embed_pending().error is None

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
    assert keyword_index._scoped_ids_kept().ids == {
        keyword_index.EntityFilters(project=ALPHA): first
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
