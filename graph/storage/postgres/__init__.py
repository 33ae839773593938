"""The storage implementation on PostgreSQL + pgvector (graph/storage/backend.py chooses it)."""
