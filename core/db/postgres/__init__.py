"""Django's PostgreSQL backend for a team server (MEMESH_DATABASE_URL), with errors a person
can act on and the pgvector requirement (docs/team-server-design.md)."""
