"""The `memesh` commands that run and keep an installation: serving, the worker, host setup,
the doctor and status, configuration, reindexing and repairs."""
