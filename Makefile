# Shortcuts for the two Quick start commands (scripts/dev.py does the work).
.PHONY: run test lint bench

run:
	python3 scripts/dev.py run

test:
	python3 scripts/dev.py test

# The same checks as .pre-commit-config.yaml and tests/unit/test_code_quality.py.
lint:
	python3 scripts/dev.py setup
	.venv/bin/ruff check .
	.venv/bin/ruff format --check .
	.venv/bin/mypy
	.venv/bin/lint-imports

bench:
	python3 scripts/dev.py setup
	.venv/bin/python -m bench.recall_bench
