"""Whatever Unicode a memory holds, the keyword index written for it holds exactly the Python
tokens (graph/search/text.py), and each of its words finds it — on either database: FTS5 on
SQLite, the posting tables on PostgreSQL (graph/storage/postgres/keyword_postings.py). The
FTS5-only properties (its tokenizer, its query syntax) are tests/services/test_fuzz_text.py's.
"""

from __future__ import annotations

import pytest
from django.db import connection, transaction
from django.utils import timezone
from hypothesis import example, given

from graph.models import Entity, Observation
from graph.search import text
from graph.storage.postgres.keyword_postings import posting_term
from tests.helpers import remember
from tests.services.test_fuzz_text import FUZZ_DB, any_text, control_text, fts_syntax

# PostgreSQL's text refuses NUL, and a C string ends there: no memory carries one.
documents = (any_text | fts_syntax | control_text).map(lambda s: s.replace("\x00", ""))


def _stored(token: str) -> str:
    """A token as the index stores it (PostgreSQL keys a very long one by its digest)."""
    return posting_term(token) if connection.vendor == "postgresql" else token


def _indexed_terms(entity_id: int) -> set[str]:
    """The terms the index holds for this entity, as stored."""
    with connection.cursor() as cur:
        if connection.vendor == "postgresql":
            cur.execute("SELECT term FROM graph_keyword_posting WHERE entity_id = %s", [entity_id])
            return {row[0] for row in cur.fetchall()}
        cur.execute("SELECT head, body FROM graph_entity_fts WHERE rowid = %s", [entity_id])
        head, body = cur.fetchone()
        return set(f"{head} {body}".split())


@pytest.mark.django_db
@FUZZ_DB
@given(documents)
@example("資料庫 migration's NEAR(x) naïve")
@example("ก\u0e31\u0e31 ๑")
@example("\U0001d400" * 300 + " x")
def test_the_index_holds_the_python_tokens_and_each_word_finds_the_memory(document: str) -> None:
    if not text.tokens(document):
        return  # nothing to index or find
    with transaction.atomic():
        entity_id = remember("fuzz-subject", document)["entityId"]
        # What remember stored (it normalises an observation's whitespace).
        [stored] = Observation.objects.filter(entity_id=entity_id).values_list("text", flat=True)
        tokens = {_stored(t) for t in [*text.tokens("fuzz-subject"), *text.tokens(stored)]}

        assert _indexed_terms(entity_id) == tokens
        for term in text.query_terms(stored)[:20]:
            assert Entity.objects.term_stats([term])[0] == {term: 1}, term
            hits = Entity.objects.fts_candidates(
                text.match_expression([term]), limit=5, now=timezone.now()
            )
            assert [h.entity_id for h in hits] == [entity_id], term
        transaction.set_rollback(True)
