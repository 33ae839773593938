"""A basic-memory project folder written by the real basic-memory (PyPI, run offline in its own
process by tests/basic_memory_notes.py) is read as one memory per note: titles, types, tags,
observations in order, relations resolved to the notes they name, the project basic-memory
calls the folder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from graph.ops.foreign.readers import basic_memory
from graph.ops.foreign.records import ForeignMemory, ForeignRelation
from tests.basic_memory_notes import write_notes

AUTH = """# Auth Design

We sign sessions with short-lived tokens.

## Observations
- [decision] Use JWT access tokens with a 15 minute expiry #auth #jwt (after the March review)
- [risk] Refresh tokens must be rotated on every use
- [tech] Tokens are signed with RS256 #crypto

## Relations
- implements [[Security Policy]]
- depends_on [[Key Store]]
- see [[Login Flow]] for the screens
"""


@pytest.mark.slow
def test_a_folder_written_by_basic_memory_reads_as_one_memory_per_note(
    tmp_path: Path, settings: Any
) -> None:
    written = write_notes(
        tmp_path,
        [
            {
                "title": "Auth Design",
                "directory": "decisions",
                "content": AUTH,
                "tags": ["security", "auth"],
                "note_type": "decision",
            },
            {
                "title": "Key Store",
                "directory": "infra",
                "content": "- [fact] Signing keys live in Vault #vault\n",
            },
            {
                "title": "Login Flow",
                "directory": "ui",
                "content": "The login screens call [[Auth Design]] for a token.\n",
            },
        ],
    )
    assert [w["action"] for w in written] == ["created", "created", "created"]
    settings.BASIC_MEMORY_CONFIG_DIR = tmp_path / "config"

    records = list(basic_memory.read(tmp_path / "notes", project=None))

    assert all(isinstance(r, ForeignMemory) for r in records), records
    memories = {r.name: r for r in records if isinstance(r, ForeignMemory)}
    assert sorted(memories) == ["Auth Design", "Key Store", "Login Flow"]
    auth = memories["Auth Design"]
    assert auth.type == "decision"
    assert auth.project == "main"  # the default project basic-memory made for the folder
    assert auth.observations == [
        "We sign sessions with short-lived tokens.",
        "Use JWT access tokens with a 15 minute expiry #auth #jwt (after the March review)",
        "Refresh tokens must be rotated on every use",
        "Tokens are signed with RS256 #crypto",
        "- see [[Login Flow]] for the screens",
    ]
    assert set(auth.tags) >= {"security", "auth", "jwt", "crypto", "category:decision"}
    assert auth.relations == [
        ForeignRelation(to="Key Store", type="depends_on"),
        ForeignRelation(to="Login Flow", type="links_to"),
    ]
    assert auth.extra["unresolved_relations"] == ["implements [[Security Policy]]"]
    assert auth.extra["permalink"] == written[0]["permalink"]
    assert memories["Key Store"].observations == ["Signing keys live in Vault #vault"]
    assert memories["Key Store"].tags == ["category:fact", "vault"]
    assert memories["Login Flow"].relations == [ForeignRelation(to="Auth Design", type="links_to")]
