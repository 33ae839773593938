"""The keyword (FTS5) index: raw SQL only.

Two FTS5 tables share one shape (head: name and title; body: observations and tags), keyed by
entity id: `graph_entity_fts` holds active entities, `graph_entity_fts_archived` archived ones.
Keeping archived rows out of the live table means ordinary recall can never surface them, and the
fts5vocab table over the live index gives the per-term document counts that the
document-frequency guard needs, counted over active rows only, in one index lookup per term.

Every column holds `graph.search.text.index_text(...)` output: memesh tokenizes in Python and
FTS5's `ascii` tokenizer only splits on the spaces between those tokens. The tables store that
text (they are not contentless): only then does deleting a row also take it out of the bm25
statistics, which keeps the index equal to a rebuild (migration 0002 says more).

tables.py names the tables and the row shape, writes.py keeps them equal to the entity tables,
retrieval.py is recall's reads, consistency.py the checker's. Each manager half is part of
Entity.objects (graph/storage/entities.py).
"""
