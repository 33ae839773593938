"""SQLite database backend with sqlite-vec loaded on every connection (DESIGN §4)."""
