"""Unit tests: pure Python, no database (pytest-django refuses database access to a test
without the django_db mark). Tokenizer, scoring, schema export, project parsing, the embedder
and LLM wire formats against fake loopback servers."""
