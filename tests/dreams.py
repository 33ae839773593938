"""Helpers for the dream and review tests: commit memories to dream over, proposals staged
directly, reviewer accounts, and a fake LLM server made the configured `llm` provider."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission, User

from core.config_sections import config_update
from core.config_store import config_path
from graph.models import Entity
from proposals.models import Proposal
from proposals.staging import proposal_stage
from tests.fakes.llm_servers import FakeLLMServer
from tests.helpers import remember

PASSWORD = "correct horse battery staple"  # every make_user account's

# What the `llm` fixture's server answers by default: one digest of alpha's commits.
DIGEST = json.dumps(
    {
        "name": "alpha-parser-week",
        "title": "Parser hardening",
        "observations": ["The parser's flaky tests were fixed", "Error messages name the line"],
    }
)

# An observation as coding sessions write them: a backtick run inside a JSON string.
CODE_RUN = "Run ```make test``` before pushing; a ``` line closes the block"


def bare_json(value: object) -> str:
    """`value` as the prompt asks for it: JSON only."""
    return json.dumps(value)


def fenced_json(value: object) -> str:
    """`value` as models often reply: prose, then a ```json fence around indented JSON."""
    return f"Here is the JSON:\n```json\n{json.dumps(value, indent=2)}\n```\nHope it helps."


@contextmanager
def llm_provider(server: FakeLLMServer, model: str | None = None) -> Iterator[FakeLLMServer]:
    """`server` as the `llm` provider in config.json; the file as it was afterwards."""
    path = config_path()
    saved = path.read_text() if path.exists() else None
    config_update({"llm": server.llm_config(model=model)})
    try:
        yield server
    finally:
        if saved is None:
            path.unlink(missing_ok=True)
        else:
            path.write_text(saved)


def commits(n: int, project: str = "alpha", start: int = 0, **fields: object) -> list[str]:
    """`n` commit memories of `project`, each a fixed flaky parser test; their names."""
    names = []
    for i in range(start, start + n):
        name = f"commit-{project}-{i}"
        remember(
            name,
            f"commit {i}: fixed a flaky parser test",
            type="commit",
            tags=[f"project:{project}"],
            **fields,
        )
        names.append(name)
    return names


def stage_digest(project: str, count: int, *, name: str | None = None) -> Proposal:
    """`count` commit memories of `project` and a pending digest proposal over them."""
    ids = []
    for i in range(count):
        entity = f"{project}: commit {i}"
        remember(entity, f"{project} commit {i}: fixed flaky test {i}", type="commit")
        entity_id = Entity.objects.id_for_name(entity)
        assert entity_id is not None
        ids.append(entity_id)
    proposal, created = proposal_stage(
        kind="digest",
        project=project,
        cluster_key="2026-W48",
        source_ids=ids,
        proposed={
            "name": name or f"{project} week digest",
            "type": "digest",
            "observations": [f"{project}: {count} flaky tests were fixed this week"],
            "tags": ["digest"],
        },
        llm_model="fake-model",
        prompt_version="digest-v1",
    )
    assert created
    return proposal


def stage_relation(project: str) -> Proposal:
    remember(f"{project}: old decision", "use REST polling", type="decision")
    remember(f"{project}: new decision", "use server-sent events", type="decision")
    ids = [Entity.objects.id_for_name(f"{project}: {n} decision") for n in ("old", "new")]
    proposal, _ = proposal_stage(
        kind="relation",
        project=project,
        cluster_key="pair",
        source_ids=[i for i in ids if i is not None],
        proposed={
            "from": f"{project}: new decision",
            "to": f"{project}: old decision",
            "relation": "supersedes",
            "verdict": "SUPERSEDES",
            "rationale": "the new decision replaces polling",
        },
    )
    return proposal


def source_statuses(proposal: Proposal) -> set[str]:
    return set(Entity.objects.filter(pk__in=proposal.source_ids).values_list("status", flat=True))


def make_user(username: str, *, review: bool) -> User:
    user = get_user_model().objects.create_user(username, password=PASSWORD, is_staff=True)
    codenames = ["view_proposal", "view_proposalreview"] + (["review_proposal"] if review else [])
    user.user_permissions.add(*Permission.objects.filter(codename__in=codenames))
    return user
