"""End-to-end tests: memesh in real OS processes (serve on loopback, MCP over stdio and HTTP,
the Celery worker, Chromium, several writers on one database file), each on a MEMESH_HOME of
its own; tests/processes.py starts, waits for and stops them."""
