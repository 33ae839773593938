"""Service tests: services, selectors and the storage they use, against the real SQLite with
FTS5 and vec0 built from migrations (in memory; a file of its own where a test needs one).
Data is created through the operations (tests/helpers.py), so the indexes stay consistent."""
