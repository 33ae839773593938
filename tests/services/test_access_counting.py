"""Recall counts accesses in batches (graph/ops/recall/access.py): never a write lock per recall."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from graph.models import Entity
from graph.ops.recall import access
from tests.helpers import recall, remember
from tests.processes import memesh_env, run_python

pytestmark = pytest.mark.django_db


def _counts() -> dict[str, int]:
    return dict(Entity.objects.values_list("name", "access_count"))


def test_a_recall_writes_nothing_until_the_batch_is_flushed() -> None:
    remember("a", "walrus notes")
    recall("walrus")
    assert _counts() == {"a": 0}
    assert access.flush_accesses() == 1
    assert _counts() == {"a": 1}
    assert access.flush_accesses() == 0


def test_repeated_recalls_add_up_in_one_write() -> None:
    remember("a", "walrus notes")
    remember("b", "walrus tusks")
    for _ in range(3):
        recall("walrus")
    recall("tusks")
    assert access.flush_accesses() == 2
    assert _counts() == {"a": 3, "b": 4}


def test_the_batch_is_written_by_the_first_recall_after_a_second(monkeypatch) -> None:
    monkeypatch.setattr(access, "FLUSH_AFTER_SECONDS", 0.0)
    remember("a", "walrus notes")
    recall("walrus")
    assert _counts() == {"a": 1}


def test_a_full_batch_is_written_at_once(monkeypatch) -> None:
    monkeypatch.setattr(access, "FLUSH_AT_PENDING", 2)
    remember("a", "walrus notes")
    remember("b", "walrus tusks")
    recall("walrus")
    assert _counts() == {"a": 1, "b": 1}


def test_the_last_access_time_never_moves_backwards() -> None:
    remember("a", "walrus notes")
    entity = Entity.objects.get(name="a")
    written = entity.updated_at
    later = timezone.now() + timedelta(hours=1)
    Entity.objects.filter(pk=entity.pk).update(last_accessed_at=later)
    access.note_accesses([entity.pk], timezone.now())
    access.flush_accesses()
    entity.refresh_from_db()
    assert entity.last_accessed_at == later
    assert entity.access_count == 1
    assert entity.updated_at == written  # a read is not a write


RECALL_AND_EXIT = """
import django
django.setup()
from graph.ops.kit.operation import CallContext
from graph.ops.registry import OPERATIONS
ctx = CallContext("test")
OPERATIONS["remember"].run({"name": "a", "type": "note", "observations": ["walrus"]}, ctx)
OPERATIONS["recall"].run({"query": "walrus"}, ctx)
OPERATIONS["recall"].run({"query": "walrus"}, ctx)
"""
READ_COUNT = """
import django
django.setup()
from graph.models import Entity
print(Entity.objects.get(name="a").access_count)
"""


def test_a_process_writes_its_pending_accesses_when_it_exits(tmp_path) -> None:
    env = memesh_env(tmp_path)
    assert run_python(["manage.py", "migrate", "--verbosity", "0"], env).returncode == 0
    recalled = run_python(["-c", RECALL_AND_EXIT], env)
    assert recalled.returncode == 0, recalled.stderr
    counted = run_python(["-c", READ_COUNT], env)
    assert counted.returncode == 0, counted.stderr
    assert counted.stdout.strip() == "2"
