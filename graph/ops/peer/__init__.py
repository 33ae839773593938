"""The peer-shaped compatibility surface: the trusted-memory service's `memory_*` tools and
`/api/v1/memories…` routes, mapped onto memesh's own operations (docs/api.md, "Peer
compatibility"). Off unless switched on (switch.py).

- schema.py: the peer's argument models and its memory row, built from memesh's documents;
- tools.py: one Operation per peer tool, each calling the memesh service it maps onto.
"""
