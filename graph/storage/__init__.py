"""Raw SQL only: the keyword (FTS5) and vector (vec0) indexes, document reads, cursors.

No Celery, no services, no workflow: callers above decide when these run.
"""
